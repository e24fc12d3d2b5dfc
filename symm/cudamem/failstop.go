package cudamem

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Fail-stop (barrier.cuh): a wait that times out poisons the workspace
// instead of going on as if it had passed. This file builds without the
// cuda tag: the timeout's compile option, the poison word and its error
// text are pure data that GPU-free tests check.

// Pad layout after the counters (PadSlots x MaxWorld u32):
const (
	// FlagOffset is the poison word's byte offset in a rank's pads: 0
	// while healthy, a Poison once any wait on the workspace timed out.
	FlagOffset = PadSlots * MaxWorld * 4
	// HostPtrOffset holds a u64: the device address of the rank's
	// host-mapped status word (0: none, as on a tuner's Team), where the
	// kernels mirror the poison so that the host reads it without a sync.
	HostPtrOffset = FlagOffset + 8
)

// Timeouts of the in-kernel waits (SYMM_TIMEOUT_NS).
const (
	// TunerTimeout is barrier.cuh's default: a hung trial ends soon.
	TunerTimeout = 10 * time.Second
	// RuntimeTimeout is libsymmtune's default: a serving engine's rank
	// may stall for minutes (NCCL's watchdog waits 10).
	RuntimeTimeout = 600 * time.Second
	// TimeoutEnv overrides RuntimeTimeout, in seconds.
	TimeoutEnv = "SYMMTUNE_TIMEOUT_S"
)

// TimeoutOptions are the NVRTC options that set the waits' bound of every
// kernel that includes barrier.cuh or hopper_comm.cuh; none for the
// macros' default (TunerTimeout), so the tuner's cubins keep their keys.
func TimeoutOptions(d time.Duration) []string {
	if d <= 0 || d == TunerTimeout {
		return nil
	}
	return []string{fmt.Sprintf("-DSYMM_TIMEOUT_NS=%dull", d.Nanoseconds())}
}

// RuntimeTimeoutFromEnv is the runtime's bound: $SYMMTUNE_TIMEOUT_S
// (positive seconds, fractions allowed), else RuntimeTimeout.
func RuntimeTimeoutFromEnv() (time.Duration, error) {
	s := os.Getenv(TimeoutEnv)
	if s == "" {
		return RuntimeTimeout, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	// At most a year: the nanoseconds must fit the macro's u64 with room.
	if err != nil || !(f > 0) || f > 365*24*3600 {
		return 0, fmt.Errorf("%s=%q: want a positive number of seconds", TimeoutEnv, s)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// Poison is the word a timed-out wait writes (barrier.cuh's SYMM_POISON):
// bit 31 set, the wait's kind in bits 24..27, the waiting rank in bits
// 8..15 and the rank it waited for in bits 0..7 (0xff: not known there).
type Poison uint32

// Kinds of wait (SYMM_KIND_*).
const (
	KindBarrier   = 1 // a block barrier (symm_block_barrier, symm_block_wait)
	KindLamport   = 2 // a Lamport all-reduce's wait for a peer's data
	KindFusedFlag = 3 // the fused GEMM's wait for a chunk's flag
	KindFusedGate = 4 // the fused GEMM's start gate (a peer's call never started)
	// KindFlag: a stream's wait for a flag a peer sets (kernels/gemm/gpu's
	// wait_flags, where cuStreamWaitValue32 had no bound).
	KindFlag = 5
)

// MakePoison is SYMM_POISON's Go twin (tests).
func MakePoison(kind, waiter, peer int) Poison {
	return Poison(1<<31 | uint32(kind&0xf)<<24 | uint32(waiter&0xff)<<8 | uint32(peer&0xff))
}

// Kind, Waiter and Peer decode the word; Waiter and Peer are -1 where the
// kernel did not know them.
func (p Poison) Kind() int { return int(p>>24) & 0xf }

func (p Poison) Waiter() int { return rankField(uint32(p) >> 8) }

func (p Poison) Peer() int { return rankField(uint32(p)) }

func rankField(v uint32) int {
	if v&0xff == 0xff {
		return -1
	}
	return int(v & 0xff)
}

// PoisonError is the one-line error of a call on a poisoned workspace:
// rank is the caller's (the waiter where the word does not say), op what
// was called, timeout the bound the kernels were built with.
func PoisonError(word uint32, rank int, op string, timeout time.Duration) error {
	p := Poison(word)
	waiter := p.Waiter()
	if waiter < 0 {
		waiter = rank
	}
	peer := "a peer"
	if q := p.Peer(); q >= 0 {
		peer = fmt.Sprintf("rank %d", q)
	}
	what := map[int]string{KindBarrier: "barrier wait", KindLamport: "Lamport wait",
		KindFusedFlag: "fused GEMM's chunk wait", KindFusedGate: "fused GEMM's start gate", KindFlag: "stream's flag wait"}[p.Kind()]
	if what == "" {
		what = "wait"
	}
	after := " after " + timeout.String()
	if p.Kind() == KindFusedFlag {
		after = "" // the copies' bound, not the peers'
	}
	return &PoisonedError{Word: p, msg: fmt.Sprintf("symmtune: group workspace poisoned: rank %d's %s for %s timed out%s (seen by rank %d's %s); every later call on this workspace fails; rebuild the group",
		waiter, what, peer, after, rank, op)}
}

// PoisonedError is a call refused on a poisoned workspace; its message is
// whole, for callers to pass on without a prefix.
type PoisonedError struct {
	Word Poison
	msg  string
}

func (e *PoisonedError) Error() string { return e.msg }

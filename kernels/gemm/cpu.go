package gemm

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/shm"
)

// Rank is the per-rank state both CPU plugins share: the team, the region
// layout, the worker pool and the epoch that makes flags reusable.
type Rank struct {
	Team *shm.Team
	M    int // global rows, which size the flag area
	Pool Pool

	epoch uint32
	// broken is set when a call fails part-way: ranks may then disagree
	// on the epoch or hold half-written flags, so this instance refuses
	// further calls instead of deadlocking or passing stale data.
	broken error
}

// Payload is rank r's payload (elems f32 values past the flags).
func (k *Rank) Payload(r, elems int) []float32 {
	b := k.Team.Data(r)[PayloadOffset(k.M):]
	if len(b) < elems*4 {
		panic(fmt.Sprintf("gemm: rank %d region holds %d bytes of payload, want %d", r, len(b), elems*4))
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), elems)
}

// Flag is the flag word, in rank r's region, of the block starting at
// global row row0.
func (k *Rank) Flag(r, row0 int) *uint32 { return shm.Uint32(k.Team.Data(r), FlagOffset(row0)) }

// Epoch is the current call's epoch (valid inside Call).
func (k *Rank) Epoch() uint32 { return k.epoch }

// Signal marks the block at row0 done on this rank for the current call.
func (k *Rank) Signal(row0 int) { shm.Store(k.Flag(k.Team.Rank(), row0), k.epoch) }

// Ready reports without blocking whether rank r has signalled the block at
// row0 in the current call.
func (k *Rank) Ready(r, row0 int) bool { return reached(loadFlag(k.Flag(r, row0)), k.epoch) }

// Wait blocks until rank r has signalled the block at row0 in the current
// call.
func (k *Rank) Wait(ctx context.Context, r, row0 int) error {
	e := k.epoch
	if err := shm.WaitUntil(ctx, k.Flag(r, row0), func(v uint32) bool { return reached(v, e) }); err != nil {
		return fmt.Errorf("rank %d: wait for rank %d's block at row %d (epoch %d): %w", k.Team.Rank(), r, row0, e, err)
	}
	return nil
}

func loadFlag(w *uint32) uint32 { return atomic.LoadUint32(w) }

// reached compares epochs modulo 2^32, so wrap-around is harmless.
func reached(v, e uint32) bool { return int32(v-e) >= 0 }

// Call runs one kernel call under a fresh epoch. Every call ends with a
// team barrier, so a fast rank's next call cannot overwrite its buffer (or
// reuse a flag) while a slow peer still reads it.
func (k *Rank) Call(ctx context.Context, run func() error) error {
	if k.broken != nil {
		return fmt.Errorf("instance unusable after an earlier failure: %w", k.broken)
	}
	k.epoch++
	err := run()
	if err == nil {
		err = k.Team.Barrier(ctx)
	}
	if err != nil {
		k.broken = err
	}
	return err
}

// Barrier is a team barrier that marks the instance broken when it fails.
func (k *Rank) Barrier(ctx context.Context) error {
	if err := k.Team.Barrier(ctx); err != nil {
		k.broken = err
		return fmt.Errorf("rank %d: barrier: %w", k.Team.Rank(), err)
	}
	return nil
}

// Bench runs warmup untimed calls and iters timed ones, each after a
// team barrier so every rank starts together, and returns the timed calls'
// durations in microseconds.
func (k *Rank) Bench(ctx context.Context, warmup, iters int, call func() error) ([]float64, error) {
	times := make([]float64, 0, iters)
	for i := 0; i < warmup+iters; i++ {
		if err := k.Barrier(ctx); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := call(); err != nil {
			return nil, err
		}
		if i >= warmup {
			times = append(times, float64(time.Since(start).Nanoseconds())/1e3)
		}
	}
	return times, nil
}

// ValidateCPU is the whole of Validate for the CPU builds of both plugins:
// the cpu backend, f32 data and the shared shape rules.
func ValidateCPU(c space.Config, p space.Problem, world int, backend string) error {
	if backend != "cpu" {
		return fmt.Errorf("this build runs the cpu backend, not %q", backend)
	}
	switch p.Dtype {
	case "f32":
	case "bf16":
		return fmt.Errorf("dtype bf16 is reserved for the cuda backend; the cpu backend computes in f32")
	default:
		return fmt.Errorf("dtype %q: the cpu backend supports f32", p.Dtype)
	}
	d, err := ParseDims(p.Shape)
	if err != nil {
		return err
	}
	cfg, err := ParseConfig(c)
	if err != nil {
		return err
	}
	return Validate(cfg, d, world)
}

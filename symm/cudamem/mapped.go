//go:build cuda

package cudamem

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/nvrtc"
)

// Mapped is one rank's view of symmetric memory that another runtime
// allocated and mapped (torch's symm_mem, for symmtune.torch): every rank's
// region as mapped here and the device pointer table [data..., pads...] of
// barrier.cuh, given as plain values. It owns only the barrier kernel it
// loads; the memory stays the other runtime's. Unlike Team it has no thread
// of its own: its methods run on the caller's thread, in the context
// current there (torch's), which must be device ordinal's.
//
// Fail-stop (barrier.cuh): every kernel it compiles bounds its waits by
// timeout, and the workspace's host word (hostWordOf) tells the host,
// without a sync, that a wait timed out: Poisoned.
type Mapped struct {
	rank, world      int
	data             []cu.DevicePtr
	table            cu.DevicePtr
	ccMajor, ccMinor int
	sms              int
	compiler         nvrtc.Compiler
	barrierMod       cu.Module
	barrierFn        cu.Function
	timeout          time.Duration
	pads             cu.DevicePtr // this rank's, from the table
	host             *HostWord
}

// NewMapped describes rank of world over data (every rank's region as
// mapped here) and table (device array of 2*world u64: data, then pads),
// on device ordinal, and loads the barrier kernel into the current context.
// Its kernels' waits give up after timeout (RuntimeTimeoutFromEnv's, for
// libsymmtune) and poison the workspace.
func NewMapped(rank, world int, data []cu.DevicePtr, table cu.DevicePtr, ordinal int, timeout time.Duration) (*Mapped, error) {
	switch {
	case world < 1 || world > MaxWorld:
		return nil, fmt.Errorf("world %d: want 1..%d", world, MaxWorld)
	case rank < 0 || rank >= world:
		return nil, fmt.Errorf("rank %d of world %d", rank, world)
	case len(data) != world:
		return nil, fmt.Errorf("%d regions for world %d", len(data), world)
	case table == 0:
		return nil, errors.New("no pointer table")
	}
	for q, d := range data {
		if d == 0 {
			return nil, fmt.Errorf("rank %d's region is NULL", q)
		}
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("wait timeout %s: want a positive one", timeout)
	}
	m := &Mapped{rank: rank, world: world, data: append([]cu.DevicePtr(nil), data...), table: table, timeout: timeout}
	attrs, err := cu.Device(ordinal).Attributes(cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor, cu.MultiprocessorCount)
	if err != nil {
		return nil, fmt.Errorf("device %d: %w", ordinal, err)
	}
	m.ccMajor, m.ccMinor, m.sms = attrs[0], attrs[1], attrs[2]
	m.compiler = nvrtc.Compiler{Arch: nvrtc.Arch(m.ccMajor, m.ccMinor), Options: TimeoutOptions(timeout)}
	// Into a local: cgo refuses a pointer into m, which holds Go pointers.
	var pads uint64
	if err := cu.MemcpyDtoH(unsafe.Pointer(&pads), table+cu.DevicePtr(8*(world+rank)), 8); err != nil {
		return nil, fmt.Errorf("read rank %d's pads from the pointer table: %w", rank, err)
	}
	m.pads = cu.DevicePtr(pads)
	if m.pads == 0 {
		return nil, fmt.Errorf("rank %d's pads are NULL in the pointer table", rank)
	}
	if m.host, err = hostWordOf(m.pads); err != nil {
		return nil, err
	}
	watchWord(uint64(m.pads), WatchedWord{Load: m.host.Load, Rank: rank, Timeout: timeout})
	if m.barrierMod, m.barrierFn, err = loadBarrier(m.compiler); err != nil {
		return nil, err
	}
	return m, nil
}

// Poisoned is nil while no wait on the workspace has timed out as far as
// this rank knows (its own waits, or a later wait that found a peer's
// poison), else the error that every call on it returns (PoisonError);
// op names the call. A plain load of host memory: call it per enqueue.
func (m *Mapped) Poisoned(op string) error {
	if w := m.host.Load(); w != 0 {
		return PoisonError(w, m.rank, op, m.timeout)
	}
	return nil
}

// PoisonWord is this rank's poison word (FlagOffset in its pads): kernels
// that cannot reach the peers' pads (the fused GEMM) put their poison
// there, and the next barrier wait spreads it (barrier.cuh).
func (m *Mapped) PoisonWord() cu.DevicePtr { return m.pads + FlagOffset }

// Timeout is the bound of the waits of the kernels built with Compiler.
func (m *Mapped) Timeout() time.Duration { return m.timeout }

// hostWords are the workspaces' host words, by the device address of the
// own pads. They are never freed: a kept graph's kernels may write the
// word its pads name long after every runner closed. One pinned word per
// distinct pad address the process ever opened a runner on.
var hostWords struct {
	sync.Mutex
	m map[cu.DevicePtr]*HostWord
}

// hostWordOf is the host word of the workspace whose own pads are at pads,
// its address written after the pads' flag (HostPtrOffset) for the kernels'
// poison path. Pads that do not name this word are new (zeroed, perhaps
// at a freed workspace's address): the word starts from their flag.
func hostWordOf(pads cu.DevicePtr) (*HostWord, error) {
	hostWords.Lock()
	defer hostWords.Unlock()
	var hdr [4]uint32 // flag, unused, host word's address (lo, hi)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&hdr[0]), pads+FlagOffset, 16); err != nil {
		return nil, fmt.Errorf("read the pads' poison word: %w", err)
	}
	w := hostWords.m[pads]
	if w == nil {
		var err error
		if w, err = NewHostWord(); err != nil {
			return nil, err
		}
		if hostWords.m == nil {
			hostWords.m = map[cu.DevicePtr]*HostWord{}
		}
		hostWords.m[pads] = w
	}
	if uint64(hdr[2])|uint64(hdr[3])<<32 != uint64(w.Dev) {
		w.Store(hdr[0])
		dev := uint64(w.Dev)
		if err := cu.MemcpyHtoD(pads+HostPtrOffset, unsafe.Pointer(&dev), 8); err != nil {
			return nil, fmt.Errorf("register the host word in the pads: %w", err)
		}
	}
	return w, nil
}

// Rank of this process.
func (m *Mapped) Rank() int { return m.rank }

// World is the number of ranks.
func (m *Mapped) World() int { return m.world }

// Data is rank q's region as mapped here.
func (m *Mapped) Data(q int) cu.DevicePtr { return m.data[q] }

// ComputeCapability of the GPU.
func (m *Mapped) ComputeCapability() (major, minor int) { return m.ccMajor, m.ccMinor }

// SMs is the GPU's multiprocessor count.
func (m *Mapped) SMs() int { return m.sms }

// Compiler is an NVRTC compiler for the GPU's architecture.
func (m *Mapped) Compiler() nvrtc.Compiler { return m.compiler }

// Barrier enqueues the cross-GPU barrier on stream (see Team.Barrier).
// One rank has nobody to meet: nothing is enqueued (a launch less in
// every plain call and graph of world 1).
func (m *Mapped) Barrier(stream cu.Stream) error {
	if m.world == 1 {
		return nil
	}
	return launchBarrier(m.barrierFn, m.table, m.rank, m.world, stream)
}

// Close unloads the barrier kernel.
func (m *Mapped) Close() error {
	if m.barrierMod == (cu.Module{}) {
		return nil
	}
	err := m.barrierMod.Unload()
	m.barrierMod, m.barrierFn = cu.Module{}, cu.Function{}
	return err
}

// PtrTable is the device array [data..., pads...] the kernels index.
func (m *Mapped) PtrTable() cu.DevicePtr { return m.table }

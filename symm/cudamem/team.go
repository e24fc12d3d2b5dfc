//go:build cuda

package cudamem

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/nvrtc"
)

// Team is one rank's connected view of the symmetric allocation.
type Team struct {
	rank, world, ordinal int
	th                   *thread
	ctx                  cu.CUContext
	dataBytes            int64
	base                 cu.DevicePtr
	opened               []cu.DevicePtr
	data, pads           []cu.DevicePtr
	table                cu.DevicePtr
	ccMajor, ccMinor     int
	sms                  int
	compiler             nvrtc.Compiler
	barrierMod           cu.Module
	barrierFn            cu.Function
}

// Rank implements symm.Team.
func (t *Team) Rank() int { return t.rank }

// World implements symm.Team.
func (t *Team) World() int { return t.world }

// Ordinal is the CUDA device ordinal this rank runs on.
func (t *Team) Ordinal() int { return t.ordinal }

// Context is the rank's (primary) CUDA context.
func (t *Team) Context() cu.CUContext { return t.ctx }

// Do runs f on the rank's CUDA thread, where the context is current. Every
// CUDA call on the team's memory must happen inside Do.
func (t *Team) Do(f func() error) error {
	if t.th == nil {
		return errors.New("cuda team is closed")
	}
	return t.th.do(f)
}

// DataBytes is the size of each rank's data region.
func (t *Team) DataBytes() int64 { return t.dataBytes }

// Data is rank q's data region as mapped here (q == Rank() is local).
func (t *Team) Data(q int) cu.DevicePtr { return t.data[q] }

// Pads is rank q's signal pads as mapped here.
func (t *Team) Pads(q int) cu.DevicePtr { return t.pads[q] }

// PtrTable is a device array of 2*World u64: every rank's data region,
// then every rank's pads, as barrier.cuh's symm_block_barrier expects.
func (t *Team) PtrTable() cu.DevicePtr { return t.table }

// ComputeCapability of the rank's GPU.
func (t *Team) ComputeCapability() (major, minor int) { return t.ccMajor, t.ccMinor }

// SMs is the rank's GPU's multiprocessor count.
func (t *Team) SMs() int { return t.sms }

// Compiler is an NVRTC compiler for this GPU's architecture.
func (t *Team) Compiler() nvrtc.Compiler { return t.compiler }

// Barrier enqueues the cross-GPU barrier on stream: it completes on every
// rank once all ranks' streams have reached it. Call inside Do.
func (t *Team) Barrier(stream cu.Stream) error {
	return launchBarrier(t.barrierFn, t.table, t.rank, t.world, stream)
}

// loadBarrier compiles and loads barrier.cuh's symm_barrier.
func loadBarrier(c nvrtc.Compiler) (cu.Module, cu.Function, error) {
	cubin, err := c.Compile(nvrtc.Source{Name: "symm_barrier.cu", Text: DeviceSource})
	if err != nil {
		return cu.Module{}, cu.Function{}, fmt.Errorf("barrier kernel: %w", err)
	}
	mod, err := cu.LoadData(string(cubin))
	if err != nil {
		return cu.Module{}, cu.Function{}, fmt.Errorf("load barrier kernel: %w", err)
	}
	fn, err := mod.Function("symm_barrier")
	if err != nil {
		mod.Unload()
		return cu.Module{}, cu.Function{}, fmt.Errorf("barrier kernel function: %w", err)
	}
	return mod, fn, nil
}

// launchBarrier enqueues symm_barrier (one block of 32 threads, the pads'
// last slot) on the pointer table [data..., pads...].
func launchBarrier(fn cu.Function, table cu.DevicePtr, rank, world int, stream cu.Stream) error {
	args := Args(uint64(table), uint64(rank), uint64(world))
	if err := fn.Launch(1, 1, 1, 32, 1, 1, 0, stream, args); err != nil {
		return fmt.Errorf("launch barrier: %w", err)
	}
	return nil
}

// CheckTimeout reports whether a wait on this rank gave up waiting for a
// peer, or learnt of a peer's that did (see SYMM_TIMEOUT_NS): the pads are
// poisoned then, and every later wait on them fails. Call inside Do after
// synchronizing.
func (t *Team) CheckTimeout() error {
	var flag uint32
	if err := cu.MemcpyDtoH(unsafe.Pointer(&flag), t.pads[t.rank]+FlagOffset, 4); err != nil {
		return fmt.Errorf("read barrier flag: %w", err)
	}
	if flag != 0 {
		p := Poison(flag)
		return fmt.Errorf("cross-GPU barrier timed out (rank %d waiting for rank %d, kind %d); the team must be rebuilt", p.Waiter(), p.Peer(), p.Kind())
	}
	return nil
}

// Args packs kernel arguments for cu's Launch, which copies 8 bytes per
// argument: every kernel parameter of symmtune's kernels is a u64 or pointer.
func Args(vals ...uint64) []unsafe.Pointer {
	out := make([]unsafe.Pointer, len(vals))
	for i := range vals {
		out[i] = unsafe.Pointer(&vals[i])
	}
	return out
}

// Close unmaps peers, frees the region and stops the CUDA thread.
func (t *Team) Close() error {
	if t.th == nil {
		return nil
	}
	err := t.th.do(func() error {
		var errs []error
		if err := cu.Synchronize(); err != nil {
			errs = append(errs, fmt.Errorf("synchronize: %w", err))
		}
		if t.barrierFn != (cu.Function{}) {
			if err := t.barrierMod.Unload(); err != nil {
				errs = append(errs, fmt.Errorf("unload barrier: %w", err))
			}
		}
		for _, p := range t.opened {
			errs = append(errs, ipcClose(p))
		}
		if t.table != 0 {
			errs = append(errs, cu.MemFree(t.table))
		}
		if t.base != 0 {
			errs = append(errs, cu.MemFree(t.base))
		}
		return errors.Join(errs...)
	})
	t.th.stop()
	t.th = nil
	return err
}

// Time is TimeAs with TimingFromEnv's timing.
func (t *Team) Time(stream cu.Stream, warmup, iters int, call func() error) ([]float64, error) {
	mode, err := TimingFromEnv()
	if err != nil {
		return nil, err
	}
	return t.TimeAs(mode, stream, warmup, iters, call)
}

// TimeAs runs call warmup times, then iters times with CUDA events around
// each, and returns each timed call's duration in microseconds. Where the
// team barrier goes is mode's: before every call (TimingBarrier: one
// rank's late start stays out of another's time, as the peers' method
// requires), or once, with the calls back to back as a program queues
// them (TimingStream); TimingLoaded puts a fixed load before the warm-up
// and before every call too (load.go). Call inside Do.
func (t *Team) TimeAs(mode Timing, stream cu.Stream, warmup, iters int, call func() error) ([]float64, error) {
	switch mode {
	case TimingBarrier, TimingStream, TimingLoaded:
	default:
		return nil, fmt.Errorf("trial timing %q: want %q, %q or %q", string(mode), TimingBarrier, TimingStream, TimingLoaded)
	}
	each := mode != TimingStream
	// before runs ahead of each call's barrier: the load, in a loaded
	// trial (after its warm-up run), else nothing.
	before := func() error { return nil }
	if mode == TimingLoaded {
		d, err := LoadWarmFromEnv()
		if err != nil {
			return nil, err
		}
		l, err := loadFor()
		if err != nil {
			return nil, err
		}
		if err := l.warm(stream, d); err != nil {
			return nil, err
		}
		before = func() error { return l.run(stream, 1) }
	}
	for i := 0; i < warmup; i++ {
		if err := before(); err != nil {
			return nil, err
		}
		if each || i == 0 {
			if err := t.Barrier(stream); err != nil {
				return nil, err
			}
		}
		if err := call(); err != nil {
			return nil, err
		}
	}
	evs := make([]cu.Event, 0, 2*iters)
	defer func() {
		for i := range evs {
			_ = cu.DestroyEvent(&evs[i])
		}
	}()
	for i := 0; i < 2*iters; i++ {
		e, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return nil, fmt.Errorf("create event: %w", err)
		}
		evs = append(evs, e)
	}
	for i := 0; i < iters; i++ {
		if err := before(); err != nil {
			return nil, err
		}
		if each || i == 0 {
			if err := t.Barrier(stream); err != nil {
				return nil, err
			}
		}
		if err := evs[2*i].Record(stream); err != nil {
			return nil, fmt.Errorf("record event: %w", err)
		}
		if err := call(); err != nil {
			return nil, err
		}
		if err := evs[2*i+1].Record(stream); err != nil {
			return nil, fmt.Errorf("record event: %w", err)
		}
	}
	if err := stream.Synchronize(); err != nil {
		return nil, fmt.Errorf("synchronize: %w", err)
	}
	if err := t.CheckTimeout(); err != nil {
		return nil, err
	}
	times := make([]float64, iters)
	for i := range times {
		start := evs[2*i]
		if !each && i > 0 {
			// From the previous call's end: a start event records only
			// once the host has enqueued it, which would leave a launch
			// gap out of the time.
			start = evs[2*i-1]
		}
		ms, err := start.Elapsed(evs[2*i+1])
		if err != nil {
			return nil, fmt.Errorf("event elapsed: %w", err)
		}
		times[i] = ms * 1000
	}
	return times, nil
}

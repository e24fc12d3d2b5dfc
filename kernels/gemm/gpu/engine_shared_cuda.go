//go:build cuda

package gpu

// What a shared engine (NewSharedEngine: symmtune.torch's runtime) adds to
// an engine: its memory pool and runners' memory from it, the thread that
// destroys closed runners' graphs, and its cuBLASLt rankings per row
// bucket (planFor).

import (
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
)

// poolKeepBytes is what a shared engine's pool keeps of freed blocks for
// the next runners (its release threshold): opening a runner at a new row
// count then maps no new memory, and the bound on what symmtune holds
// (issue 54: 512 MiB beyond the symmetric bytes) keeps room.
const poolKeepBytes = 32 << 20

// makePool makes the shared engine's pool on the current device.
func (e *Engine) makePool() error {
	d, err := cu.CurrentDevice()
	if err != nil {
		return fmt.Errorf("memory pool: %w", err)
	}
	if e.pool, err = cu.MemPoolCreate(int(d)); err != nil {
		return fmt.Errorf("memory pool: %w", err)
	}
	for _, a := range []struct {
		attr  int
		value uint64
	}{
		{cu.PoolReuseFollowEventDependencies, 0},
		{cu.PoolReuseAllowInternalDependencies, 0},
		{cu.PoolReleaseThreshold, poolKeepBytes},
	} {
		if err := e.pool.Set(a.attr, a.value); err != nil {
			return fmt.Errorf("memory pool: %w", err)
		}
	}
	return nil
}

// startLater starts the thread that destroys closed runners' graphs.
// cuGraphExecDestroy waited, on 1 x H200, for the GPU's queued work (a
// first call at a new row count that evicted a unit with a graph took 2.5
// ms behind two queued GEMMs, against 0.25 ms with none): so a runner
// closed on a caller's thread (an eviction at a first call) hands its
// graphs here and returns. The thread has the engine's context current
// and the relaxed capture mode: it runs whenever it likes, also while the
// program captures a graph in torch's global mode, where a destruction
// that waits for the GPU from a thread in the default mode invalidates
// that capture (seen on 1 x H100, 2026-12-06: bench/serving-check.sh's
// layers check after its serving check, 2 runs of 3).
func (e *Engine) startLater() error {
	ctx, err := cu.CurrentContext()
	if err != nil {
		return fmt.Errorf("graph destroyer: %w", err)
	}
	e.later = startLaterQueue(func() bool {
		if cu.SetCurrentContext(ctx) != nil {
			return false
		}
		// A driver without the call has no global capture mode either.
		_, _ = cu.ExchangeCaptureMode(cu.CaptureRelaxed)
		return true
	}, laterPoll, laterParkAfter)
	return nil
}

// destroyLater runs f, a closed runner's graph destruction, on the
// engine's destroyer thread; on an engine of a runner's own, now.
func (e *Engine) destroyLater(f func() error) error {
	if e.later == nil {
		return f()
	}
	return e.later.add(f)
}

// Later runs f on the engine's destroyer thread (now on an engine of a
// runner's own), and onErr with its error there: a shared-engine
// runner's Close, which is safe off the caller's thread (its memory goes
// back through free, which locks; its graphs and plans are its own).
func (e *Engine) Later(f func() error, onErr func(error)) {
	run := func() error {
		if err := f(); err != nil {
			onErr(err)
		}
		return nil
	}
	if e.later == nil {
		_ = run()
		return
	}
	_ = e.later.add(run)
}

// maxRanked bounds a shared engine's ranked plans (one per product
// shape and power-of-two row bucket, a few hundred bytes of host memory
// and four descriptors each).
const maxRanked = 1024

// planFor returns a plan of m whose algo-th algorithm runs it. An
// engine of a runner's own (the tuner's trials) ranks algorithms for m
// itself. A shared engine (symmtune.torch's runtime, where a first call
// at a new row count must cost about what a warm call does) ranks them
// once per power-of-two bucket of rows, at its top, and plans every row
// count of the bucket with that ranking: the algorithm a config's algo
// names is then the one ranked at the row count the config was chosen
// for (the bucket's top). Where that algorithm does not run m, m is
// ranked for itself, at its first launch (cublaslt.Handle.PlanFrom).
func (e *Engine) planFor(m cublaslt.Matmul, algo int) (*cublaslt.Plan, error) {
	if !e.shared || m.Batch > 1 {
		return e.rank(m)
	}
	// Strides mean nothing to one product: the ranking's key has none.
	m.StrideA, m.StrideD = 0, 0
	top := m
	top.M = 1 << bits.Len(uint(m.M-1))
	from := e.ranked[top]
	if from == nil {
		if len(e.ranked) >= maxRanked {
			return e.rank(m)
		}
		var err error
		if from, err = e.rank(top); err != nil {
			return nil, err
		}
		e.ranked[top] = from
	}
	if algo >= from.Algos() {
		return e.rank(m)
	}
	// The runner's own plan (it closes it), with the bucket's ranking:
	// where its algorithm does not run m, the launch ranks m's own
	// (cuBLASLt refuses it before enqueuing anything), counted here. No
	// cublasLtMatmulAlgoCheck at open: cublasLtMatmul checks on every
	// launch anyway.
	return e.lt.PlanFrom(m, from, func() { e.rankings++ })
}

// rank plans m with a heuristic query of its own, counted (Rankings).
func (e *Engine) rank(m cublaslt.Matmul) (*cublaslt.Plan, error) {
	e.rankings++
	return e.lt.Plan(m)
}

// Rankings is how many heuristic queries the engine has made: only a
// new one can name algorithms (cuBLASLt kernels, loaded at their first
// launch) that no call has run yet.
func (e *Engine) Rankings() int { return e.rankings }

// PoolBytes is the device memory a shared engine's pool holds (its
// runners' memory, and freed blocks kept for reuse); 0 for an engine of a
// runner's own.
func (e *Engine) PoolBytes() int64 {
	if !e.shared {
		return 0
	}
	n, err := e.pool.Bytes(cu.PoolReservedMemCurrent)
	if err != nil {
		return 0
	}
	return n
}

// alloc allocates n bytes for a runner, and with b, copies b there: from
// the stream-ordered pool for a shared engine (waiting only for its own
// private stream, so the memory is ready on every stream), else with
// cuMemAlloc.
func (e *Engine) alloc(n int64, b []byte) (cu.DevicePtr, error) {
	if !e.shared {
		d, err := cu.MemAlloc(n)
		if err == nil && b != nil {
			if err = cu.MemcpyHtoD(d, unsafe.Pointer(&b[0]), int64(len(b))); err != nil {
				err = errors.Join(err, cu.MemFree(d))
			}
		}
		return d, err
	}
	d, err := e.pool.AllocAsync(n, e.allocs)
	if err != nil {
		return 0, err
	}
	if b != nil {
		err = cu.MemcpyHtoDAsync(d, unsafe.Pointer(&b[0]), int64(len(b)), e.allocs)
	}
	if err == nil {
		err = e.allocs.Synchronize()
	}
	if err != nil {
		return 0, errors.Join(err, cu.MemFreeAsync(d, e.allocs))
	}
	return d, nil
}

// upload copies b into new runner memory.
func (e *Engine) upload(b []byte) (cu.DevicePtr, error) {
	d, err := e.alloc(int64(len(b)), b)
	if err != nil {
		return 0, fmt.Errorf("fused tables: %w", err)
	}
	return d, nil
}

// free frees runner memory d of n bytes (the runner counts them): on a shared engine once the work
// enqueued on *after so far is done, or once fence has completed (neither:
// at once, in the pool's order), nothing waiting; on an own engine at once
// (its runner synchronized first). after is a pointer because the legacy
// default stream, torch's default, has the zero handle: once it was taken
// for "no stream", and a unit last called there was freed without waiting
// for its queued work (frees is a non-blocking stream).
func (e *Engine) free(d cu.DevicePtr, _ int64, after *cu.Stream, fence *cu.Event) error {
	if d == 0 {
		return nil
	}
	if !e.shared {
		return cu.MemFree(d)
	}
	// freeEv is recorded then waited for: one free at a time (runners
	// close on the destroyer thread too, Later).
	e.freeMu.Lock()
	defer e.freeMu.Unlock()
	ev := fence
	if ev == nil && after != nil {
		if err := e.freeEv.Record(*after); err != nil {
			return fmt.Errorf("free after the last call: %w", err)
		}
		ev = &e.freeEv
	}
	if ev != nil {
		if err := e.frees.Wait(*ev, 0); err != nil {
			return fmt.Errorf("free after the last call: %w", err)
		}
	}
	return cu.MemFreeAsync(d, e.frees)
}

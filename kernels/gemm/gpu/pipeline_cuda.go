//go:build cuda

package gpu

import (
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/internal/calltime"
	"github.com/symmtune/symmtune/symm/cudamem"
)

func (r *Runner) smTarget(c Config) int {
	if c.SMReserve == 0 {
		return 0
	}
	return r.peers.SMs() - c.SMReserve
}

// plan returns the cuBLASLt plan of step s's product: rows rows, batched
// over s.Batch ranks' rows (M/W rows apart in A and D), B stored [N, K] as
// the fused GEMM and a torch.nn.Linear weight hold it (so symmtune.torch
// runs the tuned algorithm on such a B as it is).
func (r *Runner) plan(s Step, c Config) (*cublaslt.Plan, error) {
	key := planKey{s.Rows, s.Batch, r.smTarget(c), c.NoFastAccum}
	if p := r.plans[key]; p != nil {
		return p, nil
	}
	rows := int64(r.prob.Rows())
	m, err := r.prob.Dtype.lt(cublaslt.Matmul{M: s.Rows, N: r.prob.N, K: r.prob.K, BT: true,
		Batch: s.Batch, StrideA: rows * int64(r.prob.K), StrideD: rows * int64(r.prob.N),
		SMCountTarget: key.smTarget, Workspace: workspaceBytes}, c.NoFastAccum)
	if err != nil {
		return nil, err
	}
	p, err := r.eng.planFor(m, c.Algo)
	if err != nil {
		return nil, err
	}
	r.plans[key] = p
	return p, nil
}

// scaleRow is where the scales of row row of the rows at base start: row
// scales are one float per row; a tensor scale is the same for every row.
func (r *Runner) scaleRow(base cu.DevicePtr, row int) cu.DevicePtr {
	if r.prob.Dtype.RowScales() {
		return base + cu.DevicePtr(int64(row)*ScaleBytes)
	}
	return base
}

// product enqueues D[rows, N] = A[rows, K]·B on step's stream (batched
// when the step is), B the call's; FP8 products scale by scaleA (A's first
// row's scales: scaleRow) and the call's ScaleB.
func (r *Runner) product(c Config, s Step, a, scaleA, d cu.DevicePtr) error {
	p, err := r.plan(s, c)
	if err != nil {
		return err
	}
	calltime.Mark("product plan")
	end, err := r.trace.span(func() (string, string) {
		return fmt.Sprintf("product rows %d+%d of rank %d (batch %d)", s.Start, s.Rows, s.Owner, s.Batch), fmt.Sprintf("gemm%d", s.Stream)
	}, r.gemm[s.Stream])
	if err != nil {
		return err
	}
	if !r.prob.Dtype.FP8() {
		scaleA = 0 // unscaled: Ptrs' scales are unused
	}
	_, scaleB := r.scales()
	if err := p.RunScaled(r.gemm[s.Stream], c.Algo, a, r.ptr.B, d, r.ws[s.Stream], scaleA, scaleB); err != nil {
		return err
	}
	calltime.Mark("cuBLASLt matmul")
	return end()
}

// begin starts a call of c: announce enqueued on main (nil: nothing to
// announce), then every stream c uses forked from main.
func (r *Runner) begin(c Config, announce func() error) error {
	if announce != nil {
		if err := announce(); err != nil {
			return err
		}
	}
	calltime.Mark("plan, announce")
	if err := r.fork.Record(r.main); err != nil {
		return fmt.Errorf("record fork: %w", err)
	}
	calltime.Mark("fork record")
	for _, s := range r.streams(&c) {
		if err := s.Wait(r.fork, 0); err != nil {
			return fmt.Errorf("fork wait: %w", err)
		}
	}
	calltime.Mark("fork waits")
	return nil
}

// signal enqueues on s the setting of flag i in rank q's region (see
// layout.go), after everything s wrote before.
func (r *Runner) signal(s cu.Stream, q, i int) error {
	if err := cudamem.WriteFlag(s, r.flag(q, i), 1); err != nil {
		return fmt.Errorf("set flag %d of rank %d: %w", i, q, err)
	}
	return nil
}

// consume makes s wait for this rank's flags (indices), each set once by
// its source rank (FlagWaits), and clears them for the next call: each
// flag has one consumer. A peer's flags are waited for by wait_flags
// (gemm_util.cu), one warp per kind and chunk of flag, bounded as the
// barrier's waits are: a late or dead peer poisons the workspace after
// the bound, naming it, where cuStreamWaitValue32 hung s (and the call's
// joins and end barrier behind it) for ever. The own flag keeps the
// stream memory operations (see below). The cost, a warp spinning on an
// SM while the product it waits for runs, is measured at world 1 only
// (where no peer flag is waited for); at world 2 and more it is to be
// measured. Accepted because a wait without a bound breaks fail-stop: one
// dead peer would hang the GPU's stream, not raise.
func (r *Runner) consume(s cu.Stream, flags ...int) error {
	waits, err := FlagWaits(flags)
	if err != nil {
		return err
	}
	me := r.peers.Rank()
	for _, w := range waits {
		if own := w.Sources & (1 << me); own != 0 {
			// This rank's own flag (matmulrs's own partial) is set by
			// its own streams, which always set it (a product's signal;
			// the fused epilogue signals every tile, timed out or not):
			// a stream memory operation waits for it without an SM,
			// where wait_flags' warp spun beside the product. On 1 x
			// H200 that made world-1 matmulrs 3-4.5% slower at 8192 and
			// 16384 x 3584 x 8192 (2026-12-02, runtime_speed.py).
			f := r.flag(me, w.First+me*w.Stride)
			if err := cudamem.WaitFlag(s, f, 1); err != nil {
				return fmt.Errorf("wait for own flag %d: %w", w.First+me*w.Stride, err)
			}
			if err := cudamem.WriteFlag(s, f, 0); err != nil {
				return fmt.Errorf("clear own flag %d: %w", w.First+me*w.Stride, err)
			}
			if w.Sources &^= own; w.Sources == 0 {
				continue
			}
		}
		args := cudamem.Args(uint64(r.peers.PtrTable()), uint64(me), uint64(r.peers.World()),
			uint64(r.flag(me, w.First)), uint64(w.Stride*FlagStride), uint64(w.Sources), 1)
		if err := r.waitFn.Launch(1, 1, 1, 32, 1, 1, 0, s, args); err != nil {
			return fmt.Errorf("wait for flags %v: %w", flags, err)
		}
	}
	return nil
}

// ClearFlags enqueues on s the clearing of this rank's flags: on the
// plugin's stream before a trial, which starts from clear flags whatever
// an earlier, failed one left (the caller's barrier must follow before any
// peer may set one). A fused call clears them at its end, in its end
// barrier (endBarrier): every flag of the region has been set by then
// (the GEMM waited for each chunk's, and for every peer's start flag
// before its first wait for that peer's data; a pull's ReadyFlag is
// consumed before its chunk is flagged).
func (r *Runner) ClearFlags(s cu.Stream) error {
	if err := cu.MemsetD8Async(r.peers.Data(r.peers.Rank()), 0, PayloadOffset, s); err != nil {
		return fmt.Errorf("clear flags: %w", err)
	}
	return nil
}

// streams lists the streams besides main that c uses (all of them for
// nil): the pipeline's c.Streams product streams, the per-peer streams,
// and matmulrs's reduction stream. A fused call runs its GEMM on main and
// uses only the per-peer streams (copies), the first product stream for
// its start flags (a team of two or more: Runner.signalStart) and, for
// matmulrs reducing in a kernel, the reduction stream; at world 1 (the
// GEMM alone: FusedPlain) that is nothing. Forking and joining only those keeps
// the host's per-call work small: the fork of a world-1 fused call (an
// event record and its waits) took 28-40 µs of host time in a Python
// process on 1 x H200 (2026-12-02, internal/calltime), 4 µs in Go alone.
func (r *Runner) streams(c *Config) []cu.Stream {
	if c != nil && c.Impl == ImplFused {
		out := append([]cu.Stream{}, r.side...)
		if r.prob.World > 1 {
			out = append(out, r.gemm[0])
		}
		if r.v == VariantMatmulRS && c.Reduce != ReduceEpilogue && !FusedPlain(r.v, r.prob) {
			out = append(out, r.reduce)
		}
		return out
	}
	n := maxStreams
	if c != nil {
		n = c.Streams
	}
	out := append([]cu.Stream{}, r.gemm[:n]...)
	out = append(out, r.side...)
	if c == nil || r.v == VariantMatmulRS {
		out = append(out, r.reduce)
	}
	return out
}

// end joins every stream into main, runs then (nil: nothing) on main, and
// closes the call with the team barrier: no rank starts its next call (and
// overwrites what a peer still reads) before every rank has finished this
// one. A fused call with nothing to run between (see barrierFirst) puts
// its end barrier straight after the GEMM, as the GEMM's programmatic
// dependent, and joins the streams after it.
func (r *Runner) end(c Config, then func() error) error {
	first := then == nil && r.barrierFirst(c)
	if !first {
		if err := r.join(c); err != nil {
			return err
		}
		if then != nil {
			if err := then(); err != nil {
				return err
			}
		}
	}
	calltime.Mark("join, then")
	if c.Impl == ImplFused && !FusedEndBarrier(r.v, r.prob) {
		if !first {
			return nil
		}
		return r.join(c)
	}
	end, err := r.trace.span(func() (string, string) { return "end barrier", "main" }, r.main)
	if err != nil {
		return err
	}
	if c.Impl == ImplFused {
		err = r.endBarrier(first)
	} else {
		err = r.peers.Barrier(r.main)
	}
	if err == nil {
		err = end()
	}
	calltime.Mark("end barrier")
	if err != nil || !first {
		return err
	}
	return r.join(c)
}

// join makes main wait for every stream c uses.
func (r *Runner) join(c Config) error {
	for i, s := range r.streams(&c) {
		if err := r.joins[i].Record(s); err != nil {
			return fmt.Errorf("record join: %w", err)
		}
		if err := r.main.Wait(r.joins[i], 0); err != nil {
			return fmt.Errorf("join wait: %w", err)
		}
	}
	return nil
}

// barrierFirst: see BarrierFirst.
func (r *Runner) barrierFirst(c Config) bool { return BarrierFirst(r.v, c) }

// endBarrier enqueues on main the end of a fused call: this rank's flags
// cleared (every one the call used is set by now: the GEMM waited for its
// peers' and the copy streams for their own, or see BarrierFirst) and the
// team barrier, in one launch (end_barrier, gemm_util.cu). The clear
// precedes this rank's signal, and a peer sets flags of its next call
// here only after the barrier. afterGEMM: the barrier directly follows the
// GEMM on main, and is launched as its programmatic dependent, which
// overlaps its launch with the GEMM's tail (4-5 us a call at 8192 in
// torch's timeline, 2026-11-26); otherwise it is a plain launch, after
// the joins.
func (r *Runner) endBarrier(afterGEMM bool) error {
	args := cudamem.Args(uint64(r.peers.PtrTable()), uint64(r.peers.Rank()), uint64(r.peers.World()),
		uint64(r.peers.Data(r.peers.Rank())), uint64(PayloadOffset/4))
	launch := r.endFn.Launch
	if afterGEMM {
		launch = r.endFn.LaunchDependent
	}
	if err := launch(1, 1, 1, endBarrierThreads, 1, 1, 0, r.main, args); err != nil {
		return fmt.Errorf("launch the end barrier: %w", err)
	}
	return nil
}

// endBarrierThreads clear the flag region (PayloadOffset bytes, 9,216
// words) in a few stores each; threads 0..world-1 then meet the peers.
const endBarrierThreads = 256

// peerIndex is q's place in the peer order (next rank first), which
// indexes the side streams.
func (r *Runner) peerIndex(q int) int {
	w := r.peers.World()
	return (q - r.peers.Rank() - 1 + w) % w
}

// flag is the address of flag i in rank q's region.
func (r *Runner) flag(q, i int) cu.DevicePtr {
	return r.peers.Data(q) + cu.DevicePtr(i*FlagStride)
}

// payload is rank q's payload as mapped here.
func (r *Runner) payload(q int) cu.DevicePtr {
	return r.peers.Data(q) + PayloadOffset
}

//go:build cuda

package gpu

import (
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// reduceThreads is the block size of the reduction kernel.
const reduceThreads = 256

// matmulrs is matmul + reduce-scatter: A (Ptrs.A) and the output
// (Ptrs.C) where the caller holds them, every rank's partials of this
// rank's rows in the symmetric payload's slots, and the partials a copy
// engine pushes staged in the runner's rows (Runner.staging).
type matmulrs struct{ r *Runner }

func (m *matmulrs) plan(c Config) RSPlan { return PlanRS(c.Plan(m.r.prob, m.r.peers.Rank())) }

// products are the cuBLASLt products of c (none when fused).
func (m *matmulrs) products(c Config) []Step {
	if c.Impl == ImplFused {
		return nil
	}
	return m.plan(c).Products
}

// slot is where rank src's partial of owner q's rows lives, as mapped here.
func (m *matmulrs) slot(q, src int) cu.DevicePtr {
	return m.r.payload(q) + cu.DevicePtr(int64(src)*SlotElems(m.r.prob)*OutBytes)
}

// launch: products in plan order, each partial written into its owner's
// slot (directly, or locally and then pushed by the copy engine of that
// owner's stream) and announced with the owner's flag; this rank's own
// chunks are reduced on the reduce stream as soon as every rank's partial
// of the chunk is announced (plan.Reduces is the own chunks in product
// order).
func (m *matmulrs) launch(c Config) error {
	r, p, me := m.r, m.r.prob, m.r.peers.Rank()
	plan := m.plan(c)
	if err := r.begin(c, nil); err != nil {
		return err
	}
	if c.Impl == ImplFused {
		if err := m.launchFused(c); err != nil {
			return err
		}
		return r.end(c, nil)
	}
	rowBytes := int64(p.N) * OutBytes
	if p.World == 1 {
		// A reduce-scatter of one rank is its product: each product goes
		// straight into the output, with no slot, flag or reduction kernel
		// (its pass over the product was 12% of a world-1 call at 8192
		// and 16384 x 3584 x 8192 in bf16 and 23% in e4m3 on 1 x H200:
		// 70 and 147 µs; bench/results/2026-12-03-h200-program-kernels.md).
		for _, st := range plan.Products {
			if err := r.product(c, st, m.aRows(st.Start), r.scaleRow(r.ptr.ScaleA, st.Start), r.ptr.C+cu.DevicePtr(int64(st.Start)*rowBytes)); err != nil {
				return err
			}
		}
		return r.end(c, nil)
	}
	for i, st := range plan.Products {
		q, g := st.Owner, r.gemm[st.Stream]
		// A's rows and their scales (row st.Start of A, here).
		a := m.aRows(st.Start)
		sa := r.scaleRow(r.ptr.ScaleA, st.Start)
		if q == me || c.Push == PushGEMM {
			// Straight into the owner's slot (never batched: see Validate).
			dst := m.slot(q, me) + cu.DevicePtr(int64(st.Start-q*p.Rows())*rowBytes)
			if err := r.product(c, st, a, sa, dst); err != nil {
				return err
			}
			if err := r.signal(g, q, PartialFlag(me, st.Index)); err != nil {
				return err
			}
			// Enqueued as soon as the own product is: the host takes
			// longer to enqueue every product than the GPU takes to run
			// the first ones, and a reduction enqueued last would start
			// only after all of them.
			if q == me {
				if err := m.reduce(c, st.Span); err != nil {
					return err
				}
			}
			continue
		}
		if err := r.product(c, st, a, sa, r.staging+cu.DevicePtr(int64(st.Start)*rowBytes)); err != nil {
			return err
		}
		ev := r.chunkEv[i]
		if err := ev.Record(g); err != nil {
			return fmt.Errorf("record product: %w", err)
		}
		for _, sp := range st.Spans(p.Rows()) {
			if err := m.push(sp, ev); err != nil {
				return err
			}
		}
	}
	return r.end(c, nil)
}

// aRows is the address of row start of this rank's A (M x K, row-major).
func (m *matmulrs) aRows(start int) cu.DevicePtr {
	p := m.r.prob
	return m.r.ptr.A + cu.DevicePtr(int64(start)*int64(p.K)*int64(p.ElemSize))
}

// launchFused enqueues the persistent GEMM on main (sm_reserve SMs stay
// free for the reductions), then, with push=ce, the
// copy-engine pushes of peers' staged chunks, and the reduction of every
// own chunk on the reduce stream, each after every rank's flag of it. With
// push=gemm the epilogue stores every row into its owner's slot and flags
// each chunk there itself. With reduce=epilogue the GEMM's epilogue sums
// the own rows into the output itself; the flags it waited for (and those
// it set for its own chunks) are cleared by the end barrier.
func (m *matmulrs) launchFused(c Config) error {
	r, p, me := m.r, m.r.prob, m.r.peers.Rank()
	if FusedPlain(r.v, p) {
		// A reduce-scatter of one rank is its product: the GEMM alone,
		// straight into the output, on every SM (see FusedPlain).
		return r.launchFusedGEMM(c, r.ptr.C, r.peers.SMs())
	}
	epilogue := c.Reduce == ReduceEpilogue
	out := cu.DevicePtr(0)
	if epilogue {
		out = r.ptr.C
	}
	// The flags this call sets here are cleared by its end barrier.
	if err := r.launchFusedGEMM(c, out, r.peers.SMs()-c.SMReserve); err != nil {
		return err
	}
	if c.Push == PushCE {
		// Each peer's chunks, on that peer's stream, in the GEMM's order:
		// once staged (the GEMM's local flag, cleared here for the next
		// call), pushed by a copy engine and flagged in the owner's region.
		// The stream memop's wait has no bound, and needs none: the flag
		// is this rank's own GEMM's, which sets every chunk's flag
		// (rs_signal_warp signals every tile) even after a timed-out wait
		// of its own (hopper_comm.cuh: it stops waiting, not working),
		// and ends within its bounds.
		plan := PlanFusedRS(p.M, p.N, p.World, me, c.Chunks, c.Tile.BM, c.Tile.BN, c.Tile.RowsPerTile())
		for i, q := range plan.Owner {
			if q == me {
				continue
			}
			st := r.side[r.peerIndex(q)]
			if err := cudamem.WaitFlag(st, r.localFlag(i), 1); err != nil {
				return fmt.Errorf("wait for staged chunk %d: %w", i, err)
			}
			if err := cudamem.WriteFlag(st, r.localFlag(i), 0); err != nil {
				return fmt.Errorf("clear staged flag %d: %w", i, err)
			}
			if err := m.pushOn(st, Shards(p.M, p.World, c.Chunks)[q][plan.Index[i]]); err != nil {
				return err
			}
		}
	}
	if epilogue {
		return nil
	}
	for _, sp := range Shards(p.M, p.World, c.Chunks)[me] {
		if err := m.reduce(c, sp); err != nil {
			return err
		}
	}
	return nil
}

// reduce enqueues the reduction of own chunk sp on the reduce stream, after
// every rank's partial of it is flagged.
func (m *matmulrs) reduce(c Config, sp Span) error {
	r, p, me := m.r, m.r.prob, m.r.peers.Rank()
	// Every rank's, the own one too: consume waits for the own flag by
	// stream memory operations and for the peers' in one bounded kernel.
	flags := make([]int, p.World)
	for src := range flags {
		flags[src] = PartialFlag(src, sp.Index)
	}
	if err := r.consume(r.reduce, flags...); err != nil {
		return fmt.Errorf("the partials of chunk %d: %w", sp.Index, err)
	}
	start := int64(sp.Start-me*p.Rows()) * int64(p.N)
	args := cudamem.Args(uint64(r.ptr.C), uint64(m.slot(me, 0)), uint64(SlotElems(p)), uint64(p.World), uint64(start), uint64(sp.Rows)*uint64(p.N))
	end, err := r.trace.span(func() (string, string) { return fmt.Sprintf("reduce rows %d+%d", sp.Start, sp.Rows), "reduce" }, r.reduce)
	if err != nil {
		return err
	}
	if err := r.redFn.Launch(c.ReduceBlocks, 1, 1, reduceThreads, 1, 1, 0, r.reduce, args); err != nil {
		return fmt.Errorf("launch reduction: %w", err)
	}
	return end()
}

// push copies span sp of the staged partials into its owner's slot on the
// owner's stream, once event ready has fired, and announces it there.
func (m *matmulrs) push(sp Span, ready cu.Event) error {
	s := m.r.side[m.r.peerIndex(sp.Owner)]
	if err := s.Wait(ready, 0); err != nil {
		return fmt.Errorf("wait for product: %w", err)
	}
	return m.pushOn(s, sp)
}

// pushOn enqueues on s the copy of span sp of the staged partials into its
// owner's slot and the owner's flag after it.
func (m *matmulrs) pushOn(s cu.Stream, sp Span) error {
	r, p, me := m.r, m.r.prob, m.r.peers.Rank()
	q := sp.Owner
	rowBytes := int64(p.N) * OutBytes
	end, err := r.trace.span(func() (string, string) {
		return fmt.Sprintf("push rows %d+%d to rank %d", sp.Start, sp.Rows, q), fmt.Sprintf("side%d", r.peerIndex(q))
	}, s)
	if err != nil {
		return err
	}
	dst := m.slot(q, me) + cu.DevicePtr(int64(sp.Start-q*p.Rows())*rowBytes)
	if err := cu.MemcpyDtoDAsync(dst, r.staging+cu.DevicePtr(int64(sp.Start)*rowBytes), int64(sp.Rows)*rowBytes, s); err != nil {
		return fmt.Errorf("push chunk %d to rank %d: %w", sp.Index, q, err)
	}
	if err := end(); err != nil {
		return err
	}
	return r.signal(s, q, PartialFlag(me, sp.Index))
}

//go:build cuda

package gpu

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// reduceThreads is the block size of the reduction kernel.
const reduceThreads = 256

// matmulrs is matmul + reduce-scatter: A_r and the output privately, every
// rank's partials of this rank's rows in the symmetric payload's slots.
type matmulrs struct {
	in      *instance
	a       cu.DevicePtr // A_r [M, K]
	staging cu.DevicePtr // [M, N]: partials a copy engine pushes
	out     cu.DevicePtr // [M/W, N]: this rank's rows of the sum
}

func (m *matmulrs) alloc() error {
	p := m.in.prob
	for _, b := range []struct {
		dst   *cu.DevicePtr
		elems int64
		what  string
	}{{&m.a, int64(p.M) * int64(p.K), "A"}, {&m.staging, int64(p.M) * int64(p.N), "staging"}, {&m.out, int64(p.Rows()) * int64(p.N), "output"}} {
		var err error
		if *b.dst, err = cu.MemAlloc(b.elems * 2); err != nil {
			return fmt.Errorf("allocate %s: %w", b.what, err)
		}
	}
	return nil
}

func (m *matmulrs) plan(c Config) RSPlan { return PlanRS(c.Plan(m.in.prob, m.in.team.Rank())) }

// products are the cuBLASLt products of c (none when fused).
func (m *matmulrs) products(c Config) []Step {
	if c.Impl == ImplFused {
		return nil
	}
	return m.plan(c).Products
}

// slot is where rank src's partial of owner q's rows lives, as mapped here.
func (m *matmulrs) slot(q, src int) cu.DevicePtr {
	return m.in.payload(q) + cu.DevicePtr(int64(src)*SlotElems(m.in.prob)*2)
}

func (m *matmulrs) fill(seed uint64) error {
	in, p := m.in, m.in.prob
	if err := in.fillMatrix(m.a, p.M, p.K, p.K, 0, seed, uint64(in.team.Rank())); err != nil {
		return err
	}
	// B, stored [N, K].
	return in.fillTransposed(in.bT, p.K, p.N, p.K, seed, tensorB)
}

// poison fills the output and every slot peers write.
func (m *matmulrs) poison() error {
	in, p := m.in, m.in.prob
	return errors.Join(in.poisonElems(m.out, int64(p.Rows())*int64(p.N)),
		in.poisonElems(m.slot(in.team.Rank(), 0), int64(p.World)*SlotElems(p)))
}

// launch: products in plan order, each partial written into its owner's
// slot (directly, or locally and then pushed by the copy engine of that
// owner's stream) and announced with the owner's flag; this rank's own
// chunks are reduced on the reduce stream as soon as every rank's partial
// of the chunk is announced (plan.Reduces is the own chunks in product
// order).
func (m *matmulrs) launch(c Config) error {
	in, p, me := m.in, m.in.prob, m.in.team.Rank()
	plan := m.plan(c)
	if err := in.begin(c, nil); err != nil {
		return err
	}
	if c.Impl == ImplFused {
		if err := m.launchFused(c); err != nil {
			return err
		}
		return in.end(c)
	}
	rowBytes := int64(p.N) * 2
	for i, st := range plan.Products {
		q, g := st.Owner, in.gemm[st.Stream]
		a := m.a + cu.DevicePtr(int64(st.Start)*int64(p.K)*2)
		if q == me || c.Push == PushGEMM {
			// Straight into the owner's slot (never batched: see Validate).
			dst := m.slot(q, me) + cu.DevicePtr(int64(st.Start-q*p.Rows())*rowBytes)
			if err := in.product(c, st, a, dst); err != nil {
				return err
			}
			if err := in.signal(g, q, PartialFlag(me, st.Index)); err != nil {
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
		if err := in.product(c, st, a, m.staging+cu.DevicePtr(int64(st.Start)*rowBytes)); err != nil {
			return err
		}
		ev := in.chunkEv[i]
		if err := ev.Record(g); err != nil {
			return fmt.Errorf("record product: %w", err)
		}
		for _, sp := range st.Spans(p.Rows()) {
			if err := m.push(sp, ev); err != nil {
				return err
			}
		}
	}
	return in.end(c)
}

// launchFused enqueues the persistent GEMM on the first product stream
// (sm_reserve SMs stay free for the reductions), then, with push=ce, the
// copy-engine pushes of peers' staged chunks, and the reduction of every
// own chunk on the reduce stream, each after every rank's flag of it. With
// push=gemm the epilogue stores every row into its owner's slot and flags
// each chunk there itself. With reduce=epilogue the GEMM's epilogue sums
// the own rows into the output itself; the flags it waited for (and those
// it set for its own chunks) are cleared after it.
func (m *matmulrs) launchFused(c Config) error {
	in, p, me := m.in, m.in.prob, m.in.team.Rank()
	epilogue := c.Reduce == ReduceEpilogue
	out := cu.DevicePtr(0)
	if epilogue {
		out = m.out
	}
	if err := in.launchFusedGEMM(c, out, in.team.SMs()-c.SMReserve); err != nil {
		return err
	}
	if epilogue {
		// Every flag of this call in this rank's region is set once the
		// GEMM ends (it waited for the peers'; see clearFlags).
		if err := in.clearFlags(in.gemm[0]); err != nil {
			return err
		}
	}
	if c.Push == PushCE {
		// Each peer's chunks, on that peer's stream, in the GEMM's order:
		// once staged (the GEMM's local flag, cleared here for the next
		// call), pushed by a copy engine and flagged in the owner's region.
		plan := PlanFusedRS(p.M, p.N, p.World, me, c.Chunks, c.Tile.BM, c.Tile.BN, c.Tile.RowsPerTile())
		for i, q := range plan.Owner {
			if q == me {
				continue
			}
			st := in.side[in.peerIndex(q)]
			if err := cudamem.WaitFlag(st, in.localFlag(i), 1); err != nil {
				return fmt.Errorf("wait for staged chunk %d: %w", i, err)
			}
			if err := cudamem.WriteFlag(st, in.localFlag(i), 0); err != nil {
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
	in, p, me := m.in, m.in.prob, m.in.team.Rank()
	for src := 0; src < p.World; src++ {
		if err := in.consume(in.reduce, PartialFlag(src, sp.Index)); err != nil {
			return fmt.Errorf("rank %d's partial: %w", src, err)
		}
	}
	start := int64(sp.Start-me*p.Rows()) * int64(p.N)
	args := cudamem.Args(uint64(m.out), uint64(m.slot(me, 0)), uint64(SlotElems(p)), uint64(p.World), uint64(start), uint64(sp.Rows)*uint64(p.N))
	end, err := in.trace.span(fmt.Sprintf("reduce rows %d+%d", sp.Start, sp.Rows), "reduce", in.reduce)
	if err != nil {
		return err
	}
	if err := in.redFn.Launch(c.ReduceBlocks, 1, 1, reduceThreads, 1, 1, 0, in.reduce, args); err != nil {
		return fmt.Errorf("launch reduction: %w", err)
	}
	return end()
}

// push copies span sp of the staged partials into its owner's slot on the
// owner's stream, once event ready has fired, and announces it there.
func (m *matmulrs) push(sp Span, ready cu.Event) error {
	s := m.in.side[m.in.peerIndex(sp.Owner)]
	if err := s.Wait(ready, 0); err != nil {
		return fmt.Errorf("wait for product: %w", err)
	}
	return m.pushOn(s, sp)
}

// pushOn enqueues on s the copy of span sp of the staged partials into its
// owner's slot and the owner's flag after it.
func (m *matmulrs) pushOn(s cu.Stream, sp Span) error {
	in, p, me := m.in, m.in.prob, m.in.team.Rank()
	q := sp.Owner
	rowBytes := int64(p.N) * 2
	end, err := in.trace.span(fmt.Sprintf("push rows %d+%d to rank %d", sp.Start, sp.Rows, q), fmt.Sprintf("side%d", in.peerIndex(q)), s)
	if err != nil {
		return err
	}
	dst := m.slot(q, me) + cu.DevicePtr(int64(sp.Start-q*p.Rows())*rowBytes)
	if err := cu.MemcpyDtoDAsync(dst, m.staging+cu.DevicePtr(int64(sp.Start)*rowBytes), int64(sp.Rows)*rowBytes, s); err != nil {
		return fmt.Errorf("push chunk %d to rank %d: %w", sp.Index, q, err)
	}
	if err := end(); err != nil {
		return err
	}
	return in.signal(s, q, PartialFlag(me, sp.Index))
}

// samples: three rows of every chunk of this rank's rows, each checked
// against the sum over every rank's A rows.
func (m *matmulrs) samples(c Config, seed uint64) []uint64 {
	p, me := m.in.prob, m.in.team.Rank()
	return spanSamples(Shards(p.M, p.World, c.Chunks)[me], seed, func(row int) [4]uint64 {
		return [4]uint64{uint64(row - me*p.Rows()), uint64(row), 0, uint64(p.World)}
	})
}

func (m *matmulrs) output() (cu.DevicePtr, int, int) { return m.out, m.in.prob.Rows(), m.in.prob.N }

func (m *matmulrs) close() []error {
	var errs []error
	for _, b := range []*cu.DevicePtr{&m.a, &m.staging, &m.out} {
		if *b != 0 {
			errs = append(errs, cu.MemFree(*b))
			*b = 0
		}
	}
	return errs
}

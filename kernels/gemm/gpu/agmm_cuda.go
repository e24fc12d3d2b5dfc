//go:build cuda

package gpu

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// copyThreads is the block size of the SM copy kernel.
const copyThreads = 512

// agmm is all-gather + matmul: the gathered A lives in the symmetric
// payload, C privately. The caller's own shard is a buffer of its own, not
// in symmetric memory (as a symmtune.torch caller's tensor is): each call
// first copies it into the payload, unless the config reads it in place
// (ShardInPlace), so a trial times what the runtime runs.
type agmm struct {
	in  *instance
	out cu.DevicePtr // C [M, N]
	own cu.DevicePtr // the caller's shard [M/W, K]
}

func (g *agmm) alloc() error {
	p := g.in.prob
	var err error
	if g.out, err = cu.MemAlloc(int64(p.M) * int64(p.N) * 2); err != nil {
		return fmt.Errorf("allocate C: %w", err)
	}
	if g.own, err = cu.MemAlloc(int64(p.Rows()) * g.rowBytes()); err != nil {
		return fmt.Errorf("allocate the own shard: %w", err)
	}
	return nil
}

func (g *agmm) plan(c Config) AGPlan { return PlanAG(c.Plan(g.in.prob, g.in.team.Rank())) }

// products are the cuBLASLt products of c (none when fused).
func (g *agmm) products(c Config) []Step {
	if c.Impl == ImplFused {
		return nil
	}
	return g.plan(c).Products
}

func (g *agmm) rowBytes() int64 { return int64(g.in.prob.K) * 2 }

// shard is where rank q's shard lives in rank at's payload.
func (g *agmm) shard(at, q int) cu.DevicePtr {
	return g.in.payload(at) + cu.DevicePtr(int64(q*g.in.prob.Rows())*g.rowBytes())
}

func (g *agmm) fill(seed uint64) error {
	in, p, r := g.in, g.in.prob, g.in.team.Rank()
	if err := in.fillMatrix(g.own, p.Rows(), p.K, p.K, 0, seed, uint64(r)); err != nil {
		return err
	}
	// B, stored [N, K].
	return in.fillTransposed(in.bT, p.K, p.N, p.K, seed, tensorB)
}

// poison fills C and the whole gathered A: the own rows there too, which a
// call copies in or never reads.
func (g *agmm) poison() error {
	in, p, r := g.in, g.in.prob, g.in.team.Rank()
	return errors.Join(in.poisonElems(g.out, int64(p.M)*int64(p.N)), in.poisonElems(g.shard(r, 0), int64(p.M)*int64(p.K)))
}

// launch runs one call. Pull: announce the own shard to every peer (a flag
// in each, fenced after the caller's writes), pull every peer's chunks on
// that peer's stream once its shard is announced, and run the products in
// plan order, each after its pull. Push: write the own chunks into every
// peer's buffer on that peer's stream, flagging each chunk there, and run
// the products, each after its chunks' flags. Fused: the same copies, each
// pulled chunk flagged in this rank's own region too, and one persistent
// GEMM that waits on those flags tile by tile (see PlanFusedAG).
func (g *agmm) launch(c Config) error {
	in, p, me := g.in, g.in.prob, g.in.team.Rank()
	plan := g.plan(c)
	push := c.Direction == DirPush
	fused := c.Impl == ImplFused
	inPlace := ShardInPlace(c, p, me)
	if !inPlace {
		// Before the announcement and the fork: every reader of the own
		// rows in the payload follows it in stream order.
		end, err := in.trace.span("copy the own shard into the buffer", "main", in.main)
		if err != nil {
			return err
		}
		if err := cu.MemcpyDtoDAsync(g.shard(me, me), g.own, int64(p.Rows())*g.rowBytes(), in.main); err != nil {
			return fmt.Errorf("copy the own shard into the buffer: %w", err)
		}
		if err := end(); err != nil {
			return err
		}
	}
	var announce func() error
	if !push {
		announce = func() error {
			for _, q := range plan.Peers {
				if err := in.signal(in.main, q, ReadyFlag(me)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := in.begin(c, announce); err != nil {
		return err
	}
	for i, q := range plan.Peers {
		s := in.side[i]
		spans, from, to := plan.Pulls[i], q, me
		if push {
			spans, from, to = plan.Own, me, q
		} else if err := in.consume(s, ReadyFlag(q)); err != nil {
			return fmt.Errorf("rank %d's shard: %w", q, err)
		}
		for _, sp := range spans {
			end, err := in.trace.span(fmt.Sprintf("copy rows %d+%d rank %d->%d", sp.Start, sp.Rows, from, to), fmt.Sprintf("side%d", i), s)
			if err != nil {
				return err
			}
			if err := g.copy(c, s, sp, from, to, inPlace); err != nil {
				return fmt.Errorf("copy chunk %d of rank %d's shard to rank %d: %w", sp.Index, from, to, err)
			}
			if err := end(); err != nil {
				return err
			}
			switch {
			case push:
				err = in.signal(s, q, PartialFlag(me, sp.Index))
			case fused:
				err = in.signal(s, me, PartialFlag(q, sp.Index))
			default:
				err = in.chunkEv[i*MaxChunks+sp.Index].Record(s)
			}
			if err != nil {
				return fmt.Errorf("signal chunk %d: %w", sp.Index, err)
			}
		}
	}
	if fused {
		if err := g.launchFused(c); err != nil {
			return err
		}
		return in.end(c)
	}
	for _, st := range plan.Products {
		gs := in.gemm[st.Stream]
		for _, sp := range st.Spans(p.Rows()) {
			var err error
			switch {
			case sp.Owner == me:
			case push:
				err = in.consume(gs, PartialFlag(sp.Owner, sp.Index))
			default:
				err = gs.Wait(in.chunkEv[in.peerIndex(sp.Owner)*MaxChunks+sp.Index], 0)
			}
			if err != nil {
				return fmt.Errorf("wait for chunk %d of rank %d: %w", sp.Index, sp.Owner, err)
			}
		}
		a := in.payload(me) + cu.DevicePtr(int64(st.Start)*g.rowBytes())
		if st.Owner == me && inPlace {
			a = g.own // the own product is one step of the own rows (PlanAG)
		}
		d := g.out + cu.DevicePtr(int64(st.Start)*int64(p.N)*2)
		if err := in.product(c, st, a, d); err != nil {
			return err
		}
	}
	return in.end(c)
}

// launchFused enqueues the persistent GEMM on the first product stream,
// then the clearing of the flags it waited on (clearFlags).
func (g *agmm) launchFused(c Config) error {
	in := g.in
	if err := in.launchFusedGEMM(c, g.out, in.team.SMs()); err != nil {
		return err
	}
	return in.clearFlags(in.gemm[0])
}

// copy enqueues on s the copy of span sp's rows from rank from's payload
// (or, inPlace, the own shard) to rank to's (the same rows in both): by a
// copy engine, or by the SM copy kernel.
func (g *agmm) copy(c Config, s cu.Stream, sp Span, from, to int, inPlace bool) error {
	off := cu.DevicePtr(int64(sp.Start) * g.rowBytes())
	src, dst, bytes := g.in.payload(from)+off, g.in.payload(to)+off, int64(sp.Rows)*g.rowBytes()
	if inPlace && from == g.in.team.Rank() {
		src = g.own + cu.DevicePtr(int64(sp.Start-from*g.in.prob.Rows())*g.rowBytes())
	}
	if c.Copy == CopySM {
		return g.in.copyFn.Launch(c.CopyBlocks, 1, 1, copyThreads, 1, 1, 0, s, cudamem.Args(uint64(dst), uint64(src), uint64(bytes)))
	}
	return cu.MemcpyDtoDAsync(dst, src, bytes, s)
}

// samples: three rows of every chunk of every rank's shard, each checked
// against its owner's A rows.
func (g *agmm) samples(c Config, seed uint64) []uint64 {
	p := g.in.prob
	var spans []Span
	for _, sh := range Shards(p.M, p.World, c.Chunks) {
		spans = append(spans, sh...)
	}
	return spanSamples(spans, seed, func(row int) [4]uint64 {
		q := row / p.Rows()
		return [4]uint64{uint64(row), uint64(row - q*p.Rows()), uint64(q), 1}
	})
}

func (g *agmm) output() (cu.DevicePtr, int, int) { return g.out, g.in.prob.M, g.in.prob.N }

func (g *agmm) close() []error {
	var errs []error
	for _, p := range []*cu.DevicePtr{&g.out, &g.own} {
		if *p != 0 {
			errs = append(errs, cu.MemFree(*p))
			*p = 0
		}
	}
	return errs
}

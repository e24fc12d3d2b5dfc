//go:build cuda

package gpu

import (
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// copyThreads is the block size of the SM copy kernel.
const copyThreads = 512

// agmm is all-gather + matmul: the gathered A lives in the symmetric
// payload, the caller's own shard (Ptrs.A) and C (Ptrs.C) where the caller
// holds them. Each call first copies the own shard into the payload,
// unless the config reads it in place (ShardInPlace). With row scales
// (e4m3_row) every copy of rows copies their scales too, on the same
// stream and before the flag or event that announces the rows, into the
// payload's gathered scales (layout.go), which the products read.
type agmm struct{ r *Runner }

func (g *agmm) plan(c Config) AGPlan { return PlanAG(c.Plan(g.r.prob, g.r.peers.Rank())) }

// products are the cuBLASLt products of c (none when fused).
func (g *agmm) products(c Config) []Step {
	if c.Impl == ImplFused {
		return nil
	}
	return g.plan(c).Products
}

func (g *agmm) rowBytes() int64 { return int64(g.r.prob.K) * int64(g.r.prob.ElemSize) }

// shard is where rank q's shard lives in rank at's payload.
func (g *agmm) shard(at, q int) cu.DevicePtr {
	return g.r.payload(at) + cu.DevicePtr(int64(q*g.r.prob.Rows())*g.rowBytes())
}

// scales is where global row row's scale lives in rank at's payload
// (e4m3_row only).
func (g *agmm) scales(at, row int) cu.DevicePtr {
	return g.r.payload(at) + cu.DevicePtr(AGScaleOffset(g.r.prob)+int64(row)*ScaleBytes)
}

// copyScales enqueues on s the copy of rows [row, row+rows)'s scales from
// src (the scale of row) to rank to's payload: nothing unless the scales
// are per row. A copy engine moves them whatever copy moves the rows (a
// few bytes per row, rarely a multiple of the SM copy's 16).
func (g *agmm) copyScales(s cu.Stream, src cu.DevicePtr, to, row, rows int) error {
	if !g.r.prob.Dtype.RowScales() {
		return nil
	}
	if err := cu.MemcpyDtoDAsync(g.scales(to, row), src, int64(rows)*ScaleBytes, s); err != nil {
		return fmt.Errorf("copy the scales of rows %d+%d: %w", row, rows, err)
	}
	return nil
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
	r, p, me := g.r, g.r.prob, g.r.peers.Rank()
	plan := g.plan(c)
	push := c.Direction == DirPush
	fused := c.Impl == ImplFused
	inPlace := ShardInPlace(c, p, me)
	if !inPlace {
		// Before the announcement and the fork: every reader of the own
		// rows in the payload follows it in stream order.
		end, err := r.trace.span(func() (string, string) { return "copy the own shard into the buffer", "main" }, r.main)
		if err != nil {
			return err
		}
		if err := cu.MemcpyDtoDAsync(g.shard(me, me), r.ptr.A, int64(p.Rows())*g.rowBytes(), r.main); err != nil {
			return fmt.Errorf("copy the own shard into the buffer: %w", err)
		}
		if err := g.copyScales(r.main, r.ptr.ScaleA, me, me*p.Rows(), p.Rows()); err != nil {
			return err
		}
		if err := end(); err != nil {
			return err
		}
	}
	var announce func() error
	if !push {
		announce = func() error {
			for _, q := range plan.Peers {
				if err := r.signal(r.main, q, ReadyFlag(me)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := r.begin(c, announce); err != nil {
		return err
	}
	for _, cp := range copyOrder(c, plan) {
		i, q, sp, s := cp.peer, plan.Peers[cp.peer], cp.span, r.side[cp.stream]
		from, to := q, me
		if push {
			from, to = me, q
		} else if cp.first {
			if err := r.consume(s, ReadyFlag(q)); err != nil {
				return fmt.Errorf("rank %d's shard: %w", q, err)
			}
		}
		end, err := r.trace.span(func() (string, string) {
			return fmt.Sprintf("copy rows %d+%d rank %d->%d", sp.Start, sp.Rows, from, to), fmt.Sprintf("side%d", cp.stream)
		}, s)
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
			err = r.signal(s, q, PartialFlag(me, sp.Index))
		case fused:
			err = r.signal(s, me, PartialFlag(q, sp.Index))
		default:
			err = r.chunkEv[i*MaxChunks+sp.Index].Record(s)
		}
		if err != nil {
			return fmt.Errorf("signal chunk %d: %w", sp.Index, err)
		}
	}
	if fused {
		if err := g.launchFused(c); err != nil {
			return err
		}
		return r.end(c, g.gatherStep(inPlace))
	}
	for _, st := range plan.Products {
		gs := r.gemm[st.Stream]
		var pushed, from []int // the step's peers' chunk flags: one wait for them all
		for _, sp := range st.Spans(p.Rows()) {
			switch {
			case sp.Owner == me:
			case push:
				pushed, from = append(pushed, PartialFlag(sp.Owner, sp.Index)), append(from, sp.Owner)
			default:
				if err := gs.Wait(r.chunkEv[r.peerIndex(sp.Owner)*MaxChunks+sp.Index], 0); err != nil {
					return fmt.Errorf("wait for chunk %d of rank %d: %w", sp.Index, sp.Owner, err)
				}
			}
		}
		if len(pushed) > 0 {
			if err := r.consume(gs, pushed...); err != nil {
				return fmt.Errorf("wait for chunk %d of ranks %v: %w", st.Index, from, err)
			}
		}
		a := r.payload(me) + cu.DevicePtr(int64(st.Start)*g.rowBytes())
		sa := r.ptr.ScaleA // a tensor scale, or the own shard's row scales
		if p.Dtype.RowScales() {
			sa = g.scales(me, st.Start)
		}
		if st.Owner == me && inPlace {
			// The own product is one step of the own rows (PlanAG).
			a, sa = r.ptr.A, r.ptr.ScaleA
		}
		d := r.ptr.C + cu.DevicePtr(int64(st.Start)*int64(p.N)*OutBytes)
		if err := r.product(c, st, a, sa, d); err != nil {
			return err
		}
	}
	return r.end(c, g.gatherStep(inPlace))
}

// gatherStep is gather as end's step before the barrier, or nil where
// the caller did not ask for the gathered A (then a fused call's barrier
// follows its GEMM directly: Runner.barrierFirst).
func (g *agmm) gatherStep(inPlace bool) func() error {
	if g.r.ptr.Extra == 0 {
		return nil
	}
	return func() error { return g.gather(inPlace) }
}

// gather copies, on main after every stream joined and before the end
// barrier (after which a peer's next call may write this payload), the
// gathered A into Ptrs.Extra when the caller asked for it: the payload's
// rows, the own ones from the own shard where the call read it in place.
func (g *agmm) gather(inPlace bool) error {
	r, p, me := g.r, g.r.prob, g.r.peers.Rank()
	if r.ptr.Extra == 0 {
		return nil
	}
	if err := cu.MemcpyDtoDAsync(r.ptr.Extra, g.shard(me, 0), int64(p.M)*g.rowBytes(), r.main); err != nil {
		return fmt.Errorf("copy the gathered A: %w", err)
	}
	if inPlace {
		own := r.ptr.Extra + cu.DevicePtr(int64(me*p.Rows())*g.rowBytes())
		if err := cu.MemcpyDtoDAsync(own, r.ptr.A, int64(p.Rows())*g.rowBytes(), r.main); err != nil {
			return fmt.Errorf("copy the own shard into the gathered A: %w", err)
		}
	}
	return nil
}

// launchFused enqueues the persistent GEMM on main; the end barrier
// clears the flags it waited on. Where the own rows are read in place,
// so are their row scales (agmm.maps): nothing precedes the GEMM.
func (g *agmm) launchFused(c Config) error {
	return g.r.launchFusedGEMM(c, g.r.ptr.C, g.r.peers.SMs())
}

// copy enqueues on s the copy of span sp's rows from rank from's payload
// (or, inPlace, the own shard) to rank to's (the same rows in both): by a
// copy engine, or by the SM copy kernel.
// With row scales the span's scales follow on s.
func (g *agmm) copy(c Config, s cu.Stream, sp Span, from, to int, inPlace bool) error {
	off := cu.DevicePtr(int64(sp.Start) * g.rowBytes())
	src, dst, bytes := g.r.payload(from)+off, g.r.payload(to)+off, int64(sp.Rows)*g.rowBytes()
	srcScales := g.scales(from, sp.Start)
	if inPlace && from == g.r.peers.Rank() {
		own := sp.Start - from*g.r.prob.Rows()
		src = g.r.ptr.A + cu.DevicePtr(int64(own)*g.rowBytes())
		srcScales = g.r.ptr.ScaleA + cu.DevicePtr(int64(own)*ScaleBytes)
	}
	var err error
	if c.Copy == CopySM {
		err = g.r.copyFn.Launch(c.CopyBlocks, 1, 1, copyThreads, 1, 1, 0, s, cudamem.Args(uint64(dst), uint64(src), uint64(bytes)))
	} else {
		err = cu.MemcpyDtoDAsync(dst, src, bytes, s)
	}
	if err != nil {
		return err
	}
	return g.copyScales(s, srcScales, to, sp.Start, sp.Rows)
}

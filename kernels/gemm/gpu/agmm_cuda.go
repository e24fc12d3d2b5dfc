//go:build cuda

package gpu

import (
	"errors"
	"fmt"

	"gorgonia.org/cu"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// copyThreads is the block size of the SM copy kernel.
const copyThreads = 512

// agmm is all-gather + matmul: the gathered A lives in the symmetric
// payload (each rank's own shard written there by the caller), C privately.
type agmm struct {
	in  *instance
	out cu.DevicePtr // C [M, N]
}

func (g *agmm) alloc() error {
	p := g.in.prob
	var err error
	if g.out, err = cu.MemAlloc(int64(p.M) * int64(p.N) * 2); err != nil {
		return fmt.Errorf("allocate C: %w", err)
	}
	return nil
}

func (g *agmm) plan(c Config) AGPlan {
	p := g.in.prob
	return PlanAG(p.M, p.World, g.in.team.Rank(), c.Chunks, c.Streams)
}

func (g *agmm) products(c Config) []Step { return g.plan(c).Products }

func (g *agmm) rowBytes() int64 { return int64(g.in.prob.K) * 2 }

// shard is where rank q's shard lives in rank at's payload.
func (g *agmm) shard(at, q int) cu.DevicePtr {
	return g.in.payload(at) + cu.DevicePtr(int64(q*g.in.prob.Rows())*g.rowBytes())
}

func (g *agmm) fill(seed uint64) error {
	in, p, r := g.in, g.in.prob, g.in.team.Rank()
	if err := in.fillMatrix(g.shard(r, r), p.Rows(), p.K, p.K, 0, seed, uint64(r)); err != nil {
		return err
	}
	return in.fillMatrix(in.b, p.K, p.N, p.N, 0, seed, tensorB)
}

// poison fills C and the peers' rows of the gathered A.
func (g *agmm) poison() error {
	in, p, r := g.in, g.in.prob, g.in.team.Rank()
	rowElems := int64(p.K)
	errs := []error{in.poisonElems(g.out, int64(p.M)*int64(p.N))}
	if r > 0 {
		errs = append(errs, in.poisonElems(g.shard(r, 0), int64(r*p.Rows())*rowElems))
	}
	if rest := p.World - 1 - r; rest > 0 {
		errs = append(errs, in.poisonElems(g.shard(r, r+1), int64(rest*p.Rows())*rowElems))
	}
	return errors.Join(errs...)
}

// launch: announce the own shard (flag = epoch, fenced after the caller's
// writes), pull every peer's chunks on that peer's stream once its shard is
// announced, and run the products in plan order, each after its pull.
func (g *agmm) launch(c Config) error {
	in, p, me := g.in, g.in.prob, g.in.team.Rank()
	plan := g.plan(c)
	e, err := in.begin(func(e uint32) error {
		return cudamem.WriteFlag(in.main, in.flag(me, ReadyFlag), e)
	})
	if err != nil {
		return err
	}
	for i, q := range plan.Peers {
		s := in.side[i]
		if err := cudamem.WaitFlag(s, in.flag(q, ReadyFlag), e); err != nil {
			return fmt.Errorf("wait for rank %d's shard: %w", q, err)
		}
		for _, sp := range plan.Pulls[i] {
			off := cu.DevicePtr(int64(sp.Start) * g.rowBytes())
			src, dst, bytes := in.payload(q)+off, in.payload(me)+off, int64(sp.Rows)*g.rowBytes()
			if c.Copy == CopySM {
				args := cudamem.Args(uint64(dst), uint64(src), uint64(bytes))
				err = in.copyFn.Launch(c.CopyBlocks, 1, 1, copyThreads, 1, 1, 0, s, args)
			} else {
				err = cu.MemcpyDtoDAsync(dst, src, bytes, s)
			}
			if err != nil {
				return fmt.Errorf("pull chunk %d from rank %d: %w", sp.Index, q, err)
			}
			if err := in.chunkEv[i*MaxChunks+sp.Index].Record(s); err != nil {
				return fmt.Errorf("record pull: %w", err)
			}
		}
	}
	for _, st := range plan.Products {
		if st.Owner != me {
			ev := in.chunkEv[in.peerIndex(st.Owner)*MaxChunks+st.Index]
			if err := in.gemm[st.Stream].Wait(ev, 0); err != nil {
				return fmt.Errorf("wait for pull: %w", err)
			}
		}
		a := in.payload(me) + cu.DevicePtr(int64(st.Start)*g.rowBytes())
		d := g.out + cu.DevicePtr(int64(st.Start)*int64(p.N)*2)
		if err := in.product(c, st, a, d); err != nil {
			return err
		}
	}
	return in.end()
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
	if g.out == 0 {
		return nil
	}
	err := cu.MemFree(g.out)
	g.out = 0
	return []error{err}
}

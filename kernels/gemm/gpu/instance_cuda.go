//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// instance is one rank of a GPU GEMM plugin: the test harness (its own
// stream and operands, fill, poison, check, timing, tracing) around the
// Runner that enqueues the calls, the launch sequence symmtune.torch runs
// too. Every method that touches the GPU runs inside team.Do.
type instance struct {
	k    Kernel
	team *cudamem.Team
	prob Problem
	r    *Runner
	main cu.Stream

	// The operands, private: a is agmm's own shard [M/W, K] (a buffer of
	// its own, not in symmetric memory, as a symmtune.torch caller's
	// tensor is) or matmulrs's A [M, K]; bT is B, the same on every rank,
	// stored [N, K] (a torch.nn.Linear weight's layout); out is agmm's C
	// [M, N] or matmulrs's rows of the sum [M/W, N]; scaleA and scaleB
	// FP8's scales (Ptrs says which), 0 for other dtypes.
	a, bT, out     cu.DevicePtr
	scaleA, scaleB cu.DevicePtr
	res, samples   cu.DevicePtr
}

func open(k Kernel, t *cudamem.Team, p Problem, dtype string) (sdk.Instance, error) {
	in := &instance{k: k, team: t, prob: p}
	if err := t.Do(func() error { return in.setup(dtype) }); err != nil {
		return nil, errors.Join(fmt.Errorf("open GPU %s on rank %d: %w", k.Variant, t.Rank(), err), in.Close())
	}
	return in, nil
}

func (in *instance) setup(dtype string) error {
	var err error
	if in.r, err = NewRunner(in.k.Variant, in.team, in.prob, dtype); err != nil {
		return err
	}
	if in.main, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	p := in.prob
	aRows, outRows := int64(p.Rows()), int64(p.M)
	if in.k.Variant == VariantMatmulRS {
		aRows, outRows = int64(p.M), int64(p.Rows())
	}
	elem := int64(p.ElemSize)
	for _, b := range []struct {
		dst   *cu.DevicePtr
		bytes int64
		what  string
	}{{&in.a, aRows * int64(p.K) * elem, "A"}, {&in.bT, int64(p.N) * int64(p.K) * elem, "B [N, K]"},
		{&in.out, outRows * int64(p.N) * OutBytes, "the output"}, {&in.res, 8 * 4, "check result"},
		{&in.samples, 8 * 4 * 3 * MaxWorld * MaxChunks, "samples"},
		{&in.scaleA, int64(p.Dtype.ScaleCount(int(aRows))) * ScaleBytes, "A's scales"},
		{&in.scaleB, int64(p.Dtype.ScaleCount(p.N)) * ScaleBytes, "B's scales"}} {
		if b.bytes == 0 {
			continue // no scales
		}
		if *b.dst, err = cu.MemAlloc(b.bytes); err != nil {
			return fmt.Errorf("allocate %s: %w", b.what, err)
		}
	}
	// Flags start clear. Open runs on every rank before any call, so no
	// peer's flag write can precede this.
	if err := cu.MemsetD8(in.team.Data(in.team.Rank()), 0, PayloadOffset); err != nil {
		return fmt.Errorf("zero flags: %w", err)
	}
	return cu.Synchronize()
}

// ptrs are the harness's operands as the Runner takes them.
func (in *instance) ptrs() Ptrs {
	return Ptrs{A: in.a, B: in.bT, C: in.out, ScaleA: in.scaleA, ScaleB: in.scaleB}
}

// parse checks a config where it runs, as the host's Validate did.
func (in *instance) parse(c space.Config) (Config, error) {
	cfg, err := in.k.Variant.ParseConfig(c)
	if err != nil {
		return Config{}, err
	}
	if err := in.k.Variant.Validate(cfg, in.prob); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", c, err)
	}
	return cfg, nil
}

// prepare makes c ready to run and, with graph=1, captures its call at the
// harness's operands, so every timed call replays it. Call inside Do.
func (in *instance) prepare(c Config) error {
	if err := in.r.Prepare(c); err != nil {
		return err
	}
	if c.Graph {
		return in.r.Capture(c, in.ptrs())
	}
	return nil
}

// call enqueues one call of c on the harness's stream.
func (in *instance) call(c Config) error { return in.r.Enqueue(c, in.main, in.ptrs()) }

func (in *instance) Prepare(ctx context.Context, c space.Config) error {
	cfg, err := in.parse(c)
	if err != nil {
		return err
	}
	return in.team.Do(func() error { return in.prepare(cfg) })
}

func (in *instance) Close() error {
	return in.team.Do(func() error {
		var errs []error
		if in.main != (cu.Stream{}) {
			errs = append(errs, in.main.Synchronize())
		}
		if in.r != nil {
			errs = append(errs, in.r.Close())
			in.r = nil
		}
		for _, p := range []*cu.DevicePtr{&in.a, &in.bT, &in.out, &in.scaleA, &in.scaleB, &in.res, &in.samples} {
			if *p != 0 {
				errs = append(errs, cu.MemFree(*p))
				*p = 0
			}
		}
		if in.main != (cu.Stream{}) {
			errs = append(errs, in.main.Destroy())
			in.main = cu.Stream{}
		}
		return errors.Join(errs...)
	})
}

// fill writes this rank's inputs for seed: A (agmm: the own shard's
// rows), and B, stored [N, K], and for FP8 their scales (fp8gen.go's
// FillScalesArgs says which generator each comes from).
func (in *instance) fill(seed uint64) error {
	p, r := in.prob, in.team.Rank()
	rows, row0 := p.M, 0
	if in.k.Variant == VariantAGMM {
		rows = p.Rows()
	}
	if err := in.fillMatrix(in.a, rows, p.K, p.K, row0, seed, uint64(r)); err != nil {
		return err
	}
	if err := in.fillTransposed(in.bT, p.K, p.N, p.K, seed, tensorB); err != nil {
		return err
	}
	if !p.Dtype.FP8() {
		return nil
	}
	aRank := uint64(r)
	if in.aScaleRank() == TensorScale {
		aRank = TensorScale
	}
	if err := in.fillScales(in.scaleA, p.Dtype.ScaleCount(rows), seed, aRank); err != nil {
		return err
	}
	return in.fillScales(in.scaleB, p.Dtype.ScaleCount(p.N), seed, TensorB)
}

// aScaleRank is check_rows' generator rank of A's scales: agmm's tensor
// scale is the same on every rank (TensorScale); row scales, and
// matmulrs's every scale, are each rank's own (ScaleRankSource).
func (in *instance) aScaleRank() uint64 {
	if in.k.Variant == VariantAGMM && in.prob.Dtype == DtypeE4M3 {
		return TensorScale
	}
	return ScaleRankSource
}

// poison fills the output and every buffer peers write with NaN: agmm's
// whole payload (the gathered A and its scales, the own rows too, which a
// call copies in or never reads), matmulrs's slots.
func (in *instance) poison() error {
	p, me := in.prob, in.team.Rank()
	if in.k.Variant == VariantAGMM {
		return errors.Join(in.poisonElems(in.out, int64(p.M)*int64(p.N)),
			in.poisonBytes(in.team.Data(me)+PayloadOffset, in.k.Variant.SymmetricBytes(p)-PayloadOffset))
	}
	return errors.Join(in.poisonElems(in.out, int64(p.Rows())*int64(p.N)),
		in.poisonElems(in.team.Data(me)+PayloadOffset, int64(p.World)*SlotElems(p)))
}

// samples lists the output rows to check, 4 u64 each (check_rows). agmm:
// three rows of every chunk of every rank's shard, each checked against
// its owner's A rows. matmulrs: three rows of every chunk of this rank's
// rows, each checked against the sum over every rank's A rows.
func (in *instance) sampleRows(c Config, seed uint64) []uint64 {
	p, me := in.prob, in.team.Rank()
	if in.k.Variant == VariantAGMM {
		var spans []Span
		for _, sh := range Shards(p.M, p.World, c.Chunks) {
			spans = append(spans, sh...)
		}
		return spanSamples(spans, seed, func(row int) [4]uint64 {
			q := row / p.Rows()
			return [4]uint64{uint64(row), uint64(row - q*p.Rows()), uint64(q), 1}
		})
	}
	return spanSamples(Shards(p.M, p.World, c.Chunks)[me], seed, func(row int) [4]uint64 {
		return [4]uint64{uint64(row - me*p.Rows()), uint64(row), 0, uint64(p.World)}
	})
}

// output is the result: pointer, rows, columns (leading dimension N).
func (in *instance) output() (cu.DevicePtr, int, int) {
	if in.k.Variant == VariantAGMM {
		return in.out, in.prob.M, in.prob.N
	}
	return in.out, in.prob.Rows(), in.prob.N
}

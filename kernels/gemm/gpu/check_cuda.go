//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"os"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

func gridFor(n int64, threads int) int {
	return int(min(max((n+int64(threads)-1)/int64(threads), 1), 4096))
}

// fillMatrix writes rows x cols of rank's tensor (logical rows from row0)
// at dst with leading dimension ld.
func (in *instance) fillMatrix(dst cu.DevicePtr, rows, cols, ld, row0 int, seed, rank uint64) error {
	args := cudamem.Args(uint64(dst), uint64(rows), uint64(cols), uint64(ld), uint64(row0), seed, rank)
	if err := in.r.fillFn.Launch(gridFor(int64(rows)*int64(cols), 256), 1, 1, 256, 1, 1, 0, in.main, args); err != nil {
		return fmt.Errorf("launch fill: %w", err)
	}
	return nil
}

// fillTransposed writes rank's rows x cols tensor transposed (element
// (i, j) at dst[j*ld + i]).
func (in *instance) fillTransposed(dst cu.DevicePtr, rows, cols, ld int, seed, rank uint64) error {
	args := cudamem.Args(uint64(dst), uint64(rows), uint64(cols), uint64(ld), seed, rank)
	if err := in.r.fillTFn.Launch(gridFor(int64(rows)*int64(cols), 256), 1, 1, 256, 1, 1, 0, in.main, args); err != nil {
		return fmt.Errorf("launch fill_t: %w", err)
	}
	return nil
}

// fillScales writes count scales of rank's generator from index 0 at dst.
func (in *instance) fillScales(dst cu.DevicePtr, count int, seed, rank uint64) error {
	args := cudamem.Args(FillScalesArgs(uint64(dst), count, 0, seed, rank)...)
	if err := in.r.fillScalesFn.Launch(gridFor(int64(count), 256), 1, 1, 256, 1, 1, 0, in.main, args); err != nil {
		return fmt.Errorf("launch fill_scales: %w", err)
	}
	return nil
}

// tensorB is the generator rank of B (TENSOR_B in gemm_util.cu).
const tensorB = 0x10000

// poisonElems fills n 2-byte elements at p with 0xFFFF, a NaN in bf16 and
// f16.
func (in *instance) poisonElems(p cu.DevicePtr, n int64) error {
	if err := cu.MemsetD16Async(p, 0xFFFF, n, in.main); err != nil {
		return fmt.Errorf("poison: %w", err)
	}
	return nil
}

// poisonBytes fills n bytes at p with 0xFF: NaNs of every element type
// here (bf16 and f16 0xFFFF, e4m3 0xFF, fp32 scales 0xFFFFFFFF).
func (in *instance) poisonBytes(p cu.DevicePtr, n int64) error {
	if err := cu.MemsetD8Async(p, 0xFF, n, in.main); err != nil {
		return fmt.Errorf("poison: %w", err)
	}
	return nil
}

// tolerance of the relative RMS error of the sampled rows: bf16 outputs
// round at 2^-9, f16 at 2^-11, and matmulrs's partials round once more
// before the sum. FP8 (docs/fp8.md, "Verification"): the products of two
// e4m3 values are exact in fp32, but the tensor cores' FP8 accumulator
// (fast accumulation; the fused GEMM's only mode) keeps about 14 bits, so
// over K terms of random sign its error grows like sqrt(K) * 2^-14, an
// estimated 5.5e-3 at K = 8192, and bf16 output rounding adds 1.1e-3 RMS:
// 2e-2 leaves room for both (2.0e-3 to 3.2e-3 were measured) without
// passing a wrong row or scale, which is off by O(1).
func (in *instance) tolerance() float64 {
	switch {
	case in.prob.Dtype.FP8():
		return 2e-2
	case in.prob.Dtype == DtypeBF16:
		return 1e-2
	}
	return 4e-3
}

func (in *instance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	cfg, err := in.parse(c)
	if err != nil {
		return sdk.VerifyResult{}, err
	}
	var res [4]float64
	var nSamples int
	err = in.team.Do(func() error {
		if err := in.prepare(cfg); err != nil {
			return err
		}
		if err := in.fill(seed); err != nil {
			return err
		}
		if err := in.poison(); err != nil {
			return err
		}
		if err := in.r.ClearFlags(in.main); err != nil {
			return err
		}
		// Peers write into this rank's buffers: every rank poisons before
		// any rank's call starts.
		if err := in.team.Barrier(in.main); err != nil {
			return err
		}
		if err := cu.MemsetD32Async(in.res, 0, 8, in.main); err != nil {
			return fmt.Errorf("clear check result: %w", err)
		}
		if err := in.r.Reset(in.main); err != nil {
			return err
		}
		if err := in.call(cfg); err != nil {
			return err
		}
		smp := in.sampleRows(cfg, seed)
		nSamples = len(smp) / 4
		if err := cu.MemcpyHtoD(in.samples, unsafe.Pointer(&smp[0]), int64(8*len(smp))); err != nil {
			return fmt.Errorf("copy samples: %w", err)
		}
		out, rows, cols := in.output()
		ca, err := CheckRowsArgs(in.prob.Dtype.String(), uint64(out), cols, uint64(in.samples), cols, in.prob.K, seed, uint64(in.res), in.aScaleRank())
		if err != nil {
			return err
		}
		args := cudamem.Args(ca...)
		if err := in.r.checkFn.Launch((cols+255)/256, nSamples, 1, 256, 1, 1, 0, in.main, args); err != nil {
			return fmt.Errorf("launch check_rows: %w", err)
		}
		args = cudamem.Args(uint64(out), uint64(rows), uint64(cols), uint64(cols), uint64(in.res))
		if err := in.r.badFn.Launch(gridFor(int64(rows)*int64(cols), 256), 1, 1, 256, 1, 1, 0, in.main, args); err != nil {
			return fmt.Errorf("launch count_bad: %w", err)
		}
		if err := in.main.Synchronize(); err != nil {
			return fmt.Errorf("synchronize: %w", err)
		}
		if err := in.team.CheckTimeout(); err != nil {
			return err
		}
		if err := in.r.FusedFailed(cfg); err != nil {
			return err
		}
		return cu.MemcpyDtoH(unsafe.Pointer(&res[0]), in.res, 8*4)
	})
	if err != nil {
		return sdk.VerifyResult{}, fmt.Errorf("rank %d: %w", in.team.Rank(), err)
	}
	num, den, badSampled, bad := res[0], res[1], res[2], res[3]
	rel := math.Inf(1)
	if bad == 0 && badSampled == 0 && den > 0 {
		rel = math.Sqrt(num / den)
	}
	r := sdk.VerifyResult{RelErr: rel, OK: bad == 0 && badSampled == 0 && rel <= in.tolerance()}
	_, rows, cols := in.output()
	switch {
	case bad > 0:
		r.Detail = fmt.Sprintf("rank %d: %.0f of %d outputs NaN/Inf (unwritten or wrong)", in.team.Rank(), bad, rows*cols)
	case !r.OK:
		r.Detail = fmt.Sprintf("rank %d: rel err %.3g over tolerance %.0e on %d sampled rows", in.team.Rank(), rel, in.tolerance(), nSamples)
	}
	return r, nil
}

func (in *instance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	cfg, err := in.parse(c)
	if err != nil {
		return nil, err
	}
	mode, err := cudamem.TimingRequested(string(sdk.TimingOf(ctx)))
	if err != nil {
		return nil, err
	}
	var times []float64
	err = in.team.Do(func() error {
		if err := in.prepare(cfg); err != nil {
			return err
		}
		// Real data, never zeros or another config's leftovers.
		if err := in.fill(0x5eed); err != nil {
			return err
		}
		// Time's barrier precedes the first call.
		if err := in.r.ClearFlags(in.main); err != nil {
			return err
		}
		if err := in.r.Reset(in.main); err != nil {
			return err
		}
		var err error
		if times, err = in.team.TimeAs(mode, in.main, warmup, iters, func() error { return in.call(cfg) }); err != nil {
			return err
		}
		if err := in.r.FusedFailed(cfg); err != nil {
			return err
		}
		if dir := os.Getenv("SYMMTUNE_TRACE"); dir != "" {
			return in.traceCall(cfg, dir, c.String())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", in.team.Rank(), err)
	}
	return times, nil
}

// traceCall runs one more call with its steps timed (see tracer).
func (in *instance) traceCall(c Config, dir, name string) error {
	t0, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return err
	}
	in.r.trace = &tracer{t0: t0}
	defer func() { in.r.trace = nil }()
	if err := in.team.Barrier(in.main); err != nil {
		return err
	}
	if err := t0.Record(in.main); err != nil {
		return err
	}
	if err := in.r.Enqueue(c, in.main, in.ptrs()); err != nil {
		return err
	}
	if err := in.main.Synchronize(); err != nil {
		return err
	}
	file := fmt.Sprintf("trace-%s-w%d-r%d.txt", in.k.Variant, in.team.World(), in.team.Rank())
	return in.r.trace.write(dir, name, file)
}

// spanSamples lists, for each span, its first and last row and one row in
// between drawn from seed: every chunk of every shard is checked, edges
// included. row maps a span's row to the sample's (output row, A row,
// first source rank, source count).
func spanSamples(spans []Span, seed uint64, row func(g int) [4]uint64) []uint64 {
	var out []uint64
	for i, s := range spans {
		rows := []int{s.Start, s.Start + s.Rows - 1}
		if s.Rows > 2 {
			// A row in between, drawn from seed (sdk.Uniform is in [-1, 1)).
			u := (sdk.Uniform(seed, -1, int64(i)) + 1) / 2
			rows = append(rows, s.Start+1+min(int(u*float64(s.Rows-2)), s.Rows-3))
		}
		for _, g := range rows[:min(len(rows), s.Rows)] {
			v := row(g)
			out = append(out, v[:]...)
		}
	}
	return out
}

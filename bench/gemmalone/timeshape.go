//go:build cuda

package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// shape runs one shape: its inputs, cuBLASLt's references (timed, checked,
// and the first of them profiled), then each tile checked against the
// float64 reference and timed between the references, one CSV row per
// tile and launch mode (and -rs's two rows after it).
func (b *bench) shape(sh shape, tiles []hopper.Tile, iters, warmup int) error {
	buf, err := b.inputs(sh)
	if err != nil {
		return err
	}
	defer buf.free()
	label := fmt.Sprintf("%dx%dx%d", sh.m, sh.n, sh.k)
	flops := 2 * float64(sh.m) * float64(sh.n) * float64(sh.k)

	// cuBLASLt first: its time is the ratio's denominator, and its check
	// shows the checker itself passes a known-good product. The reference
	// is the fastest of cuBLASLt's first four algorithms for B stored
	// [K, N] (torch's cuBLAS picks its own; bench/experiments/mm_baseline.py
	// times that). With -fp8-ref-only an FP8 run times cuBLASLt's FP8
	// product alone.
	var refs []*ltRef
	if !fp8(b.dtype) || !fp8RefOnly {
		ref, err := b.ltBest(sh, label, refImpl(false), cublaslt.Matmul{M: sh.m, N: sh.n, K: sh.k, DType: b.lt16, Workspace: wsBytes},
			b.u16, buf.a, buf.bKN, 0, 0, buf.c, flops, iters, warmup)
		if err != nil {
			return err
		}
		defer ref.plan.Close()
		refs = append(refs, ref)
	}
	if fp8(b.dtype) {
		if ref8 := b.ltFP8(sh, label, buf, flops, iters, warmup, !fp8RefOnly); ref8 != nil {
			defer ref8.plan.Close()
			refs = append(refs, ref8)
		}
	} else if withBT {
		// The pipelines' products read B stored [N, K]: the same first four
		// algorithms of that layout, for comparison only (the ratios stay
		// to the [K, N] reference, as in earlier tables).
		if err := b.ltRows(sh, buf, label, flops, iters, warmup); err != nil {
			return err
		}
	}
	if len(refs) == 0 {
		return fmt.Errorf("%s: -fp8-ref-only and no cuBLASLt FP8 product of these scales: nothing to time the tiles against", label)
	}
	// The first reference is the bf16 one where timed (ratio_to_cublaslt).
	if err := b.profiled(refs[0].call, fmt.Sprintf("%s %s algo%d", label, refImpl(refs[0].fp8), refs[0].algo)); err != nil {
		return err
	}
	// The references are timed around each tile, the bf16 one outermost.
	infos := make([]refInfo, len(refs))
	for i, r := range refs {
		infos[i] = refInfo{fp8: r.fp8, algo: r.algo}
	}

	def, err := untunedTile(sh, b.dtype, b.dev)
	if err != nil {
		return err
	}
	// The untuned tile of the shape, for the tables (bench/gemmalone_table.py).
	fmt.Printf("# default %s %s: %s\n", label, b.dtype, def)
	for _, t := range tilesFor(tiles, def) {
		row := func(format string, a ...any) {
			fmt.Printf("%s,fused,%s,"+format+"\n", append([]any{label, t}, a...)...)
		}
		skip := func(msg string) { row("-,-,-,-,%s,%s,-,-", cell(msg), b.dtype) }
		if err := t.CheckFormat(b.format); err != nil {
			skip("skipped: " + err.Error())
			continue
		}
		if err := t.CheckShapeFor(b.format, sh.n, sh.k); err != nil {
			skip("skipped: " + err.Error())
			continue
		}
		if why := splitKSkip(t, sh, b.dev.SMs); why != "" {
			// A comment, not a row: such shapes are not the tile's to win.
			fmt.Printf("# %s %s not timed: %s\n", label, t, why)
			continue
		}
		g, err := gpu.CompileFusedWith(b.comp, t, b.format, extraOpts)
		if err != nil {
			skip(err.Error())
			continue
		}
		work, err := allocWork(g, sh, b.dev.SMs)
		if err != nil {
			g.Close()
			return fmt.Errorf("%s: %w", t, err)
		}
		closeTile := func() { work.free(); g.Close() }
		spill, _ := g.Spills()
		a, bmat, u := buf.a, buf.bNK, b.u16
		if !t.BKMajor {
			bmat = buf.bKN
		}
		if fp8(b.dtype) {
			a, bmat, u = buf.a8, buf.b8, b.u8
		}
		ops, err := g.Maps(a, bmat, buf.c, sh.m, sh.n, sh.k)
		if err != nil {
			closeTile()
			return err
		}
		ops.ScaleA, ops.ScaleB = buf.sa, buf.sb
		ops.Work = work.SplitKWork
		call := func() error { return g.Launch(b.stream, ops, buf.c, b.dev.SMs, gpu.Comm{}) }
		rel, err := b.verifyTile(sh, u, buf.c, call, t)
		if err != nil {
			closeTile()
			return fmt.Errorf("%s: %w", t, err)
		}
		if math.IsInf(rel, 1) || rel > tolerance(b.dtype) {
			row("%d,%.2e,-,-,WRONG,%s,-,-", spill, rel, b.dtype)
			closeTile()
			continue
		}
		for _, dependent := range launchModes {
			impl := implOf(dependent)
			g.PlainLaunch = !dependent
			if dependent {
				// The plain check above ran it after a memset, a plain
				// launch: this one runs it right after a kernel that writes A.
				if rel, err = b.verifyDependent(sh, u, buf, call); err != nil {
					closeTile()
					return fmt.Errorf("%s %s: %w", t, impl, err)
				}
				if math.IsInf(rel, 1) || rel > tolerance(b.dtype) {
					fmt.Printf("%s,%s,%s,%d,%.2e,-,-,WRONG,%s,-,-\n", label, impl, t, spill, rel, b.dtype)
					continue
				}
			}
			us, kernel, around, err := b.bracketed(call, refs, iters, warmup)
			if err == nil && t.Shares() {
				// After hundreds of launches, each starting from the counts
				// the one before left (split-K's and stream-K's alike).
				var after float64
				if after, err = b.verify(sh, u, buf.c, call); err == nil && (math.IsInf(after, 1) || after > tolerance(b.dtype)) {
					fmt.Printf("%s,%s,%s,%d,%.2e,-,-,WRONG after the timed launches,%s,-,-\n", label, impl, t, spill, after, b.dtype)
					continue
				}
			}
			if err == nil {
				err = b.profiled(call, fmt.Sprintf("%s %s %s", label, impl, t))
			}
			if err != nil {
				closeTile()
				return err
			}
			c := cellsOf(infos, around, us)
			fmt.Printf("%s,%s,%s,%d,%.2e,%.1f,%.0f,%s (%s algo%d %.1f/%.1f%s; grid %d),%s,%s,%s\n", label, impl, t, spill, rel, us, flops/us/1e6,
				c.ratio, c.name, c.algo, c.before, c.after, kernelNote(kernelOutside, kernel), g.Grid(sh.m, sh.n, b.dev.SMs), b.dtype, c.fp8Us, c.fp8Ratio)
		}
		closeTile()
		if withRS && t.KSplits() == 1 { // split-K tiles run plain products only
			for _, regs := range []bool{false, true} {
				if err := b.rsRow(sh, t, buf, flops, iters, warmup, refs, infos, regs, row); err != nil {
					return fmt.Errorf("%s with the reduce-scatter's epilogue: %w", t, err)
				}
			}
		}
	}
	return nil
}

// profiled launches call -profile times in a profiled range of its own
// (cuProfilerStart to cuProfilerStop, the stream drained before and
// after), saying so in a "# profiled WHAT: N launches" line; nothing
// without -profile. Only these launches are profiled under ncu
// --profile-from-start off, none of the checks' or timings'.
func (b *bench) profiled(call func() error, what string) error {
	if profileN == 0 {
		return nil
	}
	if err := b.stream.Synchronize(); err != nil {
		return err
	}
	if err := cu.ProfilerStart(); err != nil {
		return err
	}
	var err error
	for i := 0; i < profileN && err == nil; i++ {
		err = call()
	}
	if err == nil {
		err = b.stream.Synchronize()
	}
	if err = errors.Join(err, cu.ProfilerStop()); err != nil {
		return fmt.Errorf("profiled %s: %w", what, err)
	}
	fmt.Printf("# profiled %s: %d launches\n", what, profileN)
	return nil
}

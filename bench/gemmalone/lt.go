//go:build cuda

package main

import (
	"fmt"
	"math"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
)

// ltRef is a cuBLASLt product the fused tiles are timed against: the
// fastest of the first four algorithms its plan ranks.
type ltRef struct {
	plan *cublaslt.Plan
	algo int
	call func() error
	fp8  bool // cuBLASLt's FP8 product (ltFP8's reference)
}

// ltBest verifies and times the first four algorithms of m's plan (rows
// impl,algoN) and returns the fastest that passes the check against u's
// reference; scales sa and sb are 0 for unscaled products.
func (b *bench) ltBest(sh shape, label, impl string, m cublaslt.Matmul, u *util, a, bm, sa, sb, c cu.DevicePtr, flops float64, iters, warmup int) (*ltRef, error) {
	plan, err := b.lt.Plan(m)
	if err != nil {
		return nil, err
	}
	best, bestUs := -1, math.Inf(1)
	call := func(algo int) func() error {
		return func() error { return plan.RunScaled(b.stream, algo, a, bm, c, b.ws, sa, sb) }
	}
	for algo := 0; algo < min(4, plan.Algos()); algo++ {
		rel, err := b.verify(sh, u, c, call(algo))
		if err != nil {
			plan.Close()
			return nil, fmt.Errorf("%s algo %d: %w", impl, algo, err)
		}
		if math.IsInf(rel, 1) || rel > tolerance(u.dtype) {
			fmt.Printf("%s,%s,algo%d,-,%.2e,-,-,WRONG,%s,-,-\n", label, impl, algo, rel, u.dtype)
			continue
		}
		us, err := b.timeSurvey(call(algo), iters, warmup)
		if err != nil {
			plan.Close()
			return nil, err
		}
		fmt.Printf("%s,%s,algo%d,-,%.2e,%.1f,%.0f,-,%s,-,-\n", label, impl, algo, rel, us, flops/us/1e6, u.dtype)
		if us < bestUs {
			best, bestUs = algo, us
		}
	}
	if best < 0 {
		plan.Close()
		return nil, fmt.Errorf("%s (%s): none of the first %d algorithms passes the check", impl, m, min(4, plan.Algos()))
	}
	return &ltRef{plan: plan, algo: best, call: call(best)}, nil
}

// ltFP8 is cuBLASLt's FP8 product of the run's scales, B stored [N, K]:
// rows cublaslt-fp8 with fast accumulation (the fused kernel's; the
// reference it returns) and, with compare, cublaslt-fp8-fp32acc without
// (for comparison).
// Without an FP8 product in this cuBLASLt (row scales need 12.9) it says
// so in a comment line and returns nil: the fused rows go on without it.
func (b *bench) ltFP8(sh shape, label string, buf *buffers, flops float64, iters, warmup int, compare bool) *ltRef {
	scaling := cublaslt.TensorScales
	if b.format.RowScales {
		scaling = cublaslt.RowScales
	}
	var ref *ltRef
	modes := []bool{true}
	if compare {
		modes = append(modes, false)
	}
	for _, fast := range modes {
		m := cublaslt.Matmul{M: sh.m, N: sh.n, K: sh.k, DType: cublaslt.E4M3, Out: cublaslt.BF16, Scaling: scaling,
			FastAccum: fast, BT: true, Workspace: wsBytes}
		impl := refImpl(true)
		if !fast {
			impl += "-fp32acc"
		}
		r, err := b.ltBest(sh, label, impl, m, b.u8, buf.a8, buf.b8, buf.sa, buf.sb, buf.c, flops, iters, warmup)
		if err != nil {
			fmt.Printf("# %s %s: %s\n", label, impl, cell(err.Error()))
			continue
		}
		if fast {
			r.fp8 = true
			ref = r
		} else {
			r.plan.Close()
		}
	}
	return ref
}

// ltRows verifies and times cuBLASLt's first four algorithms for B stored
// [N, K] (rows "cublaslt-bt").
func (b *bench) ltRows(sh shape, buf *buffers, label string, flops float64, iters, warmup int) error {
	plan, err := b.lt.Plan(cublaslt.Matmul{M: sh.m, N: sh.n, K: sh.k, DType: b.lt16, BT: true, Workspace: wsBytes})
	if err != nil {
		return err
	}
	defer plan.Close()
	for a := 0; a < min(4, plan.Algos()); a++ {
		call := func() error { return plan.Run(b.stream, a, buf.a, buf.bNK, buf.c, b.ws) }
		rel, err := b.verify(sh, b.u16, buf.c, call)
		if err != nil {
			return fmt.Errorf("cublaslt [N, K] algo %d: %w", a, err)
		}
		if math.IsInf(rel, 1) || rel > tolerance(b.u16.dtype) {
			return fmt.Errorf("cublaslt [N, K] algo %d: relative error %.2e over tolerance", a, rel)
		}
		us, err := b.timeSurvey(call, iters, warmup)
		if err != nil {
			return err
		}
		fmt.Printf("%s,cublaslt-bt,algo%d,-,%.2e,%.1f,%.0f,-,%s,-,-\n", label, a, rel, us, flops/us/1e6, b.u16.dtype)
	}
	return nil
}

package main

import "fmt"

// refImpl is a cuBLASLt reference's impl in the rows: cublaslt for the
// bf16 (or f16) product, cublaslt-fp8 for the FP8 one (fast accumulation).
func refImpl(fp8 bool) string {
	if fp8 {
		return "cublaslt-fp8"
	}
	return "cublaslt"
}

// refInfo is what a row's cells need of one cuBLASLt reference timed around
// it: whether it is the FP8 product (fast accumulation), and its algorithm.
type refInfo struct {
	fp8  bool
	algo int
}

// refCells are a timed row's reference columns, from the references timed
// around it (bracketed's around, in refs' order):
//   - ratio: cuBLASLt bf16's (or f16's) mean over the row's time, "-" where
//     that product was not timed (-fp8-ref-only);
//   - name, algo, before, after: the reference whose times the ratio
//     column's note shows, the bf16 one where timed, else the FP8 one;
//   - fp8Us, fp8Ratio: cuBLASLt FP8's mean and its ratio to the row's time,
//     "-" without an FP8 product.
type refCells struct {
	ratio           string
	name            string
	algo            int
	before, after   float64
	fp8Us, fp8Ratio string
}

func cellsOf(refs []refInfo, around [][2]float64, us float64) refCells {
	c := refCells{ratio: "-", fp8Us: "-", fp8Ratio: "-"}
	for i, r := range refs {
		mean := (around[i][0] + around[i][1]) / 2
		if r.fp8 {
			c.fp8Us, c.fp8Ratio = fmt.Sprintf("%.1f", mean), fmt.Sprintf("%.3f", mean/us)
			if c.name == "" {
				c.name, c.algo, c.before, c.after = refImpl(true), r.algo, around[i][0], around[i][1]
			}
			continue
		}
		c.ratio = fmt.Sprintf("%.3f", mean/us)
		c.name, c.algo, c.before, c.after = refImpl(false), r.algo, around[i][0], around[i][1]
	}
	return c
}

// bracketSteps is the order bracketed times a row's kernel and its
// references in: -1 is the row's kernel, i the i-th reference. By default
// the references go around the kernel, mirrored (0..n-1, kernel, n-1..0);
// with kernelOutside the kernel goes around the references (kernel,
// 0..n-1, kernel). At a power cap a kernel timed right after another can
// run at the clock the other left (2026-12-06-h100-fp8-method.md: cuBLASLt
// FP8 after our row-scale kernel ran 2.7% slower than before it), so paired
// rounds of both orders time each kernel after the other as often.
func bracketSteps(nrefs int, kernelOutside bool) []int {
	steps := make([]int, 0, 2*nrefs+2)
	if kernelOutside {
		steps = append(steps, -1)
		for i := 0; i < nrefs; i++ {
			steps = append(steps, i)
		}
		return append(steps, -1)
	}
	for i := 0; i < nrefs; i++ {
		steps = append(steps, i)
	}
	steps = append(steps, -1)
	for i := nrefs - 1; i >= 0; i-- {
		steps = append(steps, i)
	}
	return steps
}

// bracketTimes folds the times of bracketSteps' steps (times[j] is step
// j's) into bracketed's results: the row's kernel's mean and its first and
// last times, and each reference's first and last (the same time twice
// where it ran once).
func bracketTimes(steps []int, times []float64, nrefs int) (us float64, kernel [2]float64, around [][2]float64) {
	around = make([][2]float64, nrefs)
	seen := make([]bool, nrefs)
	var ks []float64
	for j, s := range steps {
		if s < 0 {
			ks = append(ks, times[j])
			continue
		}
		if !seen[s] {
			around[s][0], seen[s] = times[j], true
		}
		around[s][1] = times[j]
	}
	for _, t := range ks {
		us += t
	}
	us /= float64(len(ks))
	return us, [2]float64{ks[0], ks[len(ks)-1]}, around
}

// kernelNote is the row's note on its kernel's own two times where it was
// timed around the references (-kernel-outside), else nothing.
func kernelNote(kernelOutside bool, kernel [2]float64) string {
	if !kernelOutside {
		return ""
	}
	return fmt.Sprintf("; kernel %.1f/%.1f", kernel[0], kernel[1])
}

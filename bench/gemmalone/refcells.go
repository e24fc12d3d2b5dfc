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

package gemmtest

import (
	"slices"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// FusedVsSequential times c in both impls on the same instances, rounds
// times, alternating fused and sequential in every round so that load
// from other processes falls on both alike. Each timed iteration scores as
// its slowest rank, as the host scores trials. It returns the median
// fused and sequential times in microseconds.
func FusedVsSequential(tb testing.TB, insts []sdk.Instance, c space.Config, rounds, iters int) (fused, seq float64) {
	tb.Helper()
	var f, s []float64
	for i := 0; i < rounds; i++ {
		for _, impl := range []string{gemm.Fused, gemm.Sequential} {
			ci := c.Clone()
			ci[gemm.ParamImpl] = space.Str(impl)
			times := Bench(tb, insts, ci, 1, iters)
			for it := 0; it < iters; it++ {
				worst := 0.0
				for r := range times {
					worst = max(worst, times[r][it])
				}
				if impl == gemm.Fused {
					f = append(f, worst)
				} else {
					s = append(s, worst)
				}
			}
		}
	}
	return median(f), median(s)
}

func median(x []float64) float64 {
	slices.Sort(x)
	return x[len(x)/2]
}

package gemmtest

import (
	"fmt"
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

// BenchFusedVsSequential reports, as benchmark metrics, k's fused and
// sequential times and the fused kernel's speedup (sequential time / fused
// time) for a few tile configs at m=512,n=256,k=128 and worlds 2 and 4,
// ranks as goroutines of this process. Meant for -benchtime 1x.
func BenchFusedVsSequential(b *testing.B, k sdk.Kernel) {
	for _, world := range []int{2, 4} {
		p := space.Problem{Shape: space.Shape{"m": 512, "n": 256, "k": 128}, Dtype: "f32"}
		insts := Open(b, k, p, world)
		for _, c := range []space.Config{
			Cfg(32, 128, 32, 1, 64, 1, ""),
			Cfg(64, 128, 64, 1, 64, 2, ""),
			Cfg(32, 64, 64, 1, 32, 1, ""),
		} {
			b.Run(fmt.Sprintf("w%d/bm%d-bn%d-bk%d-gm%d-cbm%d-t%d", world, c["block_m"].Int, c["block_n"].Int,
				c["block_k"].Int, c["group_m"].Int, c["comm_block_m"].Int, c["threads"].Int), func(b *testing.B) {
				for b.Loop() {
					f, s := FusedVsSequential(b, insts, c, 10, 5)
					b.ReportMetric(f, "fused-µs")
					b.ReportMetric(s, "seq-µs")
					b.ReportMetric(s/f, "speedup")
				}
			})
		}
	}
}

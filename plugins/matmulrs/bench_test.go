package main

import (
	"fmt"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/gemmtest"
	"github.com/symmtune/symmtune/space"
)

// BenchmarkFusedVsSequential reports the fused kernel's speedup over the
// sequential one (sequential time / fused time, slowest rank per
// iteration, medians) for a few tile configs at m=512,n=256,k=128, ranks
// as goroutines of this process: run with -benchtime 1x.
func BenchmarkFusedVsSequential(b *testing.B) {
	for _, world := range []int{2, 4} {
		p := space.Problem{Shape: space.Shape{"m": 512, "n": 256, "k": 128}, Dtype: "f32"}
		insts := gemmtest.Open(b, cpuKernel{}, p, world)
		for _, c := range []space.Config{
			gemmtest.Cfg(32, 128, 32, 1, 64, 1, ""),
			gemmtest.Cfg(64, 128, 64, 1, 64, 2, ""),
			gemmtest.Cfg(32, 64, 64, 1, 32, 1, ""),
		} {
			b.Run(fmt.Sprintf("w%d/bm%d-bn%d-bk%d-gm%d-cbm%d-t%d", world, c["block_m"].Int, c["block_n"].Int,
				c["block_k"].Int, c["group_m"].Int, c["comm_block_m"].Int, c["threads"].Int), func(b *testing.B) {
				for b.Loop() {
					f, s := gemmtest.FusedVsSequential(b, insts, c, 10, 5)
					b.ReportMetric(f, "fused-µs")
					b.ReportMetric(s, "seq-µs")
					b.ReportMetric(s/f, "speedup")
				}
			})
		}
	}
}

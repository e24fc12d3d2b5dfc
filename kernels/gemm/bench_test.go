package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkMulTile reports the single-thread throughput of the CPU tile
// kernel for a 256×256×256 product in tiles of bm × bn, k blocked by bk.
func BenchmarkMulTile(b *testing.B) {
	const m, n, k = 256, 256, 256
	A := NewMat(make([]float32, m*k), m, k)
	B := NewMat(make([]float32, k*n), k, n)
	C := NewMat(make([]float32, m*n), m, n)
	Fill(A.Data, 1, 0)
	Fill(B.Data, 1, StreamB)
	for _, t := range []struct{ bm, bn, bk int }{{16, 32, 32}, {32, 64, 64}, {64, 128, 128}, {128, 128, 32}, {32, 128, 128}} {
		b.Run(fmt.Sprintf("%dx%dx%d", t.bm, t.bn, t.bk), func(b *testing.B) {
			acc := make([]float32, t.bm*t.bn)
			for b.Loop() {
				for i := 0; i < m; i += t.bm {
					for j := 0; j < n; j += t.bn {
						MulTile(C.Sub(i, j, t.bm, t.bn), A.Sub(i, 0, t.bm, k), B.Sub(0, j, k, t.bn), t.bk, acc)
					}
				}
			}
			b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

package gemm

import (
	"math"

	"github.com/symmtune/symmtune/sdk"
)

// Inputs. Every element comes from sdk.Uniform, so each rank regenerates
// any rank's input from the seed alone and builds its float64 reference
// without exchanging data; the CUDA kernels fill their inputs the same way.
//
//   - matmulrs: rank r's A_r [M, K] has element i = Uniform(seed, r, i).
//   - agmm: rank r's shard of A, rows [r*M/W, (r+1)*M/W) as a
//     [M/W, K] matrix, has element i = Uniform(seed, r, i).
//   - both: B [K, N], the same on every rank, has element i =
//     Uniform(seed, StreamB, i).

// StreamB is the rank argument of sdk.Uniform that generates B. It lies far
// beyond any world size, so B never repeats a rank's A.
const StreamB = 1 << 16

// Tolerance is the largest relative Frobenius error an f32 output may have
// against the float64 reference.
const Tolerance = 1e-4

// Fill sets dst[i] = float32(Uniform(seed, stream, i)) for i < len(dst).
func Fill(dst []float32, seed uint64, stream int) {
	for i := range dst {
		dst[i] = float32(sdk.Uniform(seed, stream, int64(i)))
	}
}

// input64 is the float64 value of an f32 input element: the reference
// multiplies exactly the values the kernel was given.
func input64(seed uint64, stream int, i int64) float64 {
	return float64(float32(sdk.Uniform(seed, stream, i)))
}

func fillB64(seed uint64, d Dims) []float64 {
	b := make([]float64, d.K*d.N)
	for i := range b {
		b[i] = input64(seed, StreamB, int64(i))
	}
	return b
}

// RefMatmulRS is rank's output of matmulrs in float64: rows
// [rank*M/W, (rank+1)*M/W) of Σ_r A_r·B, an [M/W, N] matrix. It sums the
// ranks' A rows first, (Σ_r A_r)·B, which is world times cheaper than
// summing the products and equal up to float64 rounding.
func RefMatmulRS(seed uint64, d Dims, world, rank int) []float64 {
	rows := d.M / world
	sum := make([]float64, rows*d.K)
	base := int64(rank*rows) * int64(d.K)
	for r := 0; r < world; r++ {
		for i := range sum {
			sum[i] += input64(seed, r, base+int64(i))
		}
	}
	return MatMul64(sum, fillB64(seed, d), rows, d.N, d.K)
}

// RefAllGatherMatmul is every rank's output of agmm in float64: the full
// C = A·B [M, N], A assembled from all world shards.
func RefAllGatherMatmul(seed uint64, d Dims, world int) []float64 {
	rows := d.M / world
	a := make([]float64, d.M*d.K)
	for r := 0; r < world; r++ {
		shard := a[r*rows*d.K : (r+1)*rows*d.K]
		for i := range shard {
			shard[i] = input64(seed, r, int64(i))
		}
	}
	return MatMul64(a, fillB64(seed, d), d.M, d.N, d.K)
}

// MatMul64 returns a·b for row-major a [m, k] and b [k, n]. The i-k-j loop
// streams rows of b, which is what makes the reference cheap enough to run
// on every verify call.
func MatMul64(a, b []float64, m, n, k int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		crow := c[i*n : i*n+n]
		for kk, av := range a[i*k : i*k+k] {
			brow := b[kk*n : kk*n+n]
			for j := range crow {
				crow[j] += av * brow[j]
			}
		}
	}
	return c
}

// RelErr is the relative Frobenius error of an f32 output against its
// float64 reference; a NaN left by a missed tile (outputs are poisoned
// before every verify run) makes it +Inf.
func RelErr(got []float32, ref []float64) float64 {
	if len(got) != len(ref) {
		return math.Inf(1)
	}
	g := make([]float64, len(got))
	for i, v := range got {
		g[i] = float64(v)
	}
	return sdk.RelErr(g, ref)
}

// Poison fills x with NaN, so any element a kernel fails to write fails
// verification.
func Poison(x []float32) {
	nan := float32(math.NaN())
	for i := range x {
		x[i] = nan
	}
}

// Package matmulrs is symmtune's fused matmul + reduce-scatter on the CPU
// shared-memory backend. Every rank r holds A_r [M, K] and the same
// B [K, N]; rank r's output is rows [r*M/W, (r+1)*M/W) of Σ_r A_r·B. Its
// space, shape rules, tile swizzle and verification are the GEMM family's,
// in kernels/gemm; the GPU kernel is kernels/gemm/gpu's (gpu.MatmulRS).
// plugins/matmulrs serves CPU, or the GPU kernel when built with -tags cuda.
package matmulrs

import "github.com/symmtune/symmtune/kernels/gemm"

// CPU is matmulrs on the CPU shared-memory backend (cpu.go): what
// plugins/matmulrs serves when built without tags.
func CPU() gemm.CPUKernel { return cpuKernel }

// ownerOrder is the order in which a rank computes the row blocks of its
// partial product in the fused kernel, by owner: the next rank's rows
// first, its own rows last. At every step the ranks work for different
// owners, so no owner's buffer is the target of everyone at once, and an
// owner's last contribution is its own, arriving block by block while it
// reduces the blocks that are already complete: the reduction of block j
// overlaps the GEMM of block j+1.
func ownerOrder(rank, world int) []int {
	out := make([]int, world)
	for s := range out {
		out[s] = (rank + 1 + s) % world
	}
	return out
}

// Command symmtune-plugin-matmulrs is symmtune's fused matmul +
// reduce-scatter plugin. Every rank r holds A_r [M, K] and the same
// B [K, N]; rank r's output is rows [r*M/W, (r+1)*M/W) of Σ_r A_r·B. The
// host starts one process per rank. Built without tags (main_cpu.go) it
// runs on the CPU shared-memory backend; its space, shape rules, tile
// swizzle and verification live in kernels/gemm. Built with -tags cuda
// (main_cuda.go) it serves the GPU kernel of kernels/gemm/gpu on CUDA IPC
// memory.
package main

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

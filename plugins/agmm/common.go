// Command symmtune-plugin-agmm is symmtune's fused all-gather + matmul
// plugin. Rank r holds rows [r*M/W, (r+1)*M/W) of A and all of B [K, N];
// every rank computes the full C = A·B [M, N]. The space, the shape rules,
// the tile swizzle and the verification live in kernels/gemm so the CUDA
// build (main_cuda.go, later) tunes the same parameters and is checked the
// same way. Built without tags it runs on the CPU shared-memory backend;
// the host starts one process per rank.
package main

// shardOrder is the order in which a rank consumes the ranks' shards of A
// in the fused kernel: its own first (it needs no communication, so the
// GEMM starts at once), then the next ranks in turn. The rank pivot means
// that at any moment the ranks read different peers, instead of all of
// them reading rank 0's shard together.
func shardOrder(rank, world int) []int {
	out := make([]int, world)
	for s := range out {
		out[s] = (rank + s) % world
	}
	return out
}

// Command symmtune-plugin-agmm is symmtune's fused all-gather + matmul
// plugin. Rank r holds rows [r*M/W, (r+1)*M/W) of A and all of B [K, N];
// every rank computes the full C = A·B [M, N]. The host starts one process
// per rank. Built without tags (main_cpu.go) it runs on the CPU
// shared-memory backend; its space, shape rules, tile swizzle and
// verification live in kernels/gemm. Built with -tags cuda (main_cuda.go)
// it serves the GPU kernel of kernels/gemm/gpu on CUDA IPC memory.
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

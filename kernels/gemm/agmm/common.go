// Package agmm is symmtune's fused all-gather + matmul on the CPU
// shared-memory backend. Rank r holds rows [r*M/W, (r+1)*M/W) of A and all
// of B [K, N]; every rank computes the full C = A·B [M, N]. Its space,
// shape rules, tile swizzle and verification are the GEMM family's, in
// kernels/gemm; the GPU kernel is kernels/gemm/gpu's (gpu.AGMM).
// plugins/agmm serves CPU, or the GPU kernel when built with -tags cuda.
package agmm

import "github.com/symmtune/symmtune/kernels/gemm"

// CPU is agmm on the CPU shared-memory backend (cpu.go): what
// plugins/agmm serves when built without tags.
func CPU() gemm.CPUKernel { return cpuKernel }

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

package allreduce

import (
	"github.com/symmtune/symmtune/kernels/internal/srchash"
	"github.com/symmtune/symmtune/sdk"
)

// CPU is the all-reduce on the CPU shared-memory backend (cpu.go): what
// plugins/allreduce serves when built without tags.
func CPU() sdk.Kernel { return cpuKernel{} }

// The CPU kernel's version hashes cpu.go as it read in plugins/allreduce's
// package main, where it lived until 2026-11-25: the move changed only its
// package clause, so the version and the cache entries made with it stay
// (version_test.go pins it). Describe reads cpuSource after init.
func init() { cpuSource = srchash.AsMain(cpuSource) }

// The algorithms by the names cpu.go uses (it cannot be renamed without a
// new kernel version).
const (
	oneShot = OneShot // every rank reads all peers and reduces the whole vector
	twoShot = TwoShot // reduce-scatter through peers' buffers, then all-gather
)

// shardBounds returns the [lo, hi) elements that rank owns in a two-shot
// reduce-scatter of n elements over world ranks, each shard a multiple of
// align elements except possibly the last. Shards of uneven n stay balanced.
func shardBounds(n int64, world, rank int, align int64) (lo, hi int64) {
	units := (n + align - 1) / align
	lo = units * int64(rank) / int64(world) * align
	hi = units * int64(rank+1) / int64(world) * align
	if hi > n {
		hi = n
	}
	if lo > n {
		lo = n
	}
	return lo, hi
}

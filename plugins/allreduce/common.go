// Command symmtune-plugin-allreduce is symmtune's all-reduce (sum) plugin.
// Built without tags it runs on the CPU shared-memory backend; built with
// -tags cuda it is the CUDA plugin (bin/cuda/), with its own kernels, space
// and version. The host starts one process per rank.
package main

import "github.com/symmtune/symmtune/kernels/allreduce"

// Algorithms shared by both backends.
const (
	oneShot = allreduce.OneShot // every rank reads all peers and reduces the whole vector
	twoShot = allreduce.TwoShot // reduce-scatter through peers' buffers, then all-gather
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

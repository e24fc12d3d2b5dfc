package tuner

import (
	"cmp"
	"math"
	"slices"

	"github.com/symmtune/symmtune/space"
)

// unknownTrials stands for the trial count of a job with no trial budget
// when its cost is estimated: the strategy decides, typically a few dozen.
const unknownTrials = 64

// ExpectedCost is a rough, unitless estimate of a job's run time, made from
// the job alone so that every node of a fleet computes the same: trials ×
// ranks × (a fixed per-trial part + iterations × data size / 64 Ki). The
// data size of a shape with d dimensions is the (d-1)/d power of their
// product: n itself for an all-reduce, about one matrix for a GEMM's m,n,k
// (the product, the GEMM's flops, overrates its time against an all-reduce
// of as many elements: measured on the CPU kernels, configs/fleet-cpu.toml).
func ExpectedCost(j Job) float64 {
	j = j.withDefaults()
	trials := float64(j.BudgetTrials)
	if trials <= 0 {
		trials = unknownTrials
	}
	size := 1.0
	if sh, err := space.ParseShape(j.ShapeText, nil); err == nil && len(sh) > 0 {
		for _, v := range sh {
			size *= float64(v)
		}
		if d := float64(len(sh)); d > 1 {
			size = math.Pow(size, (d-1)/d)
		}
	}
	return trials * float64(j.World) * (1 + float64(j.Warmup+j.Iters)*size/65536)
}

// Shards assigns each job to one of count shards, balancing the expected
// cost: largest job first, each onto the shard with the least cost so far
// (ties: the lower shard). It depends only on the jobs and their order, so
// every node assigns alike, and each job lands in exactly one shard.
// shard[i] is job i's shard, 0-based.
func Shards(jobs []Job, count int) []int {
	order := make([]int, len(jobs))
	cost := make([]float64, len(jobs))
	for i, j := range jobs {
		order[i], cost[i] = i, ExpectedCost(j)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	load := make([]float64, count)
	shard := make([]int, len(jobs))
	for _, i := range order {
		s := 0
		for k := range load {
			if load[k] < load[s] {
				s = k
			}
		}
		shard[i] = s
		load[s] += cost[i]
	}
	return shard
}

// Shard returns the jobs of shard index (0-based) of count, in file order.
func Shard(jobs []Job, index, count int) []Job {
	var out []Job
	for i, s := range Shards(jobs, count) {
		if s == index {
			out = append(out, jobs[i])
		}
	}
	return out
}

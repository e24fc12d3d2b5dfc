package tuner

import (
	"cmp"
	"slices"

	"github.com/symmtune/symmtune/space"
)

// unknownTrials stands for the trial count of a job with no trial budget
// when its cost is estimated: the strategy decides, typically a few dozen.
const unknownTrials = 64

// ExpectedCost is a rough, unitless estimate of a job's run time, made from
// the job alone so that every node of a fleet computes the same: trials ×
// ranks × (a fixed per-trial part + iterations × problem size / 64 Ki),
// where the problem size is the product of the shape's dimensions.
func ExpectedCost(j Job) float64 {
	j = j.withDefaults()
	trials := float64(j.BudgetTrials)
	if trials <= 0 {
		trials = unknownTrials
	}
	size := 1.0
	if sh, err := space.ParseShape(j.ShapeText, nil); err == nil {
		for _, v := range sh {
			size *= float64(v)
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

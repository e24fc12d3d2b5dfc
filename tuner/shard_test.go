package tuner

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func randomJobs(r *rand.Rand) []Job {
	jobs := make([]Job, r.IntN(40))
	for i := range jobs {
		jobs[i] = Job{
			Kernel: []string{"allreduce", "matmulrs"}[r.IntN(2)], World: 1 << r.IntN(4), Dtype: "f32",
			ShapeText:    fmt.Sprintf("n=%d", 1<<r.IntN(24)),
			BudgetTrials: []int{0, 10, 40}[r.IntN(3)], Iters: r.IntN(30), Warmup: r.IntN(4),
		}
		if r.IntN(4) == 0 {
			jobs[i].ShapeText = fmt.Sprintf("m=%d,n=%d,k=%d", 1<<r.IntN(10), 1<<r.IntN(10), 1<<r.IntN(10))
		}
	}
	return jobs
}

// TestShardsCoverEveryJobOnce: for any job list and shard count, the shards
// together hold every job exactly once, the same on every call, and no
// shard's expected cost exceeds another's by more than the largest job.
func TestShardsCoverEveryJobOnce(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 3))
		jobs := randomJobs(r)
		for count := 1; count <= 9; count++ {
			var all []Job
			load := make([]float64, count)
			for k := range count {
				shard := Shard(jobs, k, count)
				all = append(all, shard...)
				for _, j := range shard {
					load[k] += ExpectedCost(j)
				}
				if again := Shard(jobs, k, count); !slices.EqualFunc(shard, again, func(a, b Job) bool { return a == b }) {
					t.Fatalf("seed %d: shard %d/%d differs between two calls", seed, k, count)
				}
			}
			if len(all) != len(jobs) {
				t.Fatalf("seed %d, %d shards: %d jobs in the shards, %d in the file", seed, count, len(all), len(jobs))
			}
			// Each job (by position) in exactly one shard.
			seen := make([]int, len(jobs))
			for i, s := range Shards(jobs, count) {
				if s < 0 || s >= count {
					t.Fatalf("seed %d: job %d in shard %d of %d", seed, i, s, count)
				}
				seen[i]++
			}
			for i, n := range seen {
				if n != 1 {
					t.Fatalf("seed %d: job %d assigned %d times", seed, i, n)
				}
			}
			largest := 0.0
			for _, j := range jobs {
				largest = max(largest, ExpectedCost(j))
			}
			if len(jobs) > 0 && slices.Max(load)-slices.Min(load) > largest*(1+1e-9) {
				t.Fatalf("seed %d, %d shards: loads %v differ by more than the largest job (%g)", seed, count, load, largest)
			}
		}
	}
}

func TestShardsOfTheQuickstart(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	jobs, err := LoadJobFile(filepath.Join(filepath.Dir(file), "..", "configs", "quickstart-cpu.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Shard(jobs, 0, 1); len(got) != len(jobs) {
		t.Fatalf("one shard holds %d of %d jobs", len(got), len(jobs))
	}
	// More shards than jobs: every job alone, the rest empty.
	n := len(jobs) + 2
	nonEmpty := 0
	for k := range n {
		switch s := Shard(jobs, k, n); len(s) {
		case 0:
		case 1:
			nonEmpty++
		default:
			t.Errorf("shard %d/%d holds %d jobs", k, n, len(s))
		}
	}
	if nonEmpty != len(jobs) {
		t.Errorf("%d non-empty shards, want %d", nonEmpty, len(jobs))
	}
}

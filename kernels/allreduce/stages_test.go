package allreduce

import (
	"strings"
	"testing"
)

// TestStagePlan: the pieces tile the message in order with no gap or
// overlap, every shard is within one vector of the others, and the plan is
// the kernel's formula (units*p/stages), so the copies the host enqueues
// move exactly what ALGO 6 reduced.
func TestStagePlan(t *testing.T) {
	for _, c := range []struct {
		nvec   int64
		world  int
		stages int64
	}{
		{8, 2, 1}, {8, 2, 4}, {12, 4, 3}, {1 << 20, 4, 16}, {4 * 1000003, 4, 8}, {8 * 7, 8, 7}, {2 * 5, 2, 5}, {3 * 1001, 3, 16},
	} {
		plan := stagePlan(c.nvec, c.world, c.stages)
		if int64(len(plan)) != c.stages {
			t.Fatalf("%+v: %d pieces", c, len(plan))
		}
		units := c.nvec / int64(c.world)
		next, lo, hi := int64(0), plan[0].shard, plan[0].shard
		for p, x := range plan {
			if x.off != next {
				t.Errorf("%+v: piece %d starts at %d, want %d", c, p, x.off, next)
			}
			if want := int64(c.world) * (units * int64(p) / c.stages); x.off != want {
				t.Errorf("%+v: piece %d at %d, the kernel's formula says %d", c, p, x.off, want)
			}
			next = x.off + int64(c.world)*x.shard
			lo, hi = min(lo, x.shard), max(hi, x.shard)
		}
		if next != c.nvec {
			t.Errorf("%+v: pieces end at %d, want %d", c, next, c.nvec)
		}
		if hi-lo > 1 {
			t.Errorf("%+v: shards from %d to %d vectors", c, lo, hi)
		}
	}
}

func TestCheckStages(t *testing.T) {
	for _, c := range []struct {
		name                       string
		algo                       string
		stages, blocks, tile, nvec int64
		world                      int
		err                        string // "" when it can run
	}{
		{"push without stages", "two_shot_push", 1, 132, 512, 1 << 20, 4, ""},
		{"push with stages", "two_shot_push", 4, 132, 512, 1 << 20, 4, "only two_shot_ce_ag pipelines"},
		{"overlap with stages", "two_shot_overlap", 2, 1, 128, 1 << 20, 4, "only two_shot_ce_ag pipelines"},
		{"ce_ag one stage", TwoShotCEAG, 1, 132, 512, 1 << 20, 4, ""},
		{"ce_ag 16 stages at 128 MiB", TwoShotCEAG, 16, 132, 512, 8 << 20, 4, ""},
		{"ce_ag over the flags", TwoShotCEAG, 32, 1, 128, 1 << 20, 4, "flag words"},
		{"ce_ag empty pieces", TwoShotCEAG, 8, 1, 128, 4 * 7, 4, "some pieces would be empty"},
		{"ce_ag exactly one vector per piece", TwoShotCEAG, 8, 1, 128, 4 * 8, 4, ""},
		{"ce_ag idle blocks in a piece", TwoShotCEAG, 16, 132, 512, 1 << 20, 4, "no work in a piece"},
	} {
		err := checkStages(c.algo, c.stages, c.blocks, c.tile, c.nvec, c.world)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.err)
		}
	}
}

package tuner

import (
	"reflect"
	"testing"
)

// TestJobFileStartsFromDefaultJob: a job whose file sets nothing but what
// it must (kernel, world, dtype, shape) has DefaultJob's settings, and one
// that sets everything has none of them.
func TestJobFileStartsFromDefaultJob(t *testing.T) {
	jobs, err := LoadJobFile(writeFile(t, `
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["bf16"]
shapes = ["n=1024"]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultJob()
	want.Kernel, want.World, want.Dtype, want.ShapeText = "allreduce", 2, "bf16", "n=1024"
	if len(jobs) != 1 || !reflect.DeepEqual(jobs[0], want) {
		t.Fatalf("jobs %+v, want [%+v]", jobs, want)
	}
	if w := want.withDefaults(); !reflect.DeepEqual(w, want) {
		t.Errorf("DefaultJob's settings are not their own defaults: %+v became %+v", want, w)
	}

	jobs, err = LoadJobFile(writeFile(t, `
backend = "cpu"
strategy = "random"
budget_trials = 7
budget_time = "1m"
warmup = 0
warm = "1s"
iters = 9
finalists = 2
seed = 4
[timeouts]
setup = "1s"
prepare = "2s"
verify = "3s"
bench = "4s"
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
`))
	if err != nil {
		t.Fatal(err)
	}
	j, d := jobs[0], DefaultJob()
	if j.Backend == d.Backend || j.Strategy == d.Strategy || j.Warmup == d.Warmup || j.Iters == d.Iters || j.Finalists == d.Finalists ||
		j.Timeouts.Setup == d.Timeouts.Setup || j.Timeouts.Prepare == d.Timeouts.Prepare || j.Timeouts.Verify == d.Timeouts.Verify || j.Timeouts.Bench == d.Timeouts.Bench ||
		j.BudgetTrials != 7 || j.BudgetTime == 0 || j.Warm == 0 || j.Seed != 4 {
		t.Errorf("a file that sets every setting gave %+v", j)
	}
}

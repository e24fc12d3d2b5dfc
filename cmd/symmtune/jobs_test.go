package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/tuner"
)

// TestSearchJobs: the search command's jobs start from tuner.DefaultJob;
// a job file's settings override it, and only the flags that were given
// override the file's. Bad flags are a usage error (exit 2).
func TestSearchJobs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "jobs.toml")
	if err := os.WriteFile(file, []byte(`backend = "cpu"
iters = 7
warmup = 1
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["bf16"]
shapes = ["n=1024"]
[[job]]
kernel = "agmm"
worlds = [4]
dtypes = ["f32"]
shapes = ["m=8,n=8,k=8"]
warmup = 0
`), 0o644); err != nil {
		t.Fatal(err)
	}
	flagJob := tuner.DefaultJob()
	flagJob.Kernel, flagJob.World, flagJob.ShapeText = "allreduce", 2, "n=8"
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, jobs []tuner.Job)
		usage string // the usage error, "" for none
	}{
		{name: "flags only: the defaults", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8"},
			check: func(t *testing.T, jobs []tuner.Job) {
				if len(jobs) != 1 || jobs[0] != flagJob {
					t.Errorf("jobs %+v, want [%+v]", jobs, flagJob)
				}
			}},
		{name: "flags only: given ones", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8", "--warmup", "0", "--iters", "4", "--dtype", "bf16", "--backend", "cpu", "--strategy", "random", "--seed", "9", "--where", "a=1", "--warm", "1s", "--budget-trials", "3", "--budget-time", "1m"},
			check: func(t *testing.T, jobs []tuner.Job) {
				j := jobs[0]
				if j.Warmup != 0 || j.Iters != 4 || j.Dtype != "bf16" || j.Backend != "cpu" || j.Strategy != "random" || j.Seed != 9 || j.Where != "a=1" || j.Warm != time.Second || j.BudgetTrials != 3 || j.BudgetTime != time.Minute {
					t.Errorf("job %+v", j)
				}
			}},
		{name: "job file: its settings", args: []string{"--config", file},
			check: func(t *testing.T, jobs []tuner.Job) {
				a, g := jobs[0], jobs[1]
				if a.Backend != "cpu" || a.Iters != 7 || a.Warmup != 1 || a.Strategy != "auto" || g.Warmup != 0 || g.Iters != 7 {
					t.Errorf("jobs %+v", jobs)
				}
			}},
		{name: "job file: given flags win", args: []string{"--config", file, "--warmup", "5", "--backend", "auto", "--seed", "2"},
			check: func(t *testing.T, jobs []tuner.Job) {
				for _, j := range jobs {
					if j.Warmup != 5 || j.Backend != "auto" || j.Seed != 2 || j.Iters != 7 {
						t.Errorf("job %+v", j)
					}
				}
			}},
		{name: "job file: a flag given at its default still wins", args: []string{"--config", file, "--warmup", "3", "--iters", "20"},
			check: func(t *testing.T, jobs []tuner.Job) {
				for _, j := range jobs {
					if j.Warmup != 3 || j.Iters != 20 {
						t.Errorf("job %+v", j)
					}
				}
			}},
		{name: "negative warmup", args: []string{"--kernel", "k", "--world", "2", "--shape", "n=8", "--warmup", "-1"}, usage: "must not be negative"},
		{name: "negative iters with a file", args: []string{"--config", file, "--iters", "-2"}, usage: "must not be negative"},
		{name: "dtype with a file", args: []string{"--config", file, "--dtype", "f32"}, usage: "--dtype and --config exclude each other"},
		{name: "no kernel", args: []string{"--world", "2"}, usage: "search needs --kernel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &searchFlags{}
			cmd := newSearchCmdWith(&globals{}, f)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			jobs, err := f.jobs(cmd)
			if tc.usage != "" {
				var ue usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("error %v, want a usage error saying %q", err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, jobs)
		})
	}
}

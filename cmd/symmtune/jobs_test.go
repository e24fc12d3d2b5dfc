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
	budgeted := filepath.Join(t.TempDir(), "budgeted.toml")
	if err := os.WriteFile(budgeted, []byte(`budget_trials = 40
budget_time = "10m"
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
[[job]]
kernel = "agmm"
worlds = [2]
dtypes = ["f32"]
shapes = ["m=8,n=8,k=8"]
budget_trials = 0
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// budgets checks every job's trial and time budget.
	budgets := func(trials int, d time.Duration) func(t *testing.T, jobs []tuner.Job) {
		return func(t *testing.T, jobs []tuner.Job) {
			for _, j := range jobs {
				if j.BudgetTrials != trials || j.BudgetTime != d {
					t.Errorf("%s: budget %d trials, %s; want %d, %s", j.Kernel, j.BudgetTrials, j.BudgetTime, trials, d)
				}
			}
		}
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
		// Budgets: not given is tuner.AutoBudget (the search plans one);
		// --budget-trials 0, --budget-time 0 and --exhaustive are budgets
		// given: every valid config.
		{name: "budget: not given", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8"}, check: budgets(tuner.AutoBudget, 0)},
		{name: "budget: not given, a job file without one", args: []string{"--config", file}, check: budgets(tuner.AutoBudget, 0)},
		{name: "budget: --budget-trials 0", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8", "--budget-trials", "0"}, check: budgets(0, 0)},
		{name: "budget: --budget-time 0", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8", "--budget-time", "0"}, check: budgets(0, 0)},
		{name: "budget: --budget-time alone", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8", "--budget-time", "2m"}, check: budgets(tuner.AutoBudget, 2*time.Minute)},
		{name: "budget: --exhaustive", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8", "--exhaustive"}, check: budgets(0, 0)},
		{name: "budget: --exhaustive with --budget-trials 0", args: []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=8", "--exhaustive", "--budget-trials", "0"}, check: budgets(0, 0)},
		{name: "budget: a job file's, budget_trials = 0 included", args: []string{"--config", budgeted},
			check: func(t *testing.T, jobs []tuner.Job) {
				if a, g := jobs[0], jobs[1]; a.BudgetTrials != 40 || a.BudgetTime != 10*time.Minute || g.BudgetTrials != 0 || g.BudgetTime != 10*time.Minute {
					t.Errorf("jobs %+v", jobs)
				}
			}},
		{name: "budget: --exhaustive overrides a job file's", args: []string{"--config", budgeted, "--exhaustive"}, check: budgets(0, 0)},
		{name: "budget: --budget-trials auto overrides a job file's", args: []string{"--config", budgeted, "--budget-trials", "auto", "--budget-time", "0"}, check: budgets(tuner.AutoBudget, 0)},
		{name: "budget: --budget-time 0 keeps a job file's trials", args: []string{"--config", budgeted, "--budget-time", "0"},
			check: func(t *testing.T, jobs []tuner.Job) {
				if a, g := jobs[0], jobs[1]; a.BudgetTrials != 40 || a.BudgetTime != 0 || g.BudgetTrials != 0 || g.BudgetTime != 0 {
					t.Errorf("jobs %+v", jobs)
				}
			}},
		{name: "budget: --exhaustive with a trial budget", args: []string{"--kernel", "k", "--world", "2", "--shape", "n=8", "--exhaustive", "--budget-trials", "3"}, usage: "--exhaustive measures every valid config"},
		{name: "budget: --exhaustive with a time budget", args: []string{"--config", file, "--exhaustive", "--budget-time", "1m"}, usage: "--exhaustive measures every valid config"},
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

package tuner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// recordedHeader is the comment header python/symmtune/record.py writes
// when it creates a job file.
const recordedHeader = `# symmtune job file: the kernel calls a program made, recorded by symmtune.record.
# Created 2026-11-25T18:44:58Z by train.py (pid 28793 on node-3).
# Each [[job]] is one kernel, world size, dtype and shape, written once; programs
# that record into this file (SYMMTUNE_RECORD=jobs.toml) append to it.
# Tune them, then run the program again: it reads the tuned configs from the cache.
#   symmtune search --config jobs.toml
# --backend cuda (or cpu) tunes every job on that backend; --budget-trials N or
# --budget-time 10m bounds each job.
`

// recordedJob is one block as symmtune.record appends it: one [[job]] per
// call, its backend in the table, the shape in name-sorted cache order.
func recordedJob(kernel, backend, world, dtype, shape string) string {
	return "\n[[job]]\nkernel = \"" + kernel + "\"\nbackend = \"" + backend + "\"\nworlds = [" + world +
		"]\ndtypes = [\"" + dtype + "\"]\nshapes = [\"" + shape + "\"]\n"
}

// TestLoadJobFileTakesRecordedFiles: the files symmtune.record writes (a
// comment header, one [[job]] per recorded call with its own backend,
// possibly appended to a hand-written file) load as they are, one job per
// block in file order, each keeping its backend and the file's defaults.
func TestLoadJobFileTakesRecordedFiles(t *testing.T) {
	type want struct{ kernel, backend, dtype, shape string }
	cases := []struct {
		name string
		text string
		want []want
		// the file's defaults every job gets
		iters, warmup int
	}{
		{
			name: "recorded",
			text: recordedHeader +
				recordedJob("allreduce", "cuda", "8", "bf16", "n=1048576") +
				recordedJob("agmm", "cuda", "8", "bf16", "k=8192,m=8192,n=3584") +
				recordedJob("matmulrs", "cpu", "8", "f16", "k=8192,m=8192,n=3584"),
			want: []want{
				{"allreduce", "cuda", "bf16", "n=1048576"},
				{"agmm", "cuda", "bf16", "k=8192,m=8192,n=3584"},
				{"matmulrs", "cpu", "f16", "k=8192,m=8192,n=3584"},
			},
			iters: DefaultJob().Iters, warmup: DefaultJob().Warmup, // the file sets neither
		},
		{
			name: "appended to a hand-written file",
			text: "backend = \"cpu\"\niters = 5\nwarmup = 1\n[[job]]\nkernel = \"allreduce\"\nworlds = [8]\n" +
				"dtypes = [\"f32\"]\nshapes = [\"n=16384\"]\n[job.timeouts]\nbench = \"1s\"\n" +
				recordedJob("allreduce", "cuda", "8", "bf16", "n=64"),
			want: []want{
				{"allreduce", "cpu", "f32", "n=16384"},
				{"allreduce", "cuda", "bf16", "n=64"},
			},
			iters: 5, warmup: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.toml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			jobs, err := LoadJobFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != len(tc.want) {
				t.Fatalf("%d jobs, want %d: %+v", len(jobs), len(tc.want), jobs)
			}
			for i, w := range tc.want {
				j := jobs[i]
				if j.Kernel != w.kernel || j.Backend != w.backend || j.World != 8 || j.Dtype != w.dtype || j.ShapeText != w.shape {
					t.Errorf("job %d: %s %s w%d %s %s, want %s %s w8 %s %s", i+1, j.Kernel, j.Backend, j.World, j.Dtype,
						j.ShapeText, w.kernel, w.backend, w.dtype, w.shape)
				}
				if j.Iters != tc.iters || j.Warmup != tc.warmup {
					t.Errorf("job %d: iters %d warmup %d, want the file's %d and %d", i+1, j.Iters, j.Warmup, tc.iters, tc.warmup)
				}
			}
		})
	}
}

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

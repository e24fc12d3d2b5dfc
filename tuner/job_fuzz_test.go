package tuner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadJobFile: LoadJobFile never panics; what it refuses is an
// *InputError (exit 2) naming the file; what it accepts expands to one job
// per (world, dtype, shape) of every [[job]], each with a kernel,
// non-negative timeouts, and the file's pin for its kernel.
func FuzzLoadJobFile(f *testing.F) {
	seeds := []string{
		"backend = \"cpu\"\nstrategy = \"auto\"\nwarmup = 2\niters = 10\n[[job]]\nkernel = \"allreduce\"\nworlds = [2, 4]\ndtypes = [\"f32\"]\nshapes = [\"n=16384\", \"n=262144\"]\n",
		"[timeouts]\nsetup = \"30s\"\nprepare = \"1m\"\nverify = \"3s\"\nbench = \"500ms\"\n[plugins]\nfaulty = \"sha256:" + strings.Repeat("ab", 32) + "\"\n[[job]]\nkernel = \"faulty\"\nworlds = [2]\ndtypes = [\"f32\"]\nshapes = [\"n=1024\"]\n[job.timeouts]\nbench = \"1s\"\n",
		"[[job]]\nkernel = \"k\"\nworlds = [1]\ndtypes = [\"f32\", \"bf16\"]\nshapes = [\"m=1,n=2,k=3\"]\nbudget_trials = 5\nbudget_time = \"10m\"\nseed = -3\nwarmup = 0\nfinalists = 2\n",
		"[[job]]\nkernel = \"k\"\n",
		"[[job]\n",
		"colour = 1\n[[job]]\nkernel = \"k\"\nworlds = [2]\ndtypes = [\"f32\"]\nshapes = [\"n=1\"]\n",
		"[timeouts]\nbench = \"-1s\"\n[[job]]\nkernel = \"k\"\nworlds = [2]\ndtypes = [\"f32\"]\nshapes = [\"n=1\"]\n",
		"[[job]]\nkernel = \"k\"\nworlds = \"2\"\n",
		"job = 3\n",
		"",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "job.toml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		jobs, err := LoadJobFile(path)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T) is not an InputError", err, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(jobs) == 0 {
			t.Fatal("a job file without jobs was accepted")
		}
		for _, j := range jobs {
			if j.Kernel == "" {
				t.Fatalf("job without a kernel: %+v", j)
			}
			to := j.Timeouts
			if to.Setup < 0 || to.Prepare < 0 || to.Verify < 0 || to.Bench < 0 || j.BudgetTime < 0 {
				t.Fatalf("negative duration in %+v", j)
			}
		}
	})
}

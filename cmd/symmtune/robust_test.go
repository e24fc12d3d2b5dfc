package main

// Bad input must give exit code 2, exactly one line on stderr, and leave
// nothing behind: no cache file, no trial log (neither --log nor the
// default one under the cache directory), no plugin process and no
// shared-memory file.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	faultyOnce sync.Once
	faultyPath string
	faultyErr  error
)

// faultyPluginDir is a plugin directory (under the package's pluginDir,
// which TestMain removes) holding the test-only fault-injection plugin
// next to a copy of the all-reduce plugin.
func faultyPluginDir(t *testing.T) string {
	t.Helper()
	faultyOnce.Do(func() {
		dir := filepath.Join(pluginDir, "with-faulty")
		if faultyErr = os.MkdirAll(dir, 0o755); faultyErr != nil {
			return
		}
		var out []byte
		out, faultyErr = exec.Command("go", "build", "-o", filepath.Join(dir, "symmtune-plugin-faulty"), "../../internal/faultplugin").CombinedOutput()
		if faultyErr != nil {
			faultyErr = &buildError{faultyErr, out}
			return
		}
		if faultyErr = os.Symlink(filepath.Join(pluginDir, "symmtune-plugin-allreduce"), filepath.Join(dir, "symmtune-plugin-allreduce")); faultyErr != nil {
			return
		}
		faultyPath = dir
	})
	if faultyErr != nil {
		t.Fatalf("build the faulty plugin: %v", faultyErr)
	}
	return faultyPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// listDir names what dir holds, recursively, relative to it.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}

// pluginProcs counts live processes whose executable lies in dir.
func pluginProcs(dir string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		// A pinned plugin runs from a memfd named after its binary.
		if link, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && strings.HasPrefix(strings.TrimPrefix(link, "/memfd:"), dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

// jobFile is a valid job file for the faulty plugin; cases break it.
const jobFile = `backend = "cpu"
iters = 3
[timeouts]
bench = "3s"
[[job]]
kernel = "faulty"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
`

func TestBadInputExitsTwoWritingNothing(t *testing.T) {
	plugins := faultyPluginDir(t)
	search := func(extra ...string) []string {
		return append([]string{"search", "--backend", "cpu"}, extra...)
	}
	flagsFor := func(kernel, world, shape string, extra ...string) []string {
		return search(append([]string{"--kernel", kernel, "--world", world, "--shape", shape}, extra...)...)
	}
	replace := func(old, new string) string {
		if !strings.Contains(jobFile, old) {
			t.Fatalf("job file has no %q", old)
		}
		return strings.Replace(jobFile, old, new, 1)
	}
	cases := []struct {
		name string
		args []string
		job  string // job file contents; the case's args get --config FILE
		want string // in the error line
	}{
		{"unknown kernel", flagsFor("nosuch", "2", "n=1024"), "", `unknown kernel "nosuch"`},
		{"kernel with a path", flagsFor("../faulty", "2", "n=1024"), "", "want a plain name"},
		{"unknown flag", append(flagsFor("faulty", "2", "n=1024"), "--frobnicate"), "", "unknown flag"},
		{"world not a number", flagsFor("faulty", "two", "n=1024"), "", "invalid argument"},
		{"unknown backend", append(flagsFor("faulty", "2", "n=1024"), "--backend", "gpu"), "", `backend "gpu"`},
		{"cuda without a GPU build", append(flagsFor("faulty", "2", "n=1024"), "--backend", "cuda"), "", "backend cuda"},
		{"unknown strategy", append(flagsFor("faulty", "2", "n=1024"), "--strategy", "bogus"), "", `unknown strategy "bogus"`},
		{"unknown dtype", append(flagsFor("faulty", "2", "n=1024"), "--dtype", "f99"), "", `dtype "f99"`},
		{"negative iters", append(flagsFor("faulty", "2", "n=1024"), "--iters", "-1"), "", "must not be negative"},
		{"negative warm", append(flagsFor("faulty", "2", "n=1024"), "--warm", "-1s"), "", "must not be negative"},
		{"negative budget", append(flagsFor("faulty", "2", "n=1024"), "--budget-trials", "-1"), "", "must not be negative"},
		{"budget not a number", append(flagsFor("faulty", "2", "n=1024"), "--budget-trials", "many"), "", "0 (every valid config) or auto"},
		{"exhaustive with a budget", append(flagsFor("faulty", "2", "n=1024"), "--exhaustive", "--budget-trials", "5"), "", "--exhaustive measures every valid config"},
		{"job file negative budget", search(), replace(`iters = 3`, "iters = 3\nbudget_trials = -1"), "budget_trials = -1"},
		{"missing shape", search("--kernel", "faulty", "--world", "2"), "", "needs --kernel, --world and --shape"},
		{"world zero", flagsFor("faulty", "0", "n=1024"), "", "needs --kernel, --world and --shape"},
		{"world negative", flagsFor("faulty", "-2", "n=1024"), "", "world size -2"},
		{"world above the backend", flagsFor("faulty", "65", "n=1040"), "", "at most 64 ranks"},
		{"shape negative", flagsFor("faulty", "2", "n=-4"), "", "must be positive"},
		{"shape zero", flagsFor("faulty", "2", "n=0"), "", "must be positive"},
		{"shape overflow", flagsFor("faulty", "2", "n=99999999999999999999999"), "", "fits in 64 bits"},
		{"shape above MaxDim", flagsFor("faulty", "2", "n=1099511627777"), "", "exceeds the limit"},
		{"shape above the kernel's limit", flagsFor("faulty", "2", "n=8388608"), "", "no config can run"},
		{"shape not divisible by world", flagsFor("faulty", "4", "n=1022"), "", "not divisible by the world size 4"},
		{"shape missing dim", flagsFor("faulty", "2", "m=1024"), "", `missing dimension "n"`},
		{"shape unknown dim", flagsFor("faulty", "2", "n=1024,k=2"), "", `unknown dimension "k"`},
		{"shape malformed", flagsFor("faulty", "2", "n"), "", "is not dim=size"},
		{"shape dim twice", flagsFor("allreduce", "2", "n=4,n=4"), "", "given twice"},
		{"job file missing", search("--config", "/nonexistent/job.toml"), "", "nonexistent"},
		{"job file malformed", search(), replace("[[job]]", "[[job]"), "line"},
		{"job file unknown top key", search(), "colour = \"red\"\n" + jobFile, "unknown key(s) colour"},
		{"job file unknown job key", search(), replace(`kernel = "faulty"`, "kernel = \"faulty\"\nnodes = 3"), "unknown key(s) job.nodes"},
		{"job file unknown timeout", search(), replace(`bench = "3s"`, `bnech = "3s"`), "unknown key(s) timeouts.bnech"},
		{"job file bad duration", search(), replace(`bench = "3s"`, `bench = "3 parsecs"`), "3 parsecs"},
		{"job file negative duration", search(), replace(`bench = "3s"`, `bench = "-3s"`), "negative"},
		{"job file wrong type", search(), replace("worlds = [2]", `worlds = "2"`), "worlds"},
		{"job file no jobs", search(), "backend = \"cpu\"\n", "no [[job]]"},
		{"job file empty shapes", search(), replace(`shapes = ["n=1024"]`, "shapes = []"), "at least one value"},
		{"job file missing kernel", search(), replace(`kernel = "faulty"`, ""), "missing kernel"},
		{"job file bad shape", search(), replace(`shapes = ["n=1024"]`, `shapes = ["n=-1"]`), "must be positive"},
		{"job file malformed pin", search(), jobFile + "[plugins]\nfaulty = \"sha256:zz\"\n", "64 hex digits"},
		{"job file pin mismatch", search(), jobFile + "[plugins]\nfaulty = \"sha256:" + strings.Repeat("0", 64) + "\"\n", "does not match the pinned checksum"},
		{"job file with --kernel", search("--kernel", "faulty"), jobFile, "exclude each other"},
		{"top zero", append(flagsFor("faulty", "2", "n=1024"), "--top", "0"), "", "--top 0: want 1 or more"},
		{"top negative", append(flagsFor("faulty", "2", "n=1024"), "--top", "-1"), "", "--top -1: want 1 or more"},
		{"top negative with a job file", search("--top", "-1"), jobFile, "--top -1: want 1 or more"},
		{"job file negative iters", search(), replace(`iters = 3`, "iters = -5"), "iters = -5"},
		{"job file negative warmup", search(), replace(`iters = 3`, "iters = 3\nwarmup = -1"), "warmup = -1"},
		{"job file negative finalists", search(), replace(`iters = 3`, "iters = 3\nfinalists = -1"), "finalists = -1"},
		{"job file unknown refine timing", search(), replace(`iters = 3`, "iters = 3\nrefine_timing = \"busy\""), `refine_timing = "busy"`},
		{"finalists zero", append(flagsFor("faulty", "2", "n=1024"), "--finalists", "0"), "", "--finalists 0: want 1 or more"},
		{"unknown trial timing", append(flagsFor("faulty", "2", "n=1024"), "--trial-timing", "stream"), "", `--trial-timing: timing "stream"`},
		{"job file unknown trial timing", search(), replace(`iters = 3`, "iters = 3\ntrial_timing = \"barrier\""), `trial_timing = "barrier"`},
		{"unknown refine timing", append(flagsFor("faulty", "2", "n=1024"), "--refine-timing", "busy"), "", `--refine-timing: timing "busy"`},
		{"unknown refine timing with a job file", search("--refine-timing", "Loaded"), jobFile, `--refine-timing: timing "Loaded"`},
		{"job file negative iters in a job", search(), replace(`kernel = "faulty"`, "kernel = \"faulty\"\niters = -1"), "job 1 (faulty): iters = -1"},
		{"job file world zero", search(), replace("worlds = [2]", "worlds = [2, 0]"), "world size 0"},
		{"job file world negative", search(), replace("worlds = [2]", "worlds = [-2]"), "world size -2"},
	}
	for _, tc := range cases {
		for _, defaultLog := range []bool{false, true} {
			name := tc.name
			if defaultLog {
				name += "/default log"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				args := append([]string{"--plugin-dir", plugins, "--cache", filepath.Join(dir, "c.toml")}, tc.args...)
				if !defaultLog {
					args = append(args, "--log", filepath.Join(dir, "trials.jsonl"))
				}
				if tc.job != "" {
					p := filepath.Join(dir, "job.toml")
					if err := os.WriteFile(p, []byte(tc.job), 0o644); err != nil {
						t.Fatal(err)
					}
					args = append(args, "--config", p)
				}
				before := listDir(t, dir)
				var out, errb bytes.Buffer
				code := runIO(context.Background(), args, &out, &errb)
				if code != exitUsage {
					t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, out.String(), errb.String())
				}
				msg := errb.String()
				if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "symmtune: ") || !strings.HasSuffix(msg, "\n") {
					t.Errorf("stderr is not one line:\n%s", msg)
				}
				if !strings.Contains(msg, tc.want) {
					t.Errorf("stderr %q does not say %q", msg, tc.want)
				}
				if after := listDir(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
					t.Errorf("bad input wrote files: before %v, after %v", before, after)
				}
			})
		}
	}
	if n := pluginProcs(pluginDir); n != 0 {
		t.Errorf("%d plugin processes outlive the bad-input searches", n)
	}
}

// TestCorruptResumeLog: a malformed --resume log is bad input naming the
// file and line, and is not appended to.
func TestCorruptResumeLog(t *testing.T) {
	plugins := faultyPluginDir(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "trials.jsonl")
	orig := []byte("{\"config\":{\"mode\":\"fast\"},\"status\":\"ok\"}\nnot json\n{\"config\":{\"mode\":\"slow\"},\"status\":\"ok\"}\n")
	if err := os.WriteFile(logPath, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runIO(context.Background(), []string{"--plugin-dir", plugins, "--cache", filepath.Join(dir, "c.toml"),
		"search", "--kernel", "faulty", "--world", "2", "--shape", "n=1024", "--backend", "cpu", "--resume", logPath}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), logPath+": line 2") || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming %s line 2", code, errb.String(), logPath)
	}
	if b, _ := os.ReadFile(logPath); !bytes.Equal(b, orig) {
		t.Errorf("the resume log changed:\n%s", b)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("files written: %v", names)
	}
}

// TestCorruptCacheIsBadInput: every command that reads the cache stops on
// one whose header cannot be read with exit 2 and one line naming the file
// and line, and leaves the file as it was. (A damaged entry is reported
// and skipped instead: TestDamagedEntryIsSkipped.)
func TestCorruptCacheIsBadInput(t *testing.T) {
	plugins := faultyPluginDir(t)
	corrupt := []byte("version = 1\n\n[entry\nkernel = \"faulty\"\n")
	cases := []struct {
		name string
		args []string
	}{
		{"search", []string{"search", "--kernel", "faulty", "--world", "2", "--shape", "n=1024", "--backend", "cpu"}},
		{"search job file", []string{"search", "--config", "JOB"}},
		{"lookup", []string{"lookup", "--kernel", "faulty", "--world", "2", "--shape", "n=1024", "--backend", "cpu"}},
		{"show", []string{"show"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cachePath := filepath.Join(dir, "c.toml")
			if err := os.WriteFile(cachePath, corrupt, 0o644); err != nil {
				t.Fatal(err)
			}
			job := filepath.Join(t.TempDir(), "job.toml")
			if err := os.WriteFile(job, []byte(jobFile), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--plugin-dir", plugins, "--cache", cachePath}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "JOB", job))
			}
			before := listDir(t, dir)
			var out, errb bytes.Buffer
			code := runIO(context.Background(), args, &out, &errb)
			msg := errb.String()
			if code != exitUsage || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, cachePath+": line 4") {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line naming %s line 4", code, msg, exitUsage, cachePath)
			}
			if after, _ := os.ReadFile(cachePath); !bytes.Equal(after, corrupt) {
				t.Errorf("the cache changed:\n%s", after)
			}
			if after := listDir(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("files written next to the cache: before %v, after %v", before, after)
			}
		})
	}
}

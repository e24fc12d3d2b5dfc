package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/shm"
	"github.com/symmtune/symmtune/tuner"
)

// pluginDir holds real plugin executables built once for the package's
// tests: the end-to-end tests start real plugin processes, never mocks.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "symmtune-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, p := range []string{"allreduce", "matmulrs", "agmm"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "symmtune-plugin-"+p), "../../plugins/"+p).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build plugin %s: %v\n%s", p, err, out)
			os.Exit(1)
		}
	}
	pluginDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs the symmtune command line in-process and returns its exit
// code, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runIO(context.Background(), append([]string{"--plugin-dir", pluginDir}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// shmFiles lists the shared-memory files this test process's searches left
// behind. Group ids start with the host's PID, so files of tests running in
// other packages at the same time are not counted.
func shmFiles(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(shm.Dir(), fmt.Sprintf("%s%d-*", shm.FilePrefix, os.Getpid())))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSearchAllReduceLandsInCacheAndLookup(t *testing.T) {
	for _, world := range []int{2, 4} {
		t.Run(fmt.Sprintf("world%d", world), func(t *testing.T) {
			dir := t.TempDir()
			cachePath, logPath := filepath.Join(dir, "c.toml"), filepath.Join(dir, "trials.jsonl")
			w := fmt.Sprint(world)
			code, out, errs := cli(t, "search", "--kernel", "allreduce", "--world", w, "--shape", "n=8192",
				"--dtype", "f32", "--backend", "cpu", "--strategy", "exhaustive", "--iters", "3",
				"--cache", cachePath, "--log", logPath)
			if code != 0 {
				t.Fatalf("search exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			if !strings.Contains(out, "winner:") {
				t.Errorf("no winner line in output:\n%s", out)
			}
			// The summary says where the search's time went.
			if !regexp.MustCompile(`(?m)^time: [0-9.]+ s = validate [0-9.]+ \+ setup [0-9.]+ \+ prepare [0-9.]+ \+ verify [0-9.]+ \+ bench [0-9.]+ \(timed work [0-9.]+\) \+ other [0-9.]+$`).MatchString(out) {
				t.Errorf("no time split line in output:\n%s", out)
			}

			// Every valid config was tried once, plus the finalists' re-measurements.
			lines := readLog(t, logPath)
			first := map[string]bool{}
			refined := 0
			seenRefined := map[string]bool{}
			for _, l := range lines {
				if l.Refined {
					refined++
					// One line per finalist: its median round of the interleaved re-measurement.
					if seenRefined[l.Config.String()] || (l.Status == "ok" && l.Rounds != tuner.RefineRounds) {
						t.Errorf("refined line for %s: repeated %v, %d rounds (want one line of %d rounds)",
							l.Config, seenRefined[l.Config.String()], l.Rounds, tuner.RefineRounds)
					}
					seenRefined[l.Config.String()] = true
					continue
				}
				if first[l.Config.String()] {
					t.Errorf("config %s measured twice in the first pass", l.Config)
				}
				first[l.Config.String()] = true
				if l.Status != "ok" {
					t.Errorf("config %s: status %s (%s); every all-reduce config must compute the right sum", l.Config, l.Status, l.Error)
				}
				if l.World != world || len(l.RanksUS) != world {
					t.Errorf("log line world %d with %d rank times, want %d", l.World, len(l.RanksUS), world)
				}
			}
			var size, valid int
			if i := strings.Index(out, "space "); i < 0 {
				t.Fatalf("no space line in output:\n%s", out)
			} else if _, err := fmt.Sscanf(out[i:], "space %d configs, %d valid", &size, &valid); err != nil {
				t.Fatalf("space line: %v", err)
			}
			if valid < 2 || len(first) != valid || refined == 0 {
				t.Errorf("log has %d first-pass configs and %d refined; want all %d valid configs and finalists", len(first), refined, valid)
			}
			// No budget flag: the budget is planned, and a small space
			// runs whole well inside the time per job.
			if want := fmt.Sprintf("\nbudget: every valid config (%d; auto: 5 trials took ", valid); !strings.Contains(out, want) {
				t.Errorf("no line %q in output:\n%s", want, out)
			}

			store, err := cache.Load(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			es := store.Entries()
			if len(es) != 1 || es[0].World != world || es[0].Kernel != "allreduce" || es[0].Shape["n"] != 8192 {
				t.Fatalf("cache entries %+v", es)
			}
			if es[0].MedianUS <= 0 || es[0].Trials != len(first) {
				t.Errorf("entry median %.1f trials %d, want >0 and %d", es[0].MedianUS, es[0].Trials, len(first))
			}
			// The winner is the best re-measured finalist, or the default
			// where that is not DefaultMargin faster than the default's
			// re-measurement (tuner.Winner).
			var remeasured []tuner.Result
			var def space.Config
			for _, l := range lines {
				if l.Refined {
					remeasured = append(remeasured, l)
				}
				if l.Default {
					def = l.Config
				}
			}
			want, ok := tuner.Winner(remeasured, def)
			if !ok || es[0].Config.String() != want.Config.String() {
				t.Errorf("cached config %s, the re-measured finalists' winner %s (default %s)", es[0].Config, want.Config, def)
			}

			code, out, errs = cli(t, "lookup", "--kernel", "allreduce", "--world", w, "--shape", "n=8192",
				"--dtype", "f32", "--backend", "cpu", "--cache", cachePath, "--json")
			if code != 0 {
				t.Fatalf("lookup exit %d: %s", code, errs)
			}
			var got struct {
				Exact  bool           `json:"exact"`
				Config map[string]any `json:"config"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("lookup json: %v\n%s", err, out)
			}
			cfg, err := space.ConfigFromAny(got.Config)
			if err != nil || !got.Exact || cfg.String() != es[0].Config.String() {
				t.Errorf("lookup gave %+v (err %v), want exact %s", got, err, es[0].Config)
			}
			if left := shmFiles(t); len(left) > 0 {
				t.Errorf("shared-memory files left behind: %v", left)
			}
		})
	}
}

// readLog reads a search's trial log, which must be complete: a search
// that finished leaves no torn line.
func readLog(t *testing.T, path string) []tuner.Result {
	t.Helper()
	lf, err := triallog.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if lf.Torn > 0 {
		t.Fatalf("%s: line %d is torn", path, lf.Torn)
	}
	return lf.Results
}

func TestLookupNearestAndMissing(t *testing.T) {
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "c.toml")
	if code, out, errs := cli(t, "search", "--kernel", "allreduce", "--world", "2", "--shape", "n=4096",
		"--backend", "cpu", "--iters", "2", "--cache", cachePath, "--log", filepath.Join(dir, "l.jsonl")); code != 0 {
		t.Fatalf("search exit %d\n%s\n%s", code, out, errs)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"exact", []string{"--shape", "n=4096", "--world", "2"}, 0, "algorithm="},
		{"nearest shape", []string{"--shape", "n=16384", "--world", "2"}, 0, "algorithm="},
		{"other world", []string{"--shape", "n=4096", "--world", "3"}, 3, ""},
		// The CPU all-reduce takes f32 only: a dtype it does not take is bad
		// input (as search says), not a missing entry.
		{"dtype the plugin does not take", []string{"--shape", "n=4096", "--world", "2", "--dtype", "bf16"}, 2, ""},
		{"unknown dtype", []string{"--shape", "n=4096", "--world", "2", "--dtype", "f99"}, 2, ""},
		{"bad shape", []string{"--shape", "n=-4", "--world", "2"}, 2, ""},
		{"unknown kernel", []string{"--shape", "n=4", "--world", "2", "--kernel", "nosuch"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"lookup", "--kernel", "allreduce", "--backend", "cpu", "--cache", cachePath}, tc.args...)
			code, out, errs := cli(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			if !strings.Contains(out, tc.contains) {
				t.Errorf("stdout %q does not contain %q", out, tc.contains)
			}
			// Comments go to stderr: stdout is the answer alone.
			if strings.Contains(out, "#") {
				t.Errorf("stdout %q holds a comment", out)
			}
			if tc.name == "nearest shape" && !strings.Contains(errs, "nearest tuned shape is n=4096 (checked by the plugin at n=16384)") {
				t.Errorf("stderr %q does not say the nearest shape was checked", errs)
			}
			if code != 0 && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("want one line on stderr, got %q", errs)
			}
		})
	}
}

func TestPluginsAndShow(t *testing.T) {
	code, out, errs := cli(t, "plugins", "--backend", "cpu")
	if code != 0 || !strings.Contains(out, "allreduce") || !strings.Contains(out, "algorithm") || !strings.Contains(out, "two_shot") {
		t.Fatalf("plugins exit %d\n%s\n%s", code, out, errs)
	}
	cachePath := filepath.Join(t.TempDir(), "c.toml")
	if code, out, _ := cli(t, "show", "--cache", cachePath); code != 0 || !strings.Contains(out, "no entries") {
		t.Errorf("show on empty cache: exit %d, %q", code, out)
	}
}

// TestEveryKernelAtWorld8 runs each shipped kernel's real plugin at eight
// ranks: barrier sizing, flag layout and validation must hold at the world
// size of an 8-GPU node, which the GPU machines here do not always offer.
func TestEveryKernelAtWorld8(t *testing.T) {
	tests := []struct{ kernel, shape string }{
		{"allreduce", "n=8192"},
		{"matmulrs", "m=256,n=64,k=64"},
		{"agmm", "m=256,n=64,k=64"},
	}
	for _, tc := range tests {
		t.Run(tc.kernel, func(t *testing.T) {
			dir := t.TempDir()
			cachePath, logPath := filepath.Join(dir, "c.toml"), filepath.Join(dir, "l.jsonl")
			code, out, errs := cli(t, "search", "--kernel", tc.kernel, "--world", "8", "--shape", tc.shape,
				"--backend", "cpu", "--strategy", "random", "--budget-trials", "6", "--iters", "2",
				"--cache", cachePath, "--log", logPath)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			for _, l := range readLog(t, logPath) {
				if l.Status != "ok" || len(l.RanksUS) != 8 {
					t.Errorf("%s: status %s (%s), %d rank times", l.Config, l.Status, l.Error, len(l.RanksUS))
				}
			}
			store, err := cache.Load(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			if es := store.Entries(); len(es) != 1 || es[0].World != 8 {
				t.Errorf("cache entries %+v", es)
			}
			if left := shmFiles(t); len(left) > 0 {
				t.Errorf("shared-memory files left behind: %v", left)
			}
		})
	}
}

// TestJobFileCheckedBeforeAnyJobRuns: a mistake in the last job of a job
// file stops the search before the first job runs, with exit code 2, and
// nothing is written.
func TestJobFileCheckedBeforeAnyJobRuns(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "jobs.toml")
	body := "backend = \"cpu\"\niters = 2\n" +
		"[[job]]\nkernel = \"allreduce\"\nworlds = [2]\ndtypes = [\"f32\"]\nshapes = [\"n=4096\"]\n" +
		"[[job]]\nkernel = \"matmulrs\"\nworlds = [3]\ndtypes = [\"f32\"]\nshapes = [\"m=256,n=64,k=64\"]\n"
	if err := os.WriteFile(job, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cachePath, logPath := filepath.Join(dir, "c.toml"), filepath.Join(dir, "l.jsonl")
	code, out, errs := cli(t, "search", "--config", job, "--cache", cachePath, "--log", logPath)
	if code != 2 || !strings.Contains(errs, "job 2") || !strings.Contains(errs, "not divisible by world 3") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for _, p := range []string{cachePath, logPath} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused job file", p)
		}
	}
}

// TestAllReduceOddSizes: the CPU all-reduce takes every size the CUDA one
// does (any n >= 1), every trial checked against the float64 reference
// through real plugin processes.
func TestAllReduceOddSizes(t *testing.T) {
	for _, tc := range []struct {
		world int
		n     string
	}{{2, "1"}, {4, "1"}, {4, "3"}, {2, "7"}, {4, "4097"}, {3, "100003"}} {
		t.Run(fmt.Sprintf("w%d-n%s", tc.world, tc.n), func(t *testing.T) {
			dir := t.TempDir()
			logPath := filepath.Join(dir, "l.jsonl")
			code, out, errs := cli(t, "search", "--kernel", "allreduce", "--world", fmt.Sprint(tc.world), "--shape", "n="+tc.n,
				"--backend", "cpu", "--strategy", "random", "--budget-trials", "6", "--iters", "2",
				"--cache", filepath.Join(dir, "c.toml"), "--log", logPath)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			lines := readLog(t, logPath)
			if len(lines) == 0 {
				t.Fatal("no trials")
			}
			for _, l := range lines {
				if l.Status != "ok" {
					t.Errorf("%s: status %s (%s)", l.Config, l.Status, l.Error)
				}
			}
		})
	}
}

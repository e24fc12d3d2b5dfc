package tuner

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/symmtune/symmtune/internal/pyplugins"
	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/symm/shm"
)

// The binaries the robustness tests run are built once per test binary
// into buildRoot, which TestMain removes.
var (
	buildMu   sync.Mutex
	buildRoot string
	built     = map[string]string{} // sub/name -> path
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildRoot != "" {
		os.RemoveAll(buildRoot)
	}
	os.Exit(code)
}

// buildBinary builds the package pkg as buildRoot/sub/name (once: later
// calls return the same path). ldflags may be empty.
func buildBinary(t testing.TB, sub, name, pkg, ldflags string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	key := sub + "/" + name
	if p, ok := built[key]; ok {
		return p
	}
	if buildRoot == "" {
		d, err := os.MkdirTemp("", "symmtune-robust-bin-")
		if err != nil {
			t.Fatalf("make build dir: %v", err)
		}
		buildRoot = d
	}
	out := filepath.Join(buildRoot, sub, name)
	args := []string{"build", "-o", out}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	cmd := exec.Command("go", append(args, pkg)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	built[key] = out
	return out
}

const faultyPkg = "github.com/symmtune/symmtune/internal/faultplugin"

// faultyPluginDir returns a plugin directory holding only the
// fault-injection plugin, and the plugin's path.
func faultyPluginDir(t testing.TB) (dir, exe string) {
	exe = buildBinary(t, "plugins", PluginPrefix+"faulty", faultyPkg, "")
	return filepath.Dir(exe), exe
}

// faultyPlugin is one implementation of the fault-injection plugin in a
// plugin directory of its own.
type faultyPlugin struct {
	lang     string // "go" or "python"
	dir, exe string
}

// pythonFaultyScript is the Python port of internal/faultplugin.
const pythonFaultyScript = "python/tests/plugins/symmtune-plugin-faulty"

// pythonFaultyPluginDir installs the Python fault-injection plugin into a
// plugin directory of its own (once per test binary). Without a Python
// that can run it the test is skipped, or fails where Python is required.
func pythonFaultyPluginDir(t testing.TB) (dir, exe string) {
	t.Helper()
	py := pyplugins.Need(t)
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built["python/faulty"]; ok {
		return filepath.Dir(p), p
	}
	if buildRoot == "" {
		d, err := os.MkdirTemp("", "symmtune-robust-bin-")
		if err != nil {
			t.Fatalf("make build dir: %v", err)
		}
		buildRoot = d
	}
	exe, err := pyplugins.Install(pythonFaultyScript, filepath.Join(buildRoot, "python"), PluginPrefix+"faulty", py)
	if err != nil {
		t.Fatal(err)
	}
	built["python/faulty"] = exe
	return filepath.Dir(exe), exe
}

// faultyPlugins is every implementation the host's fault tests run against:
// the Go plugin, and the Python one (skipped, as a subtest, where no Python
// can run it and none is required).
func faultyPlugins(t *testing.T, run func(t *testing.T, p faultyPlugin)) {
	t.Run("go", func(t *testing.T) {
		dir, exe := faultyPluginDir(t)
		run(t, faultyPlugin{"go", dir, exe})
	})
	t.Run("python", func(t *testing.T) {
		dir, exe := pythonFaultyPluginDir(t)
		run(t, faultyPlugin{"python", dir, exe})
	})
}

// symmtuneBinary returns the CLI, built next to nothing else (tests pass
// --plugin-dir).
func symmtuneBinary(t testing.TB) string {
	return buildBinary(t, "cli", "symmtune", "github.com/symmtune/symmtune/cmd/symmtune", "")
}

// quietLogger drops the search's progress messages (restarts are expected
// here and would bury the test output).
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fastTimeouts keep every hang to seconds. Setup is generous: with -race
// on two cores, four plugin processes start slowly.
var fastTimeouts = Timeouts{Setup: 30 * time.Second, Prepare: 3 * time.Second, Verify: 3 * time.Second, Bench: 3 * time.Second}

// faultyJob is an exhaustive search over every fault of the faulty plugin.
func faultyJob(world int) Job {
	return Job{
		Kernel: "faulty", Backend: "cpu", World: world, Dtype: "f32", ShapeText: "n=1024",
		Strategy: "exhaustive", Warmup: 1, Iters: 5, Timeouts: fastTimeouts,
	}
}

// The statuses every mode of the faulty plugin must end with, and the
// phase that ends the failing ones (internal/faultplugin documents why).
var faultyWant = map[string]struct {
	status Status
	phase  string
}{
	"fast":          {StatusOK, ""},
	"medium":        {StatusOK, ""},
	"slow":          {StatusOK, ""},
	"deadlock":      {StatusHang, "bench"},
	"stuck":         {StatusHang, "verify"},
	"crash_bench":   {StatusCrash, "bench"},
	"panic_verify":  {StatusCrash, "verify"},
	"wrong":         {StatusWrong, "verify"},
	"prepare_error": {StatusFailed, "prepare"},
}

// checkTimeSplit checks a search's time split and its log's phase times
// against what must hold whatever the machine's speed: every phase a
// search goes through took some time, the benches timed less than they
// took, the phases fit in the total, the group restarts of a search with
// hangs or crashes were counted, and each logged trial's phases fit in its
// elapsed time, with a bench for every trial that passed.
func checkTimeSplit(t *testing.T, o *Outcome, rs []Result) {
	t.Helper()
	sp := o.Time
	t.Logf("time: %s", sp)
	if sp.Total != o.Elapsed || sp.Validate <= 0 || sp.Setup <= 0 || sp.Prepare <= 0 || sp.Verify <= 0 || sp.Bench <= 0 || sp.Timed <= 0 {
		t.Errorf("time split %+v (elapsed %s): want every phase of the search positive and the total the elapsed time", sp, o.Elapsed)
	}
	if sp.Timed > sp.Bench {
		t.Errorf("timed work %s exceeds the bench calls' %s", sp.Timed, sp.Bench)
	}
	if sum := sp.Validate + sp.Setup + sp.Precompile + sp.Prepare + sp.Verify + sp.Bench + sp.Restart; sum > sp.Total {
		t.Errorf("phases add up to %s, more than the total %s", sum, sp.Total)
	}
	restarts := o.Counts[StatusHang] + o.Counts[StatusCrash]
	if (sp.Restart > 0) != (restarts > 0) {
		t.Errorf("restart time %s after %d hangs and crashes", sp.Restart, restarts)
	}
	for _, r := range rs {
		if r.PrepareMS+r.VerifyMS+r.BenchMS > r.ElapsedMS+1e-6 {
			t.Errorf("%s: phases %v + %v + %v ms exceed its elapsed %v ms", r.Config, r.PrepareMS, r.VerifyMS, r.BenchMS, r.ElapsedMS)
		}
		if r.Status == StatusOK && (r.PrepareMS <= 0 || r.VerifyMS <= 0 || r.BenchMS <= 0) {
			t.Errorf("%s passed with phases %v, %v, %v ms: want each positive", r.Config, r.PrepareMS, r.VerifyMS, r.BenchMS)
		}
	}
}

// readLog parses a trial log, failing on any line that is not a complete
// JSON result: a log is always complete up to its last finished trial.
func readLog(t testing.TB, path string) []Result {
	t.Helper()
	lf, err := triallog.Read(path)
	if err != nil {
		t.Fatalf("trial log: %v", err)
	}
	if lf.Torn > 0 {
		t.Fatalf("trial log %s line %d is not a complete result", path, lf.Torn)
	}
	return lf.Results
}

// countLines is the number of complete lines in a file (0 if missing).
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// firstPass groups a log's first-pass (not refined) results by mode.
func firstPass(rs []Result) map[string][]Result {
	out := map[string][]Result{}
	for _, r := range rs {
		if !r.Refined {
			out[r.Config["mode"].Str] = append(out[r.Config["mode"].Str], r)
		}
	}
	return out
}

// checkFaultLog asserts that every mode of the faulty plugin was tried
// exactly once in the first pass, with the status its fault must give, and
// that only healthy configs were re-measured.
func checkFaultLog(t *testing.T, rs []Result, world int) {
	t.Helper()
	byMode := firstPass(rs)
	for mode, want := range faultyWant {
		got := byMode[mode]
		if len(got) != 1 {
			t.Errorf("mode %s: %d first-pass trials in the log, want exactly 1 (a failed config is never retried)", mode, len(got))
			continue
		}
		r := got[0]
		if r.Status != want.status || r.Phase != want.phase {
			t.Errorf("mode %s: status %s, phase %q (error %q); want %s, phase %q", mode, r.Status, r.Phase, r.Error, want.status, want.phase)
		}
		if r.World != world || r.Kernel != "faulty" {
			t.Errorf("mode %s: logged as kernel %s world %d", mode, r.Kernel, r.World)
		}
		// The fault's own rank is named, not a peer that merely waited on it.
		var rank int
		switch mode {
		case "crash_bench", "wrong", "prepare_error":
			rank = world - 1
		case "panic_verify":
			rank = 0
		default:
			continue
		}
		if !strings.Contains(r.Error, fmt.Sprintf("rank %d", rank)) {
			t.Errorf("mode %s: error %q does not name rank %d", mode, r.Error, rank)
		}
	}
	for mode := range byMode {
		if _, ok := faultyWant[mode]; !ok {
			t.Errorf("log holds unknown mode %q", mode)
		}
	}
	for _, r := range rs {
		if r.Refined && r.Status != StatusOK {
			t.Errorf("re-measured %s ended %s: %s", r.Config, r.Status, r.Error)
		}
		if r.Refined && faultyWant[r.Config["mode"].Str].status != StatusOK {
			t.Errorf("faulty config %s was re-measured", r.Config)
		}
	}
}

// pluginPIDs lists the live processes running exe: as their executable, or
// as the script an interpreter runs (a Python plugin's #! line makes the
// kernel run "python3 exe").
func pluginPIDs(exe string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// A plugin execs the binary the host opened, its fd 3: /proc's exe
		// (a Go plugin) or fd 3 (a script's interpreter keeps it) names the
		// file, or for a pinned plugin the memfd named after it.
		for _, l := range []string{"exe", "fd/3"} {
			link, err := os.Readlink(filepath.Join("/proc", e.Name(), l))
			if err != nil {
				continue // gone, a zombie, or not ours to look at
			}
			if strings.TrimPrefix(strings.TrimSuffix(link, " (deleted)"), "/memfd:") == exe {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// waitNoPlugins fails unless every process running exe is gone within d.
func waitNoPlugins(t *testing.T, exe string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		pids := pluginPIDs(exe)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				_ = syscallKill(p) // do not leak them into later tests
			}
			t.Fatalf("plugin processes %v still run %s after %s", pids, filepath.Base(exe), d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shmFiles is the set of symmtune shared-memory files now present.
func shmFiles() map[string]bool {
	m, _ := filepath.Glob(filepath.Join(shm.Dir(), shm.FilePrefix+"*"))
	out := map[string]bool{}
	for _, f := range m {
		out[f] = true
	}
	return out
}

// waitNoNewSHM fails if symmtune shared-memory files that were not there
// at before remain after d. Other packages' tests may create files of their
// own meanwhile; those are unlinked within milliseconds, a leak never is.
func waitNoNewSHM(t *testing.T, before map[string]bool, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var left []string
		for f := range shmFiles() {
			if !before[f] {
				left = append(left, f)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, f := range left {
				os.Remove(f)
			}
			t.Fatalf("shared-memory files left behind: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

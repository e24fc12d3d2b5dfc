package tuner

// Robustness tests: real searches over the fault-injection plugin
// (internal/faultplugin, and most of them also its Python port in
// python/tests/plugins, see faultyPlugins) on the CPU backend. They assert that a search
// survives configs that hang, crash, fail or compute wrong answers, stores
// the fastest valid config, logs every fault with its status, and leaves
// no plugin process or shared-memory file behind — also when it is
// interrupted (context; SIGINT, SIGTERM and SIGKILL of the CLI are in
// signals_test.go).
// Hang deadlines come from fastTimeouts (3 s), so the whole file runs in
// about a minute per implementation on two cores.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/shm"
)

func TestFaultInjectionSearch(t *testing.T) { faultyPlugins(t, testFaultInjectionSearch) }

func testFaultInjectionSearch(t *testing.T, p faultyPlugin) {
	dir, exe := p.dir, p.exe
	sum, err := FileSHA256(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		world int
		// Verify and bench ceilings; hangs must end within [hangMin, hangMax].
		// At world 2 the job's 3 s ceilings catch them; at world 4 the
		// ceilings are a minute and the deadlines scaled to the healthy
		// configs' times must catch them instead.
		verifyBench      time.Duration
		hangMin, hangMax time.Duration
	}{
		{world: 2, verifyBench: 3 * time.Second, hangMin: 3 * time.Second, hangMax: 20 * time.Second},
		// hangMax sits just under the one-minute ceiling: what is tested is
		// that the scaled deadline, not the ceiling, ended the hang; a
		// tighter bound would be a wall-clock threshold that load can break.
		{world: 4, verifyBench: time.Minute, hangMin: 3 * time.Second, hangMax: 55 * time.Second},
	} {
		world := tc.world
		t.Run(fmt.Sprintf("W%d", world), func(t *testing.T) {
			before := shmFiles()
			tmp := t.TempDir()
			cachePath := filepath.Join(tmp, "configs.toml")
			log, err := OpenTrialLog(filepath.Join(tmp, "trials.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			s := &Searcher{PluginDir: dir, Cache: cache.File{Path: cachePath}, Log: log, Logger: quietLogger()}
			job := faultyJob(world)
			job.Timeouts.Verify, job.Timeouts.Bench = tc.verifyBench, tc.verifyBench
			// The pinned checksum matches, so the search runs (the mismatch
			// is TestPinnedChecksum's).
			job.Pin = "sha256:" + sum
			start := time.Now()
			o, err := s.Search(context.Background(), job)
			wall := time.Since(start)
			if err != nil {
				t.Fatalf("search over the faulty plugin failed: %v", err)
			}
			t.Logf("world %d: counts %v, wall %.1fs", world, o.Counts, wall.Seconds())

			if o.Best == nil || o.Best.Config["mode"].Str != "fast" {
				t.Errorf("winner %v, want mode=fast", o.Best)
			}
			want := map[Status]int{StatusOK: 3, StatusWrong: 1, StatusFailed: 1, StatusHang: 2, StatusCrash: 2, StatusInvalid: 0}
			for st, n := range want {
				if o.Counts[st] != n {
					t.Errorf("%d trials ended %s, want %d (all counts %v)", o.Counts[st], st, n, o.Counts)
				}
			}
			store, err := cache.Load(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			es := store.Entries()
			if len(es) != 1 || es[0].Config["mode"].Str != "fast" || es[0].Key.World != world || es[0].Key.Kernel != "faulty" {
				t.Errorf("cache holds %+v, want one faulty entry for world %d with mode=fast", es, world)
			}
			rs := readLog(t, log.Path())
			checkFaultLog(t, rs, world)
			checkTimeSplit(t, o, rs)
			for _, r := range rs {
				if r.Status != StatusHang {
					continue
				}
				if el := time.Duration(r.ElapsedMS * float64(time.Millisecond)); el < tc.hangMin || el > tc.hangMax {
					t.Errorf("hang of %s took %s; its deadline should end it within [%s, %s]", r.Config, el, tc.hangMin, tc.hangMax)
				}
				// The phase that hung holds the wait.
				phase := map[string]float64{"verify": r.VerifyMS, "bench": r.BenchMS}[r.Phase]
				if hung := time.Duration(phase * float64(time.Millisecond)); hung < tc.hangMin {
					t.Errorf("hang of %s in %s: %s_ms says %s, want at least %s", r.Config, r.Phase, r.Phase, hung, tc.hangMin)
				}
			}
			waitNoPlugins(t, exe, 5*time.Second)
			waitNoNewSHM(t, before, 3*time.Second)
		})
	}
}

// cancelAfter is a Reporter that cancels the search delay after the n-th
// trial finishes, i.e. while trial n+1 is running.
type cancelAfter struct {
	n      int
	delay  time.Duration
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelAfter) Start(Job, int) {}
func (c *cancelAfter) Finish()        {}
func (c *cancelAfter) Trial(done, _ int, _ Result, _ *Result) {
	if done == c.n {
		c.once.Do(func() { time.AfterFunc(c.delay, c.cancel) })
	}
}

// TestInterruptMidTrialAndResume interrupts a search while the "stuck"
// config holds rank 0 in a call that ignores cancellation, then resumes it
// from the log.
func TestInterruptMidTrialAndResume(t *testing.T) { faultyPlugins(t, testInterruptMidTrialAndResume) }

func testInterruptMidTrialAndResume(t *testing.T, p faultyPlugin) {
	dir, exe := p.dir, p.exe
	before := shmFiles()
	tmp := t.TempDir()
	logPath := filepath.Join(tmp, "trials.jsonl")
	cachePath := filepath.Join(tmp, "configs.toml")
	job := faultyJob(2)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log, err := OpenTrialLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// Trials run in the space's order: medium, deadlock, fast, crash_bench,
	// wrong, then stuck. Cancel while stuck's verify is in flight.
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: cachePath}, Log: log, Logger: quietLogger(), Reporter: &cancelAfter{n: 5, delay: 300 * time.Millisecond, cancel: cancel}}
	o, err := s.Search(ctx, job)
	log.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted search returned %v, want context.Canceled", err)
	}
	if o == nil || !o.Interrupted {
		t.Fatalf("outcome %+v not marked interrupted", o)
	}
	if _, err := os.Stat(cachePath); !os.IsNotExist(err) {
		t.Errorf("an interrupted search wrote the cache (stat: %v)", err)
	}
	rs := readLog(t, logPath)
	if len(rs) != 5 {
		t.Errorf("log holds %d trials after the interrupt, want the 5 finished ones", len(rs))
	}
	waitNoPlugins(t, exe, 5*time.Second)
	waitNoNewSHM(t, before, 3*time.Second)

	// Resume: the logged configs are not measured again, the rest are, and
	// the log ends up with every config exactly once.
	done, err := LoadResume(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if done.Len() != 5 {
		t.Errorf("resume holds %d trials, want 5", done.Len())
	}
	if log, err = OpenTrialLog(logPath); err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s = &Searcher{PluginDir: dir, Cache: cache.File{Path: cachePath}, Log: log, Done: done, Logger: quietLogger()}
	o, err = s.Search(context.Background(), job)
	if err != nil {
		t.Fatalf("resumed search: %v", err)
	}
	if done.Len() != 0 {
		t.Errorf("%d logged trials were not used by the resumed search", done.Len())
	}
	if o.Best == nil || o.Best.Config["mode"].Str != "fast" {
		t.Errorf("resumed winner %v, want mode=fast", o.Best)
	}
	checkFaultLog(t, readLog(t, logPath), 2)
	waitNoPlugins(t, exe, 5*time.Second)
	waitNoNewSHM(t, before, 3*time.Second)
}

// TestCorruptCacheStopsSearch: a cache whose header cannot be read fails
// the search before any plugin starts, naming the file and line, and is
// left as it was. (A damaged entry is skipped instead.)
func TestCorruptCacheStopsSearch(t *testing.T) {
	dir, exe := faultyPluginDir(t)
	tmp := t.TempDir()
	cachePath := filepath.Join(tmp, "configs.toml")
	corrupt := []byte("version = 1\n\n[entry\nkernel = \"faulty\"\n")
	if err := os.WriteFile(cachePath, corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := OpenTrialLog(filepath.Join(tmp, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: cachePath}, Log: log}
	_, err = s.Search(context.Background(), faultyJob(2))
	if err == nil || !strings.Contains(err.Error(), cachePath) || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("search over a corrupt cache: %v; want an error naming %s, line 4", err, cachePath)
	}
	if after, _ := os.ReadFile(cachePath); !bytes.Equal(after, corrupt) {
		t.Errorf("corrupt cache was rewritten:\n%s", after)
	}
	if n := countLines(log.Path()); n != 0 {
		t.Errorf("%d trials ran against a corrupt cache", n)
	}
	waitNoPlugins(t, exe, 5*time.Second)
}

func TestPinnedChecksum(t *testing.T) { faultyPlugins(t, testPinnedChecksum) }

func testPinnedChecksum(t *testing.T, p faultyPlugin) {
	dir, exe := p.dir, p.exe
	for _, tc := range []struct{ name, pin, want string }{
		{"mismatch", "sha256:" + strings.Repeat("0", 64), "does not match the pinned checksum"},
		{"malformed", "sha256:xyz", "want 64 hex digits"},
		{"short", strings.Repeat("a", 62), "want 64 hex digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := faultyJob(2)
			job.Pin = tc.pin
			s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(t.TempDir(), "c.toml")}}
			_, err := s.Search(context.Background(), job)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("pin %q: got %v, want an InputError saying %q", tc.pin, err, tc.want)
			}
			if len(pluginPIDs(exe)) != 0 {
				t.Errorf("a plugin runs despite the refused pin")
			}
		})
	}
}

func TestProtocolVersionMismatch(t *testing.T) {
	t.Run("go", func(t *testing.T) {
		exe := buildBinary(t, "proto99", PluginPrefix+"faulty", faultyPkg,
			"-X github.com/symmtune/symmtune/sdk.protocolOverride=99")
		testProtocolVersionMismatch(t, exe)
	})
	t.Run("python", func(t *testing.T) {
		_, exe := pythonFaultyPluginDir(t)
		t.Setenv("SYMMTUNE_FAULTY_PROTOCOL", "99") // python/tests/plugins/symmtune-plugin-faulty
		testProtocolVersionMismatch(t, exe)
	})
}

func testProtocolVersionMismatch(t *testing.T, exe string) {
	s := &Searcher{PluginDir: filepath.Dir(exe), Cache: cache.File{Path: filepath.Join(t.TempDir(), "c.toml")}}
	_, err := s.Search(context.Background(), faultyJob(2))
	if err == nil {
		t.Fatal("a plugin speaking protocol 99 was accepted")
	}
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Errorf("error %q is not an InputError: a stale plugin is the user's to rebuild (exit 2)", err)
	}
	for _, want := range []string{"Plugin version: 99", "Client versions: [1]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	waitNoPlugins(t, exe, 5*time.Second)
}

func TestPluginPathStaysInPluginDir(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	if p, err := PluginPath(dir, "faulty", "cpu"); err != nil || p != filepath.Join(dir, PluginPrefix+"faulty") {
		t.Fatalf("PluginPath(faulty) = %q, %v", p, err)
	}
	// A plugin dir with a non-executable and a directory of plugin names.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, PluginPrefix+"noexec"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(other, PluginPrefix+"adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, name string }{
		{dir, ""},
		{dir, "../faulty"},
		{dir, "x/../../faulty"},
		{dir, "/bin/sh"},
		{dir, `..\faulty`},
		{dir, "."},
		{dir, ".."},
		{dir, "faulty.bak"},
		{dir, "nosuch"},
		{other, "noexec"},
		{other, "adir"},
	} {
		if p, err := PluginPath(tc.dir, tc.name, "cpu"); err == nil {
			t.Errorf("PluginPath(%q) = %q, want refused", tc.name, p)
		} else if ie := (*InputError)(nil); !errors.As(err, &ie) {
			t.Errorf("PluginPath(%q): %v is not an InputError", tc.name, err)
		}
	}
}

// TestKillRemovesSharedMemory: a group killed before its ranks unlinked
// their files (mid set-up) leaves none behind.
func TestKillRemovesSharedMemory(t *testing.T) {
	id := newGroupID()
	var paths []string
	for r := 0; r < 2; r++ {
		p := filepath.Join(shm.Dir(), fmt.Sprintf("%s%s-r%d", shm.FilePrefix, id, r))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	unrelated := filepath.Join(shm.Dir(), shm.FilePrefix+newGroupID()+"-r0")
	if err := os.WriteFile(unrelated, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(unrelated)
	g := &group{ranks: make([]*rankProc, 2), backend: "cpu", id: id}
	g.kill()
	for _, p := range paths {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s survives the group's kill", p)
		}
	}
	if _, err := os.Stat(unrelated); err != nil {
		t.Errorf("another group's file was removed: %v", err)
	}
}

// TestPluginExitsWhenHostGone checks the plugins' own fallback for a host
// that died without killing them (Pdeathsig is per thread and Linux-only):
// a plugin whose host PID is gone exits within a few seconds.
func TestPluginExitsWhenHostGone(t *testing.T) { faultyPlugins(t, testPluginExitsWhenHostGone) }

func testPluginExitsWhenHostGone(t *testing.T, p faultyPlugin) {
	exe := p.exe
	host := exec.Command("sleep", "60")
	if err := host.Start(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	plug := exec.Command(exe)
	plug.Env = append(os.Environ(), "SYMMTUNE_PLUGIN=symmetric-memory-kernels", "PLUGIN_PROTOCOL_VERSIONS=1",
		fmt.Sprintf("SYMMTUNE_HOST_PID=%d", host.Process.Pid))
	var out bytes.Buffer
	plug.Stdout, plug.Stderr = &out, &out
	if err := plug.Start(); err != nil {
		t.Fatal(err)
	}
	defer plug.Process.Kill()
	time.Sleep(300 * time.Millisecond)
	if plug.ProcessState != nil {
		t.Fatalf("plugin exited before its host did:\n%s", out.String())
	}
	_ = host.Process.Kill()
	_ = host.Wait() // reaped: a zombie would still answer kill(pid, 0)
	gone := time.Now()
	code := waitExit(t, plug, 5*time.Second)
	t.Logf("plugin exited %d, %.1fs after its host", code, time.Since(gone).Seconds())
	if !strings.Contains(out.String(), "host is gone") {
		t.Errorf("plugin did not say why it exited:\n%s", out.String())
	}
}

// TestRestartRetriesAFailedStart: when the group restarted after a crash
// fails to start (the faulty plugin's crash_bench leaves a marker that
// makes the next process exit at once, as a GPU process can while the
// driver still tears down the killed one), the search tries again and
// goes on instead of ending the job.
func TestRestartRetriesAFailedStart(t *testing.T) { faultyPlugins(t, testRestartRetriesAFailedStart) }

func testRestartRetriesAFailedStart(t *testing.T, p faultyPlugin) {
	dir := p.dir
	marker := filepath.Join(t.TempDir(), "break-restart")
	// internal/faultplugin's EnvBreakRestart.
	t.Setenv("SYMMTUNE_FAULTY_BREAK_RESTART", marker)
	tmp := t.TempDir()
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Logger: quietLogger()}
	job := faultyJob(2)
	// Exhaustive order: medium, deadlock, fast, crash_bench. The restart
	// after the crash must succeed for the finalists to be re-measured.
	job.BudgetTrials = 4
	o, err := s.Search(context.Background(), job)
	if err != nil {
		t.Fatalf("search with a failed restart: %v", err)
	}
	if o.Counts[StatusCrash] != 1 || o.Best == nil || o.Best.Config["mode"].Str != "fast" || !o.Best.Refined || o.Best.Rounds != RefineRounds {
		t.Errorf("counts %v, best %+v; want one crash and a refined mode=fast winner", o.Counts, o.Best)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("marker %s still there (%v): no start was refused, the test checks nothing", marker, err)
	}
}

// TestOutOfSpaceEntryNeverBlocksWinner: an entry of this plugin build whose
// config is not in the plugin's space (damaged, or forged with a tiny
// median) cannot keep a new winner out of its slot: the search's write
// sets it aside, and says so.
func TestOutOfSpaceEntryNeverBlocksWinner(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	cachePath := filepath.Join(t.TempDir(), "configs.toml")
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: cachePath}}
	job := faultyJob(2)
	job.BudgetTrials = 2
	o, err := s.Search(context.Background(), job)
	if err != nil || o.Entry == nil {
		t.Fatalf("first search: %v", err)
	}
	forged := *o.Entry
	forged.Config = space.Config{"mode": space.Str("no_such_mode")}
	forged.MedianUS = 1e-3
	if err := os.Remove(cachePath); err != nil {
		t.Fatal(err)
	}
	if err := cache.Put(cachePath, forged); err != nil {
		t.Fatal(err)
	}
	o, err = s.Search(context.Background(), job)
	if err != nil {
		t.Fatalf("second search: %v", err)
	}
	if o.Kept == nil || !o.Kept.Config.Equal(o.Entry.Config) {
		t.Errorf("the cache kept %v over the new winner %v", o.Kept, o.Entry)
	}
	if len(o.SetAside) != 1 || o.SetAsideTo != cachePath+cache.DamagedSuffix || !strings.Contains(o.SetAside[0].Error(), "not in the plugin's space") {
		t.Errorf("set aside %v to %q", o.SetAside, o.SetAsideTo)
	}
}

package tuner

// Signal tests: the real CLI, searching over the fault-injection plugin,
// is interrupted (SIGINT, SIGTERM) or killed outright (SIGKILL); no plugin
// process or shared-memory file may outlive it, and its trial log holds
// complete lines only. See robust_test.go for the searches in process.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
)

// writeFaultyJobFile writes a job file for the faulty plugin at world 2
// with short deadlines, pinning the plugin binary.
func writeFaultyJobFile(t *testing.T, exe, dir string) string {
	t.Helper()
	sum, err := FileSHA256(exe)
	if err != nil {
		t.Fatal(err)
	}
	text := `backend = "cpu"
strategy = "exhaustive"
iters = 5
warmup = 1
[timeouts]
setup = "30s"
prepare = "3s"
verify = "3s"
bench = "3s"
[plugins]
faulty = "sha256:` + sum + `"
[[job]]
kernel = "faulty"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
`
	p := filepath.Join(dir, "faulty.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startCLI starts the real symmtune binary searching the faulty plugin.
func startCLI(t *testing.T, pluginDir string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(symmtuneBinary(t), append([]string{"search", "--plugin-dir", pluginDir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &out
}

// waitForLines waits until the log holds at least n lines.
func waitForLines(t *testing.T, path string, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for countLines(path) < n {
		if time.Now().After(deadline) {
			t.Fatalf("log %s has %d lines after %s, want %d", path, countLines(path), d, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitExit waits for the command and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("symmtune did not exit within %s", d)
		return -1
	}
}

// TestSignalsEndPlugins sends SIGINT or SIGTERM to the real CLI while the
// "stuck" config is in flight: exit 130, a hint to resume, a log complete
// up to the last finished trial, no plugin process and no shared memory
// left. After SIGINT the search is resumed from its log to the end.
func TestSignalsEndPlugins(t *testing.T) {
	dir, exe := faultyPluginDir(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			before := shmFiles()
			tmp := t.TempDir()
			jobFile := writeFaultyJobFile(t, exe, tmp)
			logPath := filepath.Join(tmp, "trials.jsonl")
			cachePath := filepath.Join(tmp, "configs.toml")
			cmd, out := startCLI(t, dir, "--config", jobFile, "--log", logPath, "--cache", cachePath)
			waitForLines(t, logPath, 5, 60*time.Second)
			time.Sleep(200 * time.Millisecond) // into stuck's verify
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, 20*time.Second); code != 130 {
				t.Fatalf("exit code %d after %s, want 130; output:\n%s", code, sig, out)
			}
			if !strings.Contains(out.String(), "--resume "+logPath) {
				t.Errorf("no resume hint in the output:\n%s", out)
			}
			if n := len(readLog(t, logPath)); n != 5 {
				t.Errorf("log holds %d trials, want 5 (the interrupted one is not a result)", n)
			}
			if _, err := os.Stat(cachePath); !os.IsNotExist(err) {
				t.Errorf("interrupted search wrote the cache (stat: %v)", err)
			}
			waitNoPlugins(t, exe, 5*time.Second)
			waitNoNewSHM(t, before, 3*time.Second)
			if sig != syscall.SIGINT {
				return
			}

			cmd, out = startCLI(t, dir, "--config", jobFile, "--resume", logPath, "--cache", cachePath)
			if code := waitExit(t, cmd, 90*time.Second); code != 0 {
				t.Fatalf("resumed search exited %d:\n%s", code, out)
			}
			checkFaultLog(t, readLog(t, logPath), 2)
			store, err := cache.Load(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			if es := store.Entries(); len(es) != 1 || es[0].Config["mode"].Str != "fast" {
				t.Errorf("cache after resume holds %+v, want mode=fast", es)
			}
			waitNoPlugins(t, exe, 5*time.Second)
			waitNoNewSHM(t, before, 3*time.Second)
		})
	}
}

// TestHostSIGKILL kills the host outright mid-search, at world 4, while a
// config hangs: the plugins must end by themselves within 5 s (Pdeathsig,
// with the SDK's watch on the host PID as the fallback).
func TestHostSIGKILL(t *testing.T) { faultyPlugins(t, testHostSIGKILL) }

func testHostSIGKILL(t *testing.T, p faultyPlugin) {
	dir, exe := p.dir, p.exe
	before := shmFiles()
	tmp := t.TempDir()
	jobFile := writeFaultyJobFile(t, exe, tmp)
	b, _ := os.ReadFile(jobFile)
	if err := os.WriteFile(jobFile, bytes.Replace(b, []byte("worlds = [2]"), []byte("worlds = [4]"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(tmp, "trials.jsonl")
	cmd, out := startCLI(t, dir, "--config", jobFile, "--log", logPath, "--cache", filepath.Join(tmp, "configs.toml"))
	// After medium, deadlock waits out its bench deadline on 3 of 4 ranks.
	waitForLines(t, logPath, 1, 60*time.Second)
	time.Sleep(500 * time.Millisecond)
	if n := len(pluginPIDs(exe)); n < 4 {
		t.Fatalf("%d plugin processes before the kill, want 4:\n%s", n, out)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitNoPlugins(t, exe, 5*time.Second)
	waitNoNewSHM(t, before, 3*time.Second)
	readLog(t, logPath) // complete lines only
}

package tuner

import (
	"context"
	"github.com/symmtune/symmtune/cache"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// litter lists what plugin sockets leave in tmp: socket folders, and
// sockets made outside any folder (plugin*, go-plugin's own naming).
func litter(t *testing.T, tmp string) []string {
	t.Helper()
	es, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), socketDirPrefix) || strings.HasPrefix(e.Name(), "plugin") {
			out = append(out, e.Name())
		}
	}
	return out
}

// deadPID is the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSweepDeadSocketDirs(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := mk(socketDirPrefix + strconv.Itoa(deadPID(t)) + "-123")
	live := mk(socketDirPrefix + strconv.Itoa(os.Getpid()) + "-456")
	odd := mk(socketDirPrefix + "notapid-789")
	other := mk("unrelated-1")
	sweepDeadSocketDirs(tmp)
	for _, c := range []struct {
		path string
		keep bool
	}{{dead, false}, {live, true}, {odd, true}, {other, true}} {
		_, err := os.Stat(c.path)
		if kept := err == nil; kept != c.keep {
			t.Errorf("%s: kept %v, want %v", filepath.Base(c.path), kept, c.keep)
		}
	}
}

// TestNoSocketLitter: plugins killed by a killed host leave their socket
// folders, which the next search sweeps; a search whose plugins hang and
// crash (and are killed and restarted) leaves nothing at all.
func TestNoSocketLitter(t *testing.T) {
	dir, exe := faultyPluginDir(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the host's and every plugin's os.TempDir
	work := t.TempDir()

	jobFile := writeFaultyJobFile(t, exe, work)
	logPath := filepath.Join(work, "killed.jsonl")
	cmd, out := startCLI(t, dir, "--config", jobFile, "--log", logPath, "--cache", filepath.Join(work, "configs.toml"))
	waitForLines(t, logPath, 1, 60*time.Second)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitNoPlugins(t, exe, 5*time.Second)
	if len(litter(t, tmp)) == 0 {
		t.Fatalf("a killed host left no socket folders: the test would prove nothing\n%s", out)
	}

	log, err := OpenTrialLog(filepath.Join(work, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(work, "configs.toml")}, Log: log, Logger: quietLogger()}
	o, err := s.Search(context.Background(), faultyJob(2))
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if o.Counts[StatusHang] == 0 || o.Counts[StatusCrash] == 0 {
		t.Fatalf("the search killed no plugin (counts %v): the test would prove nothing", o.Counts)
	}
	if l := litter(t, tmp); len(l) > 0 {
		t.Errorf("left in the temp folder: %v", l)
	}
}

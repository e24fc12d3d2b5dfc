package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/space"
)

// quickSearch is a search of the real allreduce plugin small enough for CI.
func quickSearch(cachePath, logPath string) []string {
	return []string{"search", "--kernel", "allreduce", "--world", "2", "--shape", "n=4096", "--backend", "cpu",
		"--iters", "2", "--budget-trials", "3", "--cache", cachePath, "--log", logPath}
}

// A cache path that is not a regular file, or cannot be written, is
// refused with exit 2 and one line before any trial runs (issue 55: a
// FIFO hung forever, /dev/null was renamed over, an unwritable directory
// cost each job's winner).
func TestCacheLocationRefusedBeforeTrials(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path, want string }{
		{"fifo", fifo, "is a FIFO, not a regular file"},
		{"dev null", "/dev/null", "is a character device"},
		{"link to dev null", link, "is a character device"},
		{"directory", dir, "is a directory"},
		{"unwritable", "/proc/symmtune-test/c.toml", "cannot be written"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "l.jsonl")
			code, out, errs := cli(t, quickSearch(tt.path, logPath)...)
			if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q\n%s", code, errs, tt.want, out)
			}
			if _, err := os.Stat(logPath); err == nil {
				t.Error("a trial log was written: trials ran")
			}
		})
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("/dev/null is no longer a device: %v", err)
	}
}

// A damaged entry is reported on stderr with its line, and skipped: it
// never blocks a new winner, and the write that replaces the file keeps
// its text in c.toml.damaged.
func TestDamagedEntryIsSkipped(t *testing.T) {
	dir := t.TempDir()
	cachePath, logPath := filepath.Join(dir, "c.toml"), filepath.Join(dir, "l.jsonl")
	damaged := "version = 1\n[[entry]]\nkernel = \"allreduce\"\nworld = \"two\"\n"
	if err := os.WriteFile(cachePath, []byte(damaged), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", "--cache", cachePath}, {"lookup", "--any-hardware", "--kernel", "allreduce", "--world", "2", "--shape", "n=4096", "--cache", cachePath}} {
		_, _, errs := cli(t, args...)
		if !strings.Contains(errs, "warning: cache "+cachePath+": line 4: ") {
			t.Errorf("%v: stderr %q does not report the damaged entry", args[0], errs)
		}
	}
	code, out, errs := cli(t, quickSearch(cachePath, logPath)...)
	if code != 0 {
		t.Fatalf("search exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "cache: set 1 damaged entries aside in "+cachePath+cache.DamagedSuffix) {
		t.Errorf("search does not say it set the damaged entry aside:\n%s", out)
	}
	aside, err := os.ReadFile(cachePath + cache.DamagedSuffix)
	if err != nil || !strings.Contains(string(aside), "world = \"two\"") {
		t.Errorf("%s: %v\n%s", cachePath+cache.DamagedSuffix, err, aside)
	}
	s, err := cache.Load(cachePath)
	if err != nil || len(s.Entries()) != 1 || len(s.Damaged()) != 0 {
		t.Fatalf("after the search: %v, %d entries, damage %v", err, len(s.Entries()), s.Damaged())
	}
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// While another process holds the cache lock, a finished search says who
// holds it after 2 s; an interrupt (Ctrl-C, SIGTERM: the context of main)
// ends the wait with exit 130 and a resume hint naming the log it wrote,
// and --lock-timeout gives up on its own.
func TestLockWaitInterruptAndTimeout(t *testing.T) {
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "c.toml")
	l := flock.New(cachePath + ".lock")
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	holder := fmt.Sprintf("pid %d", os.Getpid())
	if err := os.WriteFile(cachePath+".lock", []byte(holder+" on testhost since now: the test\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("interrupt", func(t *testing.T) {
		logPath := filepath.Join(t.TempDir(), "l.jsonl")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out, errb syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- runIO(ctx, append([]string{"--plugin-dir", pluginDir}, quickSearch(cachePath, logPath)...), &out, &errb)
		}()
		for !strings.Contains(errb.String(), "waiting for the lock of cache") {
			select {
			case code := <-done:
				t.Fatalf("search ended (exit %d) without waiting for the lock:\n%s", code, errb.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !strings.Contains(errb.String(), "held by "+holder) {
			t.Errorf("the wait does not say who holds the lock: %q", errb.String())
		}
		cancel()
		code := <-done
		msg := errb.String()
		if code != exitInterrupted || !strings.Contains(msg, "--resume "+logPath) {
			t.Fatalf("exit %d, stderr %q; want %d and a resume hint", code, msg, exitInterrupted)
		}
		if _, err := os.Stat(logPath); err != nil {
			t.Errorf("the hint names a log that does not exist: %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		logPath := filepath.Join(t.TempDir(), "l.jsonl")
		code, _, errs := cli(t, append([]string{"--lock-timeout", "1s"}, quickSearch(cachePath, logPath)...)...)
		if code != exitFailure || !strings.Contains(errs, "its lock is held by "+holder) || !strings.Contains(errs, "--resume "+logPath) {
			t.Fatalf("exit %d, stderr %q; want %d naming the holder, with a resume hint", code, errs, exitFailure)
		}
	})
}

// A nearest-shape answer is validated by the plugin at the asked shape:
// an entry whose config the plugin rejects there is skipped, saying why
// on stderr (issue 55: chunk=65536 was handed out for n=1024); without a
// plugin (--any-hardware) the answer says plainly it was not checked.
func TestLookupNearestIsValidated(t *testing.T) {
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "c.toml")
	if code, out, errs := cli(t, "search", "--kernel", "allreduce", "--world", "2", "--shape", "n=262144", "--backend", "cpu",
		"--iters", "2", "--budget-trials", "2", "--cache", cachePath, "--log", filepath.Join(dir, "l.jsonl")); code != 0 {
		t.Fatalf("search exit %d\n%s\n%s", code, out, errs)
	}
	s, err := cache.Load(cachePath)
	if err != nil || len(s.Entries()) != 1 {
		t.Fatalf("%v %v", err, s.Entries())
	}
	e := s.Entries()[0]
	e.Config["chunk"] = space.Int(65536) // valid at n=262144, not at n=1024 on 2 ranks
	e.MedianUS = 1e-3
	if err := os.Remove(cachePath); err != nil {
		t.Fatal(err)
	}
	if err := cache.Put(cachePath, e); err != nil {
		t.Fatal(err)
	}
	lookup := []string{"lookup", "--kernel", "allreduce", "--world", "2", "--backend", "cpu", "--cache", cachePath}
	if code, out, errs := cli(t, append(lookup, "--shape", "n=262144")...); code != 0 || !strings.Contains(out, "chunk=65536") {
		t.Fatalf("exact lookup: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := cli(t, append(lookup, "--shape", "n=1024")...)
	if code != exitNotFound || out != "" || !strings.Contains(errs, "# skipped the entry tuned for n=262144: the plugin rejects its config") {
		t.Errorf("nearest lookup: exit %d\nstdout %q\nstderr %q\nwant exit 3 saying the nearest entry was rejected at n=1024", code, out, errs)
	}
	code, out, errs = cli(t, "lookup", "--any-hardware", "--kernel", "allreduce", "--world", "2", "--shape", "n=1024", "--cache", cachePath)
	if code != 0 || !strings.Contains(out, "chunk=65536") || !strings.Contains(errs, "NOT checked at n=1024") {
		t.Errorf("--any-hardware lookup: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

// The real binary, sent SIGINT or SIGTERM while it waits for a held cache
// lock after its trials, exits 130 with a resume hint naming its log.
func TestSignalEndsLockWait(t *testing.T) {
	bin := symmtuneBin(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cachePath, logPath := filepath.Join(dir, "c.toml"), filepath.Join(dir, "l.jsonl")
			l := flock.New(cachePath + ".lock")
			if err := l.Lock(); err != nil {
				t.Fatal(err)
			}
			defer l.Unlock()
			var errb syncBuffer
			cmd := exec.Command(bin, append([]string{"--plugin-dir", pluginDir}, quickSearch(cachePath, logPath)...)...)
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			for !strings.Contains(errb.String(), "waiting for the lock of cache") {
				select {
				case <-done:
					t.Fatalf("exited without waiting for the lock:\n%s", errb.String())
				case <-time.After(50 * time.Millisecond):
				}
			}
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%v did not end the wait", sig)
			}
			t.Logf("%v ended the wait in %v", sig, time.Since(sent).Round(time.Millisecond))
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(errb.String(), "--resume "+logPath) {
				t.Errorf("exit %d, stderr %q; want %d and a resume hint", code, errb.String(), exitInterrupted)
			}
		})
	}
}

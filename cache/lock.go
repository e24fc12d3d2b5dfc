package cache

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// LockWait says how a writer waits for a cache file's lock, which another
// writer may hold for as long as its write takes (or forever, if it hangs).
type LockWait struct {
	// Timeout gives up waiting after this long; 0 waits until the
	// context ends.
	Timeout time.Duration
	// Waiting, when set, is told once, after ReportAfter, who holds the
	// lock, so that a wait never passes in silence.
	Waiting func(holder string)
}

// ReportAfter is how long a writer waits for the lock before saying who
// holds it.
const ReportAfter = 2 * time.Second

// lockPoll is how often a waiting writer tries the lock again: an
// interrupt ends the wait within this much.
const lockPoll = 50 * time.Millisecond

// LockTimeoutError is a lock wait that ran out of time.
type LockTimeoutError struct {
	Path   string
	Holder string
	Wait   time.Duration
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("write cache %s: its lock is held by %s; gave up after %v (--lock-timeout)", e.Path, e.Holder, e.Wait)
}

// lock takes path's lock (path+".lock"), waiting as w says until ctx ends,
// and records this process as the holder in the lock file.
func lock(ctx context.Context, path string, w LockWait) (*flock.Flock, error) {
	l := flock.New(path+".lock", flock.SetPermissions(0o644))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("write cache %s: lock: %w", path, err)
	}
	if !ok {
		if err := waitLock(ctx, l, path, w); err != nil {
			return nil, err
		}
	}
	writeHolder(path + ".lock")
	return l, nil
}

func waitLock(ctx context.Context, l *flock.Flock, path string, w LockWait) error {
	start := time.Now()
	var expire <-chan time.Time
	if w.Timeout > 0 {
		t := time.NewTimer(w.Timeout)
		defer t.Stop()
		expire = t.C
	}
	report := time.NewTimer(ReportAfter)
	defer report.Stop()
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("write cache %s: waiting for its lock (held by %s): %w", path, holder(l, path), context.Cause(ctx))
		case <-expire:
			return &LockTimeoutError{Path: path, Holder: holder(l, path), Wait: time.Since(start).Round(time.Millisecond)}
		case <-report.C:
			if w.Waiting != nil {
				w.Waiting(holder(l, path))
			}
		case <-tick.C:
			ok, err := l.TryLock()
			if err != nil {
				return fmt.Errorf("write cache %s: lock: %w", path, err)
			}
			if ok {
				return nil
			}
		}
	}
}

// writeHolder records who holds the lock, for writers that wait on it:
// the lock is the flock, not this text.
func writeHolder(lockPath string) {
	host, _ := os.Hostname()
	cmd := strings.Join(os.Args, " ")
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	line := fmt.Sprintf("pid %d on %s since %s: %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339), cmd)
	_ = os.WriteFile(lockPath, []byte(line), 0o644) // best effort: only a message depends on it
}

// holder says who holds the lock: the process /proc/locks names, else the
// text its holder wrote, else "another process".
func holder(l *flock.Flock, path string) string {
	text, _ := os.ReadFile(path + ".lock")
	line := strings.TrimSpace(string(text))
	if pid := lockPID(path + ".lock"); pid > 0 {
		if strings.HasPrefix(line, fmt.Sprintf("pid %d ", pid)) {
			return line
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if c := strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))); c != "" {
			return fmt.Sprintf("pid %d: %s", pid, c)
		}
		return fmt.Sprintf("pid %d", pid)
	}
	if line != "" {
		return line
	}
	return "another process"
}

// lockPID finds the process holding an flock on the file at path in
// /proc/locks (Linux); 0 when unknown.
func lockPID(path string) int {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 12345 08:01:123456 0 EOF
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" {
			continue
		}
		parts := strings.Split(fs[5], ":")
		if len(parts) != 3 {
			continue
		}
		ino, err := strconv.ParseUint(parts[2], 10, 64)
		if err != nil || ino != st.Ino {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil && pid > 0 && pid != os.Getpid() {
			return pid
		}
	}
	return 0
}

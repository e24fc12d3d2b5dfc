package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// holdLock takes path's lock in this process until the test ends, as
// another writer would.
func holdLock(t *testing.T, path string) {
	t.Helper()
	l := flock.New(path + ".lock")
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	writeHolder(path + ".lock")
	t.Cleanup(func() { l.Unlock() })
}

// A writer waiting for a held lock says who holds it, ends with its
// context or at --lock-timeout, and never writes.
func TestLockWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configs.toml")
	if err := Put(path, entry(64)); err != nil {
		t.Fatal(err)
	}
	holdLock(t, path)
	before, _ := os.ReadFile(path)

	t.Run("timeout", func(t *testing.T) {
		var told []string
		w := LockWait{Timeout: ReportAfter + 500*time.Millisecond, Waiting: func(h string) { told = append(told, h) }}
		_, err := File{Path: path, Lock: w}.Put(context.Background(), Source{Name: "x", Entries: []Entry{entry(128)}})
		var te *LockTimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("Put = %v, want a LockTimeoutError", err)
		}
		pid := "pid " + strconv.Itoa(os.Getpid())
		if len(told) != 1 || !strings.HasPrefix(told[0], pid) || !strings.Contains(err.Error(), pid) {
			t.Errorf("told %q, error %q: want both to name %s", told, err, pid)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := File{Path: path}.Put(ctx, Source{Name: "x", Entries: []Entry{entry(128)}})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "held by pid") {
			t.Fatalf("Put = %v, want context.Canceled naming the holder", err)
		}
	})
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a writer that never got the lock changed the file")
	}
}

// Check refuses a path that is not a regular file, or where nothing can
// be written, before any work; it writes nothing.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		want string // "" for no error
	}{
		{filepath.Join(dir, "new", "sub", "configs.toml"), ""},
		{file, ""},
		{"/dev/null", "a character device, not a regular file"},
		{link, "a character device, not a regular file"},
		{fifo, "a FIFO, not a regular file"},
		{dir, "a directory, not a regular file"},
		{filepath.Join(file, "configs.toml"), "is not a directory"},
		{"/proc/symmtune-test/configs.toml", "cannot be written"},
	} {
		err := File{Path: tt.path}.Check(context.Background())
		var fe *FileError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%s): %v", tt.path, err)
		case tt.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%s) = %v, want a FileError with %q", tt.path, err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("Check created a directory")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("Check left files behind: %v", ents)
	}
	// Load of a FIFO fails at once instead of blocking on it, and Put
	// never renames over a device.
	if _, err := Load(fifo); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Load(fifo) = %v", err)
	}
	if err := Put(link, entry(64)); err == nil || !strings.Contains(err.Error(), "character device") {
		t.Errorf("Put(link to /dev/null) = %v", err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("/dev/null is no longer a device: %v %v", fi, err)
	}
}

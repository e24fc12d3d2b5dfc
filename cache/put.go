package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Put stores e in the cache file at path by the better-entry rule (Merge).
// See PutAll.
func Put(path string, e Entry) error { return PutAll(path, []Entry{e}) }

// PutAll stores es in the cache file at path in one locked write. Each
// slot keeps the better entry, by Merge's rule, of what the file holds and
// es: a slower re-tuning of the same kernel version leaves the faster entry
// in place, an entry of a newer kernel version replaces an older one.
//
// It is atomic and safe for concurrent writers, in one process or many: it
// takes an exclusive lock on path+".lock", re-reads the current file so no
// writer loses another's entries, merges, writes a temp file in the same
// directory, fsyncs it, renames it over path and fsyncs the directory. The
// parent directory is created when missing. When path is a symlink, its
// target is replaced and the symlink kept. If the current file does not
// Load, PutAll returns that error and leaves the file untouched. It never
// leaves its temp file behind; temp files of writers that crashed are
// removed while the lock is held.
func PutAll(path string, es []Entry) error {
	_, err := putSources(path, []Source{{Name: "new", Entries: es}})
	return err
}

// putSources merges srcs into the file at path under its lock, and says
// what the merge kept and dropped. The file is rewritten only when its
// entries change.
func putSources(path string, srcs []Source) (m Merged, err error) {
	return putSourcesCtx(context.Background(), path, LockWait{}, srcs)
}

// putSourcesCtx is putSources with the lock wait ending with ctx or w.
func putSourcesCtx(ctx context.Context, path string, w LockWait, srcs []Source) (m Merged, err error) {
	n := 0
	for _, src := range srcs {
		for _, e := range src.Entries {
			if _, cerr := check(e); cerr != nil {
				return Merged{}, fmt.Errorf("write cache %s: entry %s: %w", path, e.Key, cerr)
			}
			n++
		}
	}
	if n == 0 {
		return Merged{}, nil
	}
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, rerr := filepath.EvalSymlinks(path); rerr == nil {
			path = target
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Merged{}, fmt.Errorf("write cache %s: %w", path, err)
	}
	if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
		return Merged{}, notRegular(path, fi) // never renamed over
	}
	lock, err := lock(ctx, path, w)
	if err != nil {
		return Merged{}, err
	}
	defer func() {
		if uerr := lock.Unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("write cache %s: unlock: %w", path, uerr)
		}
	}()

	cur, err := Load(path)
	if err != nil {
		return Merged{}, err
	}
	removeStaleTemps(path)

	// Only the slots srcs write can change: the rest of a large file is
	// copied, not merged again (each merge checks and encodes an entry).
	touched := map[Slot]bool{}
	for _, src := range srcs {
		for _, e := range src.Entries {
			touched[e.Key.Slot().AnyVersion()] = true
		}
	}
	var stored, others []Entry
	for _, e := range cur.entries {
		if touched[e.Key.Slot().AnyVersion()] {
			stored = append(stored, e)
		} else {
			others = append(others, e)
		}
	}
	kept, rejected := rejectStored(path, stored, srcs)
	damaged := append(cur.damaged, rejected...)
	m, err = Merge(append([]Source{{Name: path, Entries: kept}}, srcs...)...)
	if err != nil {
		return Merged{}, fmt.Errorf("write cache %s: %w", path, err)
	}
	if len(rejected) == 0 && sameEntries(stored, m.Entries) {
		return m, nil // nothing changed: no rewrite, no new mtime
	}
	all := append(others, m.Entries...)
	sortEntries(all)
	data, err := encode(all)
	if err != nil {
		return Merged{}, fmt.Errorf("write cache %s: %w", path, err)
	}
	if len(damaged) > 0 {
		// The rewrite drops what could not be loaded: keep it first.
		aside := path + DamagedSuffix
		if err := setAside(aside, damaged); err != nil {
			return Merged{}, fmt.Errorf("write cache %s: keep its damaged entries in %s: %w", path, aside, err)
		}
		m.SetAside, m.SetAsideTo = damaged, aside
	}
	if err := writeAtomic(path, data); err != nil {
		return Merged{}, fmt.Errorf("write cache %s: %w", path, err)
	}
	return m, nil
}

// DamagedSuffix names the file beside a cache where writes keep the
// damaged entries they drop from it: path + DamagedSuffix.
const DamagedSuffix = ".damaged"

// setAside appends the damaged records to the file aside, each after a
// comment saying where it came from and why, and syncs it. It is not a
// cache file: it is kept for a person to read.
func setAside(aside string, ds []Damage) error {
	f, err := os.OpenFile(aside, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	stamp := time.Now().UTC().Format(time.RFC3339)
	for _, d := range ds {
		fmt.Fprintf(&b, "\n# set aside %s: %s\n", stamp, strings.ReplaceAll(d.Error(), "\n", " "))
		b.Write(d.Raw)
		if len(d.Raw) > 0 && d.Raw[len(d.Raw)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sameEntries reports whether two sorted entry lists are the same.
func sameEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Key.Slot() != y.Key.Slot() || !x.Config.Equal(y.Config) || x.HardwareInfo != y.HardwareInfo ||
			x.MedianUS != y.MedianUS || x.MinUS != y.MinUS || x.P90US != y.P90US ||
			x.DefaultMedianUS != y.DefaultMedianUS || x.Trials != y.Trials || !x.TunedAt.Equal(y.TunedAt) {
			return false
		}
	}
	return true
}

// tempPrefix starts the names of path's temp files: hidden, in the same
// directory, recognisable for the stale-temp sweep.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// removeStaleTemps deletes temp files that writers killed mid-write left
// behind. It must run under the lock: then no live writer has one open.
func removeStaleTemps(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), escapeGlob(tempPrefix(path))+"*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
			os.Remove(m)
		}
	}
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// beforeRename, when set (by tests), runs after the temp file is complete
// and before it replaces the cache file; an error aborts the write.
var beforeRename func(tmp string) error

func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	mode := fs.FileMode(0o644)
	if fi, serr := os.Stat(path); serr == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if beforeRename != nil {
		if err = beforeRename(tmp); err != nil {
			return err
		}
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes the rename durable. File systems that cannot fsync a
// directory (EINVAL) are accepted as they are.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// checkWritable refuses a cache path that is not a regular file, or where
// no cache file can be written: see File.Check.
func checkWritable(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target
		}
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return notRegular(path, fi)
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return &FileError{path: path, msg: fmt.Sprintf("cannot be read: %v", err), err: err}
	}
	// The nearest directory that exists: the rest is created at the first
	// write.
	dir := filepath.Dir(path)
	for {
		di, err := os.Stat(dir)
		if err == nil {
			if !di.IsDir() {
				return &FileError{path: path, msg: fmt.Sprintf("cannot be written: %s is not a directory", dir)}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return &FileError{path: path, msg: fmt.Sprintf("cannot be written: %v", err), err: err}
		}
		dir = filepath.Dir(dir)
	}
	// A real probe, not permission bits: root, read-only mounts and ACLs
	// all answer here.
	probe, err := os.CreateTemp(dir, tempPrefix(path)+"probe-*")
	if err != nil {
		return &FileError{path: path, msg: fmt.Sprintf("cannot be written: %v", err), err: err}
	}
	probe.Close()
	os.Remove(probe.Name())
	if f, err := os.OpenFile(path+".lock", os.O_WRONLY, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return &FileError{path: path, msg: fmt.Sprintf("cannot be written: its lock file: %v", err), err: err}
	}
	return nil
}

// rejectStored splits the stored entries into those to merge and those a
// source's Reject turns down (in the slots it writes), as damage.
func rejectStored(location string, stored []Entry, srcs []Source) ([]Entry, []Damage) {
	var out []Entry
	var rejected []Damage
	for _, e := range stored {
		if err := RejectedBy(e, srcs); err != nil {
			raw, _ := EncodeEntry(e)
			rejected = append(rejected, Damage{Location: location, Kernel: e.Kernel,
				Reason: fmt.Sprintf("entry %s: %v", e.Key, err), Raw: raw})
			continue
		}
		out = append(out, e)
	}
	return out, rejected
}

// RejectedBy is why a source writing to stored's slot rejects it (see
// Source.Reject); nil when none does.
func RejectedBy(stored Entry, srcs []Source) error {
	slot := stored.Key.Slot().AnyVersion()
	for _, src := range srcs {
		if src.Reject == nil {
			continue
		}
		for _, e := range src.Entries {
			if e.Key.Slot().AnyVersion() == slot {
				if err := src.Reject(stored); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

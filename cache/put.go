package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gofrs/flock"
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
	lock := flock.New(path+".lock", flock.SetPermissions(0o644))
	if err := lock.Lock(); err != nil {
		return Merged{}, fmt.Errorf("write cache %s: lock: %w", path, err)
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

	m, err = Merge(append([]Source{{Name: path, Entries: cur.entries}}, srcs...)...)
	if err != nil {
		return Merged{}, fmt.Errorf("write cache %s: %w", path, err)
	}
	data, err := encode(m.Entries)
	if err != nil {
		return Merged{}, fmt.Errorf("write cache %s: %w", path, err)
	}
	if old, err := encode(cur.entries); err == nil && bytes.Equal(old, data) {
		return m, nil // nothing changed: no rewrite, no new mtime
	}
	if err := writeAtomic(path, data); err != nil {
		return Merged{}, fmt.Errorf("write cache %s: %w", path, err)
	}
	return m, nil
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

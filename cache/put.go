package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gofrs/flock"
)

// Put stores e in the cache file at path, replacing the entry with an Equal
// key or adding it. See PutAll.
func Put(path string, e Entry) error { return PutAll(path, []Entry{e}) }

// PutAll stores es in the cache file at path in one locked write; within
// es, a later entry replaces an earlier one with an Equal key.
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
func PutAll(path string, es []Entry) (err error) {
	checked := make([]Entry, len(es))
	for i, e := range es {
		c, cerr := check(e)
		if cerr != nil {
			return fmt.Errorf("write cache %s: entry %s: %w", path, e.Key, cerr)
		}
		checked[i] = c
	}
	if len(checked) == 0 {
		return nil
	}
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, rerr := filepath.EvalSymlinks(path); rerr == nil {
			path = target
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write cache %s: %w", path, err)
	}
	lock := flock.New(path+".lock", flock.SetPermissions(0o644))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("write cache %s: lock: %w", path, err)
	}
	defer func() {
		if uerr := lock.Unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("write cache %s: unlock: %w", path, uerr)
		}
	}()

	cur, err := Load(path)
	if err != nil {
		return err
	}
	removeStaleTemps(path)

	merged := cur.entries
	index := make(map[string]int, len(merged)+len(checked))
	for i, e := range merged {
		index[e.Key.ident()] = i
	}
	for _, e := range checked {
		id := e.Key.ident()
		if i, ok := index[id]; ok {
			merged[i] = e
		} else {
			index[id] = len(merged)
			merged = append(merged, e)
		}
	}
	sortEntries(merged)
	data, err := encode(merged)
	if err != nil {
		return fmt.Errorf("write cache %s: %w", path, err)
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("write cache %s: %w", path, err)
	}
	return nil
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

package cache

import (
	"context"
	"errors"
)

// Storage is where tuned configs are kept: a TOML file (File) or a shared
// server (package cache/storage opens either from a location string).
// Every Storage keeps one entry per slot and decides between entries with
// Merge's rule, so a file and a server given the same entries hold the
// same winners.
type Storage interface {
	// Location names the storage for messages. It never holds
	// credentials.
	Location() string
	// Load returns a snapshot of every entry. Each entry is whole: it was
	// written entirely or not at all.
	Load(ctx context.Context) (*Store, error)
	// Put merges srcs into the storage by Merge's rule, safely against
	// concurrent writers anywhere, and returns what the merge kept and
	// dropped in the slots srcs write (other slots are left as they are). An error leaves every entry either as it was or as the
	// merge decided, never in between.
	Put(ctx context.Context, srcs ...Source) (Merged, error)
	// Check makes sure the storage can take writes before work whose
	// results it must keep begins: a file path that is a regular file
	// (or absent) whose directory can be written; a server that accepts
	// the connection and credentials.
	Check(ctx context.Context) error
	// Close releases connections; the file store has none.
	Close() error
}

// ErrUnavailable marks a storage that cannot be reached (a lost or refused
// connection). Searches stop at it instead of tuning jobs whose winners
// could not be stored.
var ErrUnavailable = errors.New("cache unavailable")

// File is the Storage of one TOML cache file (see Load and PutAll).
type File struct {
	Path string
	// Lock says how Put waits for another writer's lock.
	Lock LockWait
}

// Location is the file's path.
func (f File) Location() string { return f.Path }

// Load reads the file; a missing file is an empty store.
func (f File) Load(context.Context) (*Store, error) { return Load(f.Path) }

// Put merges srcs into the file in one locked, atomic rewrite. The wait for
// the lock ends with ctx (or f.Lock.Timeout); once the lock is held, the
// write is finished whatever ctx does, so an interrupt never leaves half
// of it.
func (f File) Put(ctx context.Context, srcs ...Source) (Merged, error) {
	return putSourcesCtx(ctx, f.Path, f.Lock, srcs)
}

// Check refuses a path that is not a regular file (a device, a FIFO, a
// directory) and one that cannot be written, without writing to it: it
// creates and removes a probe file in the nearest existing directory of
// the path, and opens an existing lock file for writing.
func (f File) Check(context.Context) error { return checkWritable(f.Path) }

// Close does nothing.
func (File) Close() error { return nil }

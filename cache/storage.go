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
	// dropped. An error leaves every entry either as it was or as the
	// merge decided, never in between.
	Put(ctx context.Context, srcs ...Source) (Merged, error)
	// Close releases connections; the file store has none.
	Close() error
}

// ErrUnavailable marks a storage that cannot be reached (a lost or refused
// connection). Searches stop at it instead of tuning jobs whose winners
// could not be stored.
var ErrUnavailable = errors.New("cache unavailable")

// File is the Storage of one TOML cache file (see Load and PutAll).
type File struct{ Path string }

// Location is the file's path.
func (f File) Location() string { return f.Path }

// Load reads the file; a missing file is an empty store.
func (f File) Load(context.Context) (*Store, error) { return Load(f.Path) }

// Put merges srcs into the file in one locked, atomic rewrite.
func (f File) Put(_ context.Context, srcs ...Source) (Merged, error) { return putSources(f.Path, srcs) }

// Close does nothing.
func (File) Close() error { return nil }

// Package storage opens a tuned-config cache by its location: a file path
// (cache.File) or a Redis server shared by a fleet of tuning nodes
// (redis:// or rediss:// URL). Both keep one entry per slot and choose
// between entries by cache.Merge's rule, so they hold the same winners.
//
// Locations may carry credentials (redis://user:password@host:6379/0);
// nothing this package returns — Location, errors — ever contains them.
package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/symmtune/symmtune/cache"
)

// Environment variables with Redis credentials, used when the URL has none:
// they keep passwords out of command lines (and so out of `ps`).
const (
	EnvRedisUsername = "SYMMTUNE_REDIS_USERNAME"
	EnvRedisPassword = "SYMMTUNE_REDIS_PASSWORD"
)

// LocationError is a cache location that cannot be used as one (an unknown
// URL scheme, a malformed Redis URL): bad input. Its message has no
// credentials.
type LocationError struct{ msg string }

func (e *LocationError) Error() string { return e.msg }

// Open returns the storage at loc: a Redis server for redis:// and
// rediss:// URLs, else the cache file at path loc. It does not connect:
// the first Load or Put does, and reports an unreachable server.
func Open(loc string) (cache.Storage, error) { return OpenEnv(loc, os.Getenv) }

// OpenEnv is Open with the credentials' environment variables read through
// getenv: for a caller whose environment is not this process's as Go saw
// it at start (libsymmtune in a Python process that set them since).
func OpenEnv(loc string, getenv func(string) string) (cache.Storage, error) {
	switch {
	case loc == "":
		return nil, &LocationError{"no cache location given"}
	case isRedis(loc):
		return openRedis(loc, getenv)
	case strings.Contains(loc, "://"):
		scheme, _, _ := strings.Cut(loc, "://")
		return nil, &LocationError{fmt.Sprintf("cache location %s: unknown scheme %q (want a file path, redis:// or rediss://)", redactRaw(loc), scheme)}
	}
	return cache.File{Path: loc}, nil
}

func isRedis(loc string) bool {
	l := strings.ToLower(loc)
	return strings.HasPrefix(l, "redis://") || strings.HasPrefix(l, "rediss://")
}

// Redact is loc as it may be shown: a URL without its user and password.
func Redact(loc string) string {
	if !strings.Contains(loc, "://") {
		return loc
	}
	if isRedis(loc) {
		if o, err := parseRedisURL(loc, os.Getenv); err == nil {
			return o.location
		}
	}
	return redactRaw(loc)
}

// redactRaw hides whatever sits between "://" and the last "@", and any
// query or fragment: enough for text that does not parse as a URL (a
// password may hold '/' or '@').
func redactRaw(loc string) string {
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		return loc
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i] + "?…"
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		return scheme + "://***@" + rest[i+1:]
	}
	return scheme + "://" + rest
}

// LocalDir is the local directory that goes with a cache location, for
// trial logs: the file's directory, or for a server the directory of this
// user's default cache file.
func LocalDir(loc string) string {
	if strings.Contains(loc, "://") {
		return filepath.Dir(cache.DefaultFilePath())
	}
	return filepath.Dir(loc)
}

package libops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/cache/storage"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

// cacheOps serve the tuned-config cache to the Python runtime
// (symmtune.lookup, symmtune.load) from the Go cache and storage packages,
// the one implementation of the file format, the Redis layout and
// Store.Lookup's rules.
//
// What the cache's user must act on is an answer, not a failure: a
// request whose cache is missing, corrupt or unreachable, or whose machine
// cannot be fingerprinted, answers {"error": {"kind", "message"}} with
// kind not_found, corrupt, unavailable, io or hardware (the Python
// package raises its exception of that kind). A malformed query is bad
// input.
func cacheOps() map[string]op {
	return map[string]op{
		"cache.default_path": handler("the cache location of {env}: $SYMMTUNE_CACHE, else the user's cache file: {path}",
			func(r envReq) (any, error) {
				return map[string]string{"path": cache.DefaultPathEnv(r.getenv)}, nil
			}),
		"cache.load": handler("every entry of the cache at {cache} (default: cache.default_path), credentials from {env}: {location, entries} or {error}",
			func(r loadReq) (any, error) {
				st, loc, failure := load(r.Cache, r.envReq)
				if failure != nil {
					return failure, nil
				}
				es := st.Entries()
				out := make([]map[string]any, len(es))
				for i, e := range es {
					out[i] = e.JSON(true)
				}
				return map[string]any{"location": loc, "entries": out, "damaged": damaged(st)}, nil
			}),
		"cache.lookup": handler("Store.Lookup of {kernel, world, dtype, shape, backend, kernel_version, hardware: a fingerprint, \"any\" or null for this machine's} in the cache at {cache}: {location, match} or {error}",
			lookup),
	}
}

// envReq carries the caller's environment: a library in a Python process
// sees the environment as it was when the library loaded, not the
// variables set since. Without env, this process's is read.
type envReq struct {
	Env map[string]string `json:"env"`
}

func (r envReq) getenv(k string) string {
	if r.Env == nil {
		return os.Getenv(k)
	}
	return r.Env[k]
}

type loadReq struct {
	envReq
	Cache string `json:"cache"`
}

// failure is the answer to a request whose cache or machine fails.
func failure(kind, msg string) map[string]any {
	return map[string]any{"error": map[string]string{"kind": kind, "message": msg}}
}

// loadTimeout bounds reading a cache server.
const loadTimeout = 60 * time.Second

// load opens and reads the cache at loc (default: the environment's): the
// store and its location, or the failure to answer.
func load(loc string, env envReq) (*cache.Store, string, map[string]any) {
	if loc == "" {
		loc = cache.DefaultPathEnv(env.getenv)
	}
	st, err := storage.OpenEnv(loc, env.getenv)
	if err != nil {
		return nil, "", failure("corrupt", err.Error())
	}
	defer st.Close()
	where := st.Location()
	var store *cache.Store
	if f, ok := st.(cache.File); ok {
		store, err = files.load(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, where, failure("not_found", fmt.Sprintf("no tuned configs: cache %s does not exist (run `symmtune search` first)", where))
		}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
		defer cancel()
		store, err = st.Load(ctx)
	}
	var pathErr *fs.PathError
	switch {
	case err == nil:
		return store, where, nil
	case errors.Is(err, cache.ErrUnavailable):
		return nil, where, failure("unavailable", err.Error())
	case errors.As(err, &pathErr):
		return nil, where, failure("io", err.Error())
	}
	return nil, where, failure("corrupt", err.Error())
}

// fileStores keeps the stores of cache files read, by path, while the file
// stays the same one (device and inode: a cache is rewritten by renaming a
// new file over it) with the same size and modification time: the runtime
// looks up once per operation and shape, and reads a file once.
type fileStores struct {
	mu sync.Mutex
	m  map[string]fileStore
}

type fileStore struct {
	info  fs.FileInfo
	store *cache.Store
}

// maxFileStores bounds the files kept; past it the oldest are forgotten.
const maxFileStores = 16

var files = &fileStores{m: map[string]fileStore{}}

// load is cache.Load(path), from memory while the file is unchanged; a
// missing file is fs.ErrNotExist.
func (c *fileStores) load(path string) (*cache.Store, error) {
	// Stat before reading: a file replaced in between is read new and kept
	// under the old stat, so the next call reads it again.
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read cache: %w", err)
	}
	c.mu.Lock()
	kept, ok := c.m[path]
	c.mu.Unlock()
	if ok && os.SameFile(kept.info, info) && kept.info.Size() == info.Size() && kept.info.ModTime().Equal(info.ModTime()) {
		return kept.store, nil
	}
	store, err := cache.Load(path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[path]; !ok && len(c.m) >= maxFileStores {
		clear(c.m)
	}
	c.m[path] = fileStore{info: info, store: store}
	return store, nil
}

type lookupReq struct {
	loadReq
	Kernel        string           `json:"kernel"`
	World         int              `json:"world"`
	Dtype         string           `json:"dtype"`
	Shape         map[string]int64 `json:"shape"`
	Backend       string           `json:"backend"`
	KernelVersion string           `json:"kernel_version"`
	Hardware      json.RawMessage  `json:"hardware"`
}

// machine reads the request's hardware: nil for "any", the fingerprint
// given, or (null or absent) this machine's for the backend.
func (r lookupReq) machine() (*hardware.Fingerprint, map[string]any, error) {
	if len(r.Hardware) == 0 || string(r.Hardware) == "null" {
		if r.Backend == "" {
			return nil, nil, bad("hardware null fingerprints this machine for a backend: name one, or pass hardware \"any\"")
		}
		f, err := machineFingerprint(r.Backend, r.World)
		if err != nil {
			var b *BadInputError
			if errors.As(err, &b) {
				return nil, nil, err
			}
			return nil, failure("hardware", err.Error()), nil
		}
		return &f, nil, nil
	}
	var word string
	if err := json.Unmarshal(r.Hardware, &word); err == nil {
		if word != "any" {
			return nil, nil, bad("hardware %q: want a fingerprint, null (this machine) or \"any\"", word)
		}
		return nil, nil, nil
	}
	f, err := decodeFingerprint(r.Hardware)
	if err != nil {
		return nil, nil, err
	}
	return &f, nil, nil
}

func lookup(r lookupReq) (any, error) {
	m, store, where, fail, err := find(r)
	if err != nil || fail != nil {
		return fail, err
	}
	return map[string]any{"location": where, "match": m.JSON(true), "damaged": damaged(store)}, nil
}

// damaged is what a load left out of the store, one message each: the
// Python package warns with them (a damaged entry is skipped, not an error
// that stops every lookup).
func damaged(s *cache.Store) []string {
	out := []string{}
	for _, d := range s.Damaged() {
		out = append(out, d.Error()+"; skipped")
	}
	return out
}

// find is Store.Lookup of r: the match and the cache's location, or the
// failure to answer (kind not_found when nothing matches or there is no
// cache yet), or bad input.
func find(r lookupReq) (cache.Match, *cache.Store, string, map[string]any, error) {
	if r.Kernel == "" || r.Dtype == "" {
		return cache.Match{}, nil, "", nil, bad("kernel and dtype: both required")
	}
	if r.World < 1 {
		return cache.Match{}, nil, "", nil, bad("world size %d: want at least 1", r.World)
	}
	if len(r.Shape) == 0 {
		return cache.Match{}, nil, "", nil, bad("shape: want dimension names and sizes, e.g. {\"n\": 1048576}")
	}
	for name, v := range r.Shape {
		if v <= 0 {
			return cache.Match{}, nil, "", nil, bad("shape: dimension %q = %d must be a positive integer", name, v)
		}
	}
	machine, fail, err := r.machine()
	if err != nil || fail != nil {
		return cache.Match{}, nil, "", fail, err
	}
	store, where, fail := load(r.Cache, r.envReq)
	if fail != nil {
		return cache.Match{}, nil, where, fail, nil
	}
	q := cache.Query{Kernel: r.Kernel, World: r.World, Dtype: r.Dtype, Shape: space.Shape(r.Shape),
		KernelVersion: r.KernelVersion, Backend: r.Backend, Machine: machine}
	m, ok := store.Lookup(q)
	if !ok {
		msg := fmt.Sprintf("no tuned config for %s world %d %s %s in %s", r.Kernel, r.World, r.Dtype, q.Shape, where)
		if d := store.Damaged(); len(d) > 0 {
			msg += fmt.Sprintf(" (%d damaged entries were skipped; the first: %v)", len(d), d[0])
		}
		return cache.Match{}, nil, where, failure("not_found", msg), nil
	}
	return m, store, where, nil, nil
}

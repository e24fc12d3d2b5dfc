//go:build cuda

// Package nvrtc compiles CUDA C at run time for the GPU symmtune runs on.
// NVRTC is loaded with dlopen (the newest libnvrtc.so.N present), so one
// binary works with the CUDA 12 and 13 toolkits and the build links against
// no toolkit at all. Each compile targets the device's own architecture
// (sm_90a on an H200) and its machine code (cubin) is cached on disk under
// $XDG_CACHE_HOME/symmtune/cubin (or ~/.cache/...), keyed by the source, the
// options, the architecture and the NVRTC version, so a config compiled once
// (by Precompile on one rank, say) loads instantly everywhere after.
package nvrtc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

var (
	loadOnce sync.Once
	libName  string
	libMajor int
	libMinor int
	loadErr  error
)

func load() error {
	loadOnce.Do(func() {
		libName, loadErr = open()
		if loadErr != nil {
			return
		}
		libMajor, libMinor, loadErr = version()
		if loadErr == nil {
			slog.Debug("nvrtc loaded", "lib", libName, "version", fmt.Sprintf("%d.%d", libMajor, libMinor))
		}
	})
	return loadErr
}

// Version returns the loaded NVRTC's version, loading it if needed.
func Version() (major, minor int, err error) {
	if err := load(); err != nil {
		return 0, 0, err
	}
	return libMajor, libMinor, nil
}

// Arch returns the --gpu-architecture value for a compute capability:
// the architecture-specific variant ("sm_90a") for Hopper and newer, whose
// extra instructions (wgmma, setmaxnreg) need it, and plain sm_XY before.
func Arch(major, minor int) string {
	a := fmt.Sprintf("sm_%d%d", major, minor)
	if major >= 9 {
		a += "a"
	}
	return a
}

// Compiler compiles for one architecture with a disk cache.
type Compiler struct {
	Arch string // e.g. "sm_90a"
	// CacheDir holds cubins; empty means DefaultCacheDir().
	CacheDir string
	// Options go before every Source's own (cudamem: the waits' bound),
	// so one compiler carries them to every kernel built with it.
	Options []string
}

// DefaultCacheDir is $SYMMTUNE_CUBIN_CACHE, else $XDG_CACHE_HOME/symmtune/cubin,
// else ~/.cache/symmtune/cubin, else a folder under the temp dir.
func DefaultCacheDir() string {
	if d := os.Getenv("SYMMTUNE_CUBIN_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "symmtune", "cubin")
	}
	return filepath.Join(os.TempDir(), "symmtune-cubin")
}

// Source is one program to compile: its text, a name for diagnostics, and
// the options (macros -DNAME=V for config values) besides the architecture.
type Source struct {
	Name    string
	Text    string
	Options []string
}

func (c Compiler) dir() string {
	if c.CacheDir != "" {
		return c.CacheDir
	}
	return DefaultCacheDir()
}

func (c Compiler) options(s Source) []string {
	opts := []string{"--gpu-architecture=" + c.Arch, "-std=c++17", "-default-device"}
	opts = append(opts, c.Options...)
	return append(opts, s.Options...)
}

// Key is the cache key of s under this compiler and the loaded NVRTC.
func (c Compiler) Key(s Source) (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "nvrtc %d.%d\x00arch %s\x00", libMajor, libMinor, c.Arch)
	for _, o := range c.options(s) {
		h.Write([]byte(o))
		h.Write([]byte{0})
	}
	h.Write([]byte(s.Text))
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// Compile returns the cubin for s, from the disk cache when present.
func (c Compiler) Compile(s Source) ([]byte, error) {
	key, err := c.Key(s)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(c.dir(), key+".cubin")
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return b, nil
	}
	start := time.Now()
	cubin, log, err := compileRaw(s.Text, s.Name, c.options(s))
	if err != nil {
		return nil, fmt.Errorf("compile %s %v for %s: %w\n%s", s.Name, s.Options, c.Arch, err, log)
	}
	slog.Debug("nvrtc compiled", "name", s.Name, "options", s.Options, "arch", c.Arch, "bytes", len(cubin), "took", time.Since(start))
	if err := writeAtomic(path, cubin); err != nil {
		// A read-only cache costs recompiles, not correctness.
		slog.Warn("cubin cache not written", "path", path, "err", err)
	}
	return cubin, nil
}

// PtxasInfo compiles s (never from the cache) with ptxas's verbose report
// and returns it: per kernel, registers, stack frame and spill bytes. Tests
// use it to check that configurations a Validate accepts do not spill.
func (c Compiler) PtxasInfo(s Source) (string, error) {
	_, log, err := c.CompileInfo(s)
	return log, err
}

// CompileInfo is PtxasInfo that also returns the cubin, for tests that read
// the compiled code as well (its SASS).
func (c Compiler) CompileInfo(s Source) (cubin []byte, log string, err error) {
	if err := load(); err != nil {
		return nil, "", err
	}
	cubin, log, err = compileRaw(s.Text, s.Name, append(c.options(s), "--ptxas-options=-v"))
	if err != nil {
		return nil, "", fmt.Errorf("compile %s %v for %s: %w\n%s", s.Name, s.Options, c.Arch, err, log)
	}
	return cubin, log, nil
}

// writeAtomic writes through a temp file and a rename, so ranks compiling
// the same key at once never read a half-written cubin.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cubin cache dir: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("cubin temp file: %w", err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write cubin: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("rename cubin: %w", err)
	}
	return nil
}

// CompileAll compiles every source on all CPU cores (NVRTC is thread-safe
// per program) and returns one error or nil per source; results land in the
// disk cache, where Compile finds them.
func (c Compiler) CompileAll(ctx context.Context, srcs []Source) []error {
	errs := make([]error, len(srcs))
	if err := load(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				_, errs[i] = c.Compile(srcs[i])
			}
		}()
	}
	for i := range srcs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return errs
}

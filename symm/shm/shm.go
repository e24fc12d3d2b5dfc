// Package shm is the CPU backend of symmetric memory: each rank's region is
// a file in /dev/shm (else the temp dir) that every rank of the group maps
// with MAP_SHARED. Ranks synchronize on words in those mappings with atomic
// operations and shared futexes. The files are unlinked as soon as every
// rank has mapped them, so a rank killed at any later point leaks nothing.
package shm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/symm"
)

// padBytes is the signal-pad area at the start of every region, kept apart
// from data so kernels' flags never share a cache line with payload.
const padBytes = 4096

// FilePrefix starts the name of every shared-memory file symmtune creates,
// so tests and operators can tell whether any were left behind.
const FilePrefix = "symmtune-"

// Dir is where regions are created: /dev/shm when it is a writable
// directory, else the temp dir.
func Dir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// Backend allocates regions in shared memory.
type Backend struct{}

// Name implements symm.Backend.
func (Backend) Name() string { return "cpu" }

// Hardware implements symm.Backend.
func (Backend) Hardware(int) (hardware.Fingerprint, error) { return hardware.CPU(), nil }

// Allocate creates and maps this rank's region.
func (Backend) Allocate(_ context.Context, rank, world int, bytes int64, groupID string) (symm.Pending, []byte, error) {
	if world < 1 || rank < 0 || rank >= world {
		return nil, nil, fmt.Errorf("rank %d of world %d", rank, world)
	}
	if bytes < 0 {
		return nil, nil, fmt.Errorf("negative size %d", bytes)
	}
	if strings.ContainsAny(groupID, "/\x00") || groupID == "" {
		return nil, nil, fmt.Errorf("bad group id %q", groupID)
	}
	dir := Dir()
	path := filepath.Join(dir, fmt.Sprintf("%s%s-r%d", FilePrefix, groupID, rank))
	size := padBytes + roundUp(bytes, padBytes)
	if err := checkFree(dir, world, size); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("create shared memory %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("size shared memory %s to %d bytes: %w", path, size, err)
	}
	// Reserve the pages now: a file that is only truncated takes its pages
	// at first touch, and a full tmpfs then kills the rank with SIGBUS mid-
	// trial, a "crash" of every config. A file system without fallocate
	// keeps the sparse file (the check above still ran).
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		os.Remove(path)
		if errors.Is(err, unix.ENOSPC) {
			return nil, nil, fmt.Errorf("reserve %s of shared memory in %s for rank %d: %w (other processes took the space since the check)", formatBytes(size), dir, rank, err)
		}
		return nil, nil, fmt.Errorf("reserve shared memory %s (%d bytes): %w", path, size, err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("map shared memory %s: %w", path, err)
	}
	return &pending{rank: rank, world: world, path: path, size: size, own: mem}, []byte(path), nil
}

func roundUp(x, to int64) int64 { return (x + to - 1) / to * to }

// checkFree refuses a group whose regions cannot fit in dir: every rank's
// file of size bytes lives there. The error names the shortfall, so a full
// or small /dev/shm (a container's 64 MiB default) is found at setup, not
// as every trial crashing.
func checkFree(dir string, world int, size int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil // nothing to go by; the fallocate below still reserves
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	need, ok := mulFits(int64(world), size)
	if ok && need <= free {
		return nil
	}
	if !ok {
		return fmt.Errorf("shared memory: %d ranks of %s each do not fit in %s (%s free)", world, formatBytes(size), dir, formatBytes(free))
	}
	ranks := fmt.Sprintf("%d ranks need", world)
	if world == 1 {
		ranks = "1 rank needs"
	}
	return fmt.Errorf("shared memory: %s %s in %s (%s each), which has %s free: %s short; free space there, or tune a smaller shape or fewer ranks",
		ranks, formatBytes(need), dir, formatBytes(size), formatBytes(free), formatBytes(need-free))
}

// mulFits multiplies, reporting whether the product fits in an int64.
func mulFits(a, b int64) (int64, bool) {
	if a > 0 && b > (1<<63-1)/a {
		return 0, false
	}
	return a * b, true
}

// formatBytes prints a size in binary units: "64.0 MiB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

type pending struct {
	rank, world int
	path        string
	size        int64
	own         []byte
}

func (p *pending) Close() error {
	var errs []error
	if p.own != nil {
		errs = append(errs, unix.Munmap(p.own))
		p.own = nil
	}
	if p.path != "" {
		if err := os.Remove(p.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		p.path = ""
	}
	return errors.Join(errs...)
}

// Connect maps every peer's region, waits until every rank has done the
// same, and unlinks this rank's file.
func (p *pending) Connect(ctx context.Context, blobs [][]byte) (symm.Team, error) {
	if len(blobs) != p.world {
		return nil, fmt.Errorf("got %d blobs for world %d", len(blobs), p.world)
	}
	t := &Team{rank: p.rank, world: p.world, regions: make([][]byte, p.world)}
	for r, b := range blobs {
		if r == p.rank {
			t.regions[r] = p.own
			continue
		}
		mem, err := mapPeer(string(b), p.size)
		if err != nil {
			t.unmapPeers()
			return nil, fmt.Errorf("rank %d: map peer %d: %w", p.rank, r, err)
		}
		t.regions[r] = mem
	}
	if err := t.Barrier(ctx); err != nil {
		t.unmapPeers()
		return nil, fmt.Errorf("rank %d: connect barrier: %w", p.rank, err)
	}
	if err := os.Remove(p.path); err != nil {
		t.unmapPeers()
		return nil, fmt.Errorf("unlink %s: %w", p.path, err)
	}
	p.own, p.path = nil, ""
	return t, nil
}

func mapPeer(path string, size int64) ([]byte, error) {
	if !strings.HasPrefix(filepath.Base(path), FilePrefix) {
		return nil, fmt.Errorf("%q is not a symmtune shared-memory file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != size {
		return nil, fmt.Errorf("%s has %d bytes, want %d", path, st.Size(), size)
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}

// Team is a rank's view of the group's regions.
type Team struct {
	rank, world int
	regions     [][]byte
}

// Rank implements symm.Team.
func (t *Team) Rank() int { return t.rank }

// World implements symm.Team.
func (t *Team) World() int { return t.world }

// Data is rank r's data region (this rank's own when r == Rank()).
func (t *Team) Data(r int) []byte { return t.regions[r][padBytes:] }

// Local is this rank's own data region.
func (t *Team) Local() []byte { return t.Data(t.rank) }

// Close unmaps every region.
func (t *Team) Close() error {
	t.unmapPeers()
	return nil
}

func (t *Team) unmapPeers() {
	for r, m := range t.regions {
		if m != nil {
			_ = unix.Munmap(m)
			t.regions[r] = nil
		}
	}
}

// padWord returns the i-th 32-bit word of rank r's signal pad.
func (t *Team) padWord(r, i int) *uint32 {
	return (*uint32)(unsafe.Pointer(&t.regions[r][i*4]))
}

// Barrier blocks until every rank of the team has called it. It is a
// central sense-reversing barrier on rank 0's pad (word 0 counts arrivals,
// word 1 is the generation the last arriver bumps), so it can be called any
// number of times back to back. It gives up when ctx ends.
func (t *Team) Barrier(ctx context.Context) error {
	count, gen := t.padWord(0, 0), t.padWord(0, 1)
	g := atomic.LoadUint32(gen)
	if atomic.AddUint32(count, 1) == uint32(t.world) {
		atomic.StoreUint32(count, 0)
		atomic.AddUint32(gen, 1)
		futexWakeAll(gen)
		return nil
	}
	return WaitUntil(ctx, gen, func(v uint32) bool { return v != g })
}

// Uint32 returns a pointer to the aligned 32-bit word at byte offset off of
// region b, for flags that kernels keep in their data regions.
func Uint32(b []byte, off int) *uint32 {
	if off%4 != 0 || off+4 > len(b) {
		panic(fmt.Sprintf("shm.Uint32: offset %d in %d bytes", off, len(b)))
	}
	return (*uint32)(unsafe.Pointer(&b[off]))
}

// Store sets a shared word and wakes its waiters.
func Store(w *uint32, v uint32) {
	atomic.StoreUint32(w, v)
	futexWakeAll(w)
}

// Add increments a shared word and wakes its waiters.
func Add(w *uint32, d uint32) uint32 {
	v := atomic.AddUint32(w, d)
	futexWakeAll(w)
	return v
}

// spinRounds is how often a waiter polls before it sleeps on the futex.
// Ranks usually outnumber cores on small machines, so spinning long would
// steal the time the awaited rank needs.
const spinRounds = 64

// WaitUntil blocks until ok(*w) holds or ctx ends. Writers must use Store
// or Add, which wake sleepers.
func WaitUntil(ctx context.Context, w *uint32, ok func(uint32) bool) error {
	for i := 0; ; i++ {
		v := atomic.LoadUint32(w)
		if ok(v) {
			return nil
		}
		if i < spinRounds {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		futexWaitFor(w, v, 5*time.Millisecond)
	}
}

//go:build cuda

package libops

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// rankThread runs closures on one locked OS thread with device 0's
// primary context current: one rank of a world-2 group in this process.
type rankThread struct{ fns chan func() }

// keepContext holds device 0's primary context for the test binary's
// life, as torch does for a program's: the runtime keeps what it opened on
// it (the shared engine, the workspaces' host words) for the process.
var keepContext sync.Once

func newRankThread(t *testing.T) *rankThread {
	t.Helper()
	keepContext.Do(func() { _, _ = cu.Device(0).RetainPrimaryCtx() })
	r := &rankThread{fns: make(chan func())}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ctx, err := cu.Device(0).RetainPrimaryCtx()
		if err == nil {
			err = cu.SetCurrentContext(ctx)
		}
		ready <- err
		for f := range r.fns {
			f()
		}
		_ = cu.Device(0).ReleasePrimaryCtx()
	}()
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(r.fns) })
	return r
}

// do runs f on the thread; it fails the test when f has not returned
// after two minutes (a hang: the kernels' bound is 5 s).
func (r *rankThread) do(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	limit := time.After(2 * time.Minute)
	select {
	case r.fns <- func() { done <- f() }:
	case <-limit:
		t.Fatalf("%s: the rank's thread is still busy after 2 minutes (an earlier call hangs)", what)
	}
	select {
	case err := <-done:
		return err
	case <-limit:
		t.Fatalf("%s: still running after 2 minutes with a 5 s wait bound: it hangs", what)
		return nil
	}
}

// TestAllreduceFailStop: a world-2 group on device 0 of this process
// (both ranks' runners open, as symmtune.torch opens them), where only
// rank 0 calls the all-reduce. Rank 0's call ends, its poison lands in
// both ranks' flag words, and its next call fails naming rank 0's wait
// for rank 1; rank 1's next call runs no wait (its kernel finds the
// poison) and every call after it fails the same way. For a barrier
// algorithm and both Lamport ones.
func TestAllreduceFailStop(t *testing.T) {
	needGPU(t)
	// 5 s, not less: a Lamport open meets the peer's at a barrier, and the
	// two opens (each compiling its kernel) must meet within the bound.
	t.Setenv(cudamem.TimeoutEnv, "5")
	t.Setenv("SYMMTUNE_CUBIN_CACHE", t.TempDir())
	for algo, kind := range map[string]int{"one_shot": cudamem.KindBarrier, "two_shot_push": cudamem.KindBarrier,
		"one_shot_lamport": cudamem.KindLamport, "two_shot_lamport": cudamem.KindLamport} {
		t.Run(algo, func(t *testing.T) {
			if kind == cudamem.KindLamport {
				// A Lamport open is collective (a barrier in resetLamport),
				// and here both ranks share one CUDA context: rank 1's open
				// loads modules and copies synchronously, which wait for
				// rank 0's barrier kernel, which waits for rank 1's. Seen on
				// an H200 (2026-12-02) with bounds of 5 and 20 s. It needs a
				// process (or context) per rank: the multi-GPU issue's runs.
				t.Skip("a collective Lamport open cannot meet its peer's in one shared context")
			}
			allreduceFailStop(t, algo, kind)
		})
	}
}

// TestLamportOpenAlone: a Lamport all-reduce's open meets its peers at a
// team barrier (resetLamport). Where rank 1 never opens (its open failed,
// or it is late past the bound), rank 0's open ends within the bound, and
// its calls, the first included, raise naming rank 0's barrier wait for
// rank 1: nothing runs on a workspace whose peers did not all arrive.
func TestLamportOpenAlone(t *testing.T) {
	needGPU(t)
	t.Setenv(cudamem.TimeoutEnv, "5")
	t.Setenv("SYMMTUNE_CUBIN_CACHE", t.TempDir())
	for _, algo := range []string{"one_shot_lamport", "two_shot_lamport"} {
		t.Run(algo, func(t *testing.T) {
			const regionBytes, n = 8 << 20, 8192
			g := newGroup(t, regionBytes, 2*n)
			start := time.Now()
			var h uint64
			openErr := g.ranks[0].do(t, "rank 0's open", func() (err error) {
				req := fmt.Sprintf(`{"region_bytes":%d,"world":2,"rank":0,"dtype":"bf16","device":0,"config":{"algorithm":%q,"threads":256,"blocks":1,"unroll":1}}`, regionBytes, algo)
				h, err = AllreduceOpen([]byte(req), g.regions(), uint64(g.table))
				return err
			})
			if h != 0 {
				t.Cleanup(func() { _ = g.ranks[0].do(t, "close", func() error { return GemmClose(h) }) })
			}
			t.Logf("rank 0's open ended after %v: %v", time.Since(start).Round(time.Millisecond), openErr)
			want := "symmtune: group workspace poisoned: rank 0's barrier wait for rank 1 timed out after 5s"
			if openErr != nil {
				if !strings.Contains(openErr.Error(), "rank 1") {
					t.Fatalf("rank 0's open: %v; want an error naming rank 1", openErr)
				}
				return
			}
			for i := range 2 {
				err := g.ranks[0].do(t, "rank 0's call", func() error {
					if err := AllreduceEnqueue(h, 0, uint64(g.tensor[0][0]), n); err != nil {
						return err
					}
					return cu.Synchronize()
				})
				if err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("rank 0's call %d after an open its peer never joined: %v\nwant %s...", i+1, err, want)
				}
			}
		})
	}
}

// TestWatchdogEndsOnTimeout: with the watchdog on (the runtime's
// default), a wait that times out ends the process within the bound and
// a watchdog interval, naming the late rank, though no call follows (a
// program that only replays graphs). The group runs in a child process:
// this test binary again.
func TestWatchdogEndsOnTimeout(t *testing.T) {
	needGPU(t)
	if os.Getenv("SYMMTUNE_WATCHDOG_CHILD") == "1" {
		const regionBytes, n = 8 << 20, 8192
		g := newGroup(t, regionBytes, 2*n)
		h := g.open(t, func(q int) (uint64, error) {
			req := fmt.Sprintf(`{"region_bytes":%d,"world":2,"rank":%d,"dtype":"bf16","device":0,"config":{"algorithm":"one_shot","threads":256,"blocks":1,"unroll":1}}`, regionBytes, q)
			return AllreduceOpen([]byte(req), g.regions(), uint64(g.table))
		})
		_ = g.ranks[0].do(t, "rank 0's all-reduce", func() error { // rank 1 never comes
			return AllreduceEnqueue(h[0], 0, uint64(g.tensor[0][0]), n)
		})
		time.Sleep(60 * time.Second) // no call: only the watchdog can tell
		t.Fatal("still running 60 s after a 5 s bound")
	}
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWatchdogEndsOnTimeout$")
	cmd.Env = append(os.Environ(), "SYMMTUNE_WATCHDOG_CHILD=1", WatchdogEnv+"=", cudamem.TimeoutEnv+"=5",
		"SYMMTUNE_CUBIN_CACHE="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != AbortCode ||
		!strings.Contains(string(out), "rank 0's barrier wait for rank 1 timed out after 5s") {
		t.Fatalf("child: %v after %v, want exit %d naming rank 0's wait for rank 1\n%s", err, time.Since(start), AbortCode, out)
	}
	t.Logf("the child ended %v after it started: %s", time.Since(start).Round(time.Millisecond), strings.SplitN(string(out), "\n", 2)[0])
}

// group is a world-2 workspace on device 0: each rank's region of
// regionBytes then its pads, and the pointer table, as symmtune.torch's
// Symmetric hands them to the open calls; tensor[q] is one buffer of
// tensorBytes per rank for the calls' operands.
type group struct {
	ranks  [2]*rankThread
	base   [2]cu.DevicePtr
	pads   [2]cu.DevicePtr
	table  cu.DevicePtr
	tensor [2][]cu.DevicePtr
}

func newGroup(t *testing.T, regionBytes int64, tensorBytes ...int64) *group {
	t.Helper()
	if os.Getenv("SYMMTUNE_WATCHDOG_CHILD") != "1" {
		// These tests poison workspaces on purpose and check the calls'
		// errors: the watchdog would end the test binary.
		t.Setenv(WatchdogEnv, "off")
	}
	g := &group{ranks: [2]*rankThread{newRankThread(t), newRankThread(t)}}
	var allocs []cu.DevicePtr
	err := g.ranks[0].do(t, "allocate", func() error {
		alloc := func(bytes int64) (cu.DevicePtr, error) {
			p, err := cu.MemAlloc(bytes)
			if err != nil {
				return 0, err
			}
			allocs = append(allocs, p)
			return p, cu.MemsetD8(p, 0, bytes)
		}
		for q := range g.base {
			var err error
			if g.base[q], err = alloc(regionBytes + cudamem.PadBytes); err != nil {
				return err
			}
			g.pads[q] = g.base[q] + cu.DevicePtr(regionBytes)
			for _, b := range tensorBytes {
				p, err := alloc(b)
				if err != nil {
					return err
				}
				g.tensor[q] = append(g.tensor[q], p)
			}
		}
		tab := []uint64{uint64(g.base[0]), uint64(g.base[1]), uint64(g.pads[0]), uint64(g.pads[1])}
		var err error
		if g.table, err = alloc(32); err != nil {
			return err
		}
		return cu.MemcpyHtoD(g.table, unsafe.Pointer(&tab[0]), 32)
	})
	t.Cleanup(func() {
		_ = g.ranks[0].do(t, "free", func() error {
			for _, p := range allocs {
				_ = cu.MemFree(p)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *group) regions() []uint64 { return []uint64{uint64(g.base[0]), uint64(g.base[1])} }

// open opens both ranks' runners at once (a Lamport open meets the peer at
// a barrier), closing them when the test ends.
func (g *group) open(t *testing.T, open func(q int) (uint64, error)) [2]uint64 {
	t.Helper()
	var h [2]uint64
	var errs [2]error
	var wg sync.WaitGroup
	for q := range g.ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[q] = g.ranks[q].do(t, "open", func() (err error) { h[q], err = open(q); return err })
		}()
	}
	wg.Wait()
	for q := range h {
		if h[q] != 0 {
			t.Cleanup(func() { _ = g.ranks[q].do(t, "close", func() error { return GemmClose(h[q]) }) })
		}
	}
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	return h
}

// flags are both ranks' poison words.
func (g *group) flags(t *testing.T) [2]cudamem.Poison {
	t.Helper()
	var out [2]cudamem.Poison
	for q := range g.pads {
		if err := g.ranks[0].do(t, "read flag", func() error {
			return cu.MemcpyDtoH(unsafe.Pointer(&out[q]), g.pads[q]+cudamem.FlagOffset, 4)
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func allreduceFailStop(t *testing.T, algo string, kind int) {
	const regionBytes, n = 8 << 20, 8192 // bf16 elements
	g := newGroup(t, regionBytes, 2*n)
	h := g.open(t, func(q int) (uint64, error) {
		req := fmt.Sprintf(`{"region_bytes":%d,"world":2,"rank":%d,"dtype":"bf16","device":0,"config":{"algorithm":%q,"threads":256,"blocks":1,"unroll":1}}`, regionBytes, q, algo)
		return AllreduceOpen([]byte(req), g.regions(), uint64(g.table))
	})
	call := func(q int) error {
		return g.ranks[q].do(t, fmt.Sprintf("rank %d's all-reduce", q), func() error {
			if err := AllreduceEnqueue(h[q], 0, uint64(g.tensor[q][0]), n); err != nil {
				return err
			}
			return cu.Synchronize()
		})
	}
	// Rank 0 alone: rank 1 never arrives.
	if err := call(0); err != nil {
		t.Fatalf("rank 0's call: %v", err)
	}
	want := cudamem.MakePoison(kind, 0, 1)
	for q, got := range g.flags(t) {
		if got != want {
			t.Errorf("rank %d's poison word %#x, want %#x (rank 0 waited for rank 1)", q, uint32(got), uint32(want))
		}
	}
	what := map[int]string{cudamem.KindBarrier: "barrier wait", cudamem.KindLamport: "Lamport wait"}[kind]
	bound := map[int]string{cudamem.KindBarrier: "5s", cudamem.KindLamport: "20s"}[kind]
	msg := func(seer int) string {
		return fmt.Sprintf("symmtune: group workspace poisoned: rank 0's %s for rank 1 timed out after %s (seen by rank %d's all_reduce); every later call on this workspace fails; rebuild the group", what, bound, seer)
	}
	for i := 0; i < 2; i++ {
		if err := call(0); err == nil || err.Error() != msg(0) {
			t.Errorf("rank 0's call %d after the timeout: %v\nwant %s", i+2, err, msg(0))
		}
	}
	// Rank 1 comes late: its first call finds the poison in its kernel.
	if err := call(1); err != nil {
		t.Fatalf("rank 1's first call: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := call(1); err == nil || err.Error() != msg(1) {
			t.Errorf("rank 1's call %d: %v\nwant %s", i+2, err, msg(1))
		}
	}
}

// needGPU skips t without a CUDA driver or a GPU.
func needGPU(t *testing.T) {
	t.Helper()
	if _, err := cu.Library(); err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	if n, err := cu.NumDevices(); err != nil || n < 1 {
		t.Skipf("no GPU: %d, %v", n, err)
	}
}

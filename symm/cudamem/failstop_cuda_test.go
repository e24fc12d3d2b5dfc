//go:build cuda

package cudamem

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
)

// OnOneGPU is a world-2 workspace on device 0 of this process, as
// symmtune.torch hands it to Mapped: two regions with their pads and the
// pointer table [data0, data1, pads0, pads1]. Rank 1 exists only in memory,
// so a test can run rank 0's kernels alone: a peer that never arrives.
type onOneGPU struct {
	base  [2]cu.DevicePtr
	data  []cu.DevicePtr
	pads  [2]cu.DevicePtr
	table cu.DevicePtr
}

// gpuThread locks the test to a thread with device 0's primary context
// current, or skips without a GPU.
func gpuThread(t *testing.T) {
	t.Helper()
	if _, err := cu.Library(); err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	if n, err := cu.NumDevices(); err != nil || n < 1 {
		t.Skipf("no GPU: %d, %v", n, err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	ctx, err := cu.Device(0).RetainPrimaryCtx()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cu.Device(0).ReleasePrimaryCtx() })
	if err := cu.SetCurrentContext(ctx); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SYMMTUNE_CUBIN_CACHE", t.TempDir())
}

func newOnOneGPU(t *testing.T, dataBytes int64) *onOneGPU {
	t.Helper()
	w := &onOneGPU{}
	for q := range w.base {
		p, err := cu.MemAlloc(dataBytes + PadBytes)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cu.MemFree(p) })
		if err := cu.MemsetD8(p, 0, dataBytes+PadBytes); err != nil {
			t.Fatal(err)
		}
		w.base[q], w.pads[q] = p, p+cu.DevicePtr(dataBytes)
		w.data = append(w.data, p)
	}
	table := []uint64{uint64(w.data[0]), uint64(w.data[1]), uint64(w.pads[0]), uint64(w.pads[1])}
	var err error
	if w.table, err = cu.MemAlloc(8 * 4); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cu.MemFree(w.table) })
	if err := cu.MemcpyHtoD(w.table, unsafe.Pointer(&table[0]), 8*4); err != nil {
		t.Fatal(err)
	}
	return w
}

// flag is rank q's poison word.
func (w *onOneGPU) flag(t *testing.T, q int) uint32 {
	t.Helper()
	var v uint32
	if err := cu.MemcpyDtoH(unsafe.Pointer(&v), w.pads[q]+FlagOffset, 4); err != nil {
		t.Fatal(err)
	}
	return v
}

// synchronizeOrFail fails the test if the device does not finish within a
// generous bound (a hang, not a timing: the kernels' bound is 0.2 s).
func synchronizeOrFail(t *testing.T, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ctx, err := cu.Device(0).RetainPrimaryCtx()
		if err == nil {
			err = cu.SetCurrentContext(ctx)
		}
		if err == nil {
			err = cu.Synchronize()
		}
		_ = cu.Device(0).ReleasePrimaryCtx()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: synchronize: %v", what, err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s: still running after 2 minutes with a 0.2 s wait bound: it hangs", what)
	}
}

// TestBarrierFailStop: rank 0 meets the barrier, rank 1 never does. Rank
// 0's barrier ends (it does not hang), its poison (rank 0 waited for rank
// 1) lands in both ranks' flag words and rank 0's host word, so its next
// call fails; rank 1's next barrier fails at once, without waiting, and
// from then on rank 1's calls fail too, naming rank 0's wait.
func TestBarrierFailStop(t *testing.T) {
	gpuThread(t)
	w := newOnOneGPU(t, 1<<16)
	const bound = 200 * time.Millisecond
	var m [2]*Mapped
	for q := range m {
		var err error
		if m[q], err = NewMapped(q, 2, w.data, w.table, 0, bound); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m[q].Close() })
	}
	if err := m[0].Poisoned("barrier"); err != nil {
		t.Fatalf("a new workspace: %v", err)
	}
	if err := m[0].Barrier(cu.StreamFromHandle(0)); err != nil {
		t.Fatal(err)
	}
	synchronizeOrFail(t, "rank 0's barrier, rank 1 absent")
	want := MakePoison(KindBarrier, 0, 1)
	for q := range m {
		if got := Poison(w.flag(t, q)); got != want {
			t.Errorf("rank %d's poison word %#x, want %#x (rank 0's barrier wait for rank 1)", q, uint32(got), uint32(want))
		}
	}
	err := m[0].Poisoned("barrier")
	var pe *PoisonedError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "rank 0's barrier wait for rank 1 timed out after 200ms (seen by rank 0's barrier)") {
		t.Errorf("rank 0 after the timeout: %v", err)
	}
	// Rank 1's host has not heard yet: no kernel of its has run.
	if err := m[1].Poisoned("barrier"); err != nil {
		t.Errorf("rank 1 before any call: %v", err)
	}
	if err := m[1].Barrier(cu.StreamFromHandle(0)); err != nil {
		t.Fatal(err)
	}
	synchronizeOrFail(t, "rank 1's barrier on a poisoned workspace")
	if err := m[1].Poisoned("barrier"); err == nil || !strings.Contains(err.Error(), "rank 0's barrier wait for rank 1 timed out after 200ms (seen by rank 1's barrier)") {
		t.Errorf("rank 1 after its barrier: %v", err)
	}
	// A second Mapped on the same workspace (another runner) sees it too.
	again, err := NewMapped(0, 2, w.data, w.table, 0, bound)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.Poisoned("barrier"); err == nil {
		t.Error("a new runner on the poisoned workspace: no error")
	}
}

// TestFreshPadsAtAnOldAddress: a workspace freed and made again at the
// same address (zeroed pads that do not name the host word) starts
// healthy, though the old one was poisoned.
func TestFreshPadsAtAnOldAddress(t *testing.T) {
	gpuThread(t)
	w := newOnOneGPU(t, 1<<16)
	m, err := NewMapped(0, 2, w.data, w.table, 0, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Barrier(cu.StreamFromHandle(0)); err != nil {
		t.Fatal(err)
	}
	synchronizeOrFail(t, "rank 0's barrier, rank 1 absent")
	if m.Poisoned("barrier") == nil {
		t.Fatal("not poisoned")
	}
	for q := range w.base {
		if err := cu.MemsetD8(w.pads[q], 0, PadBytes); err != nil {
			t.Fatal(err)
		}
	}
	fresh, err := NewMapped(0, 2, w.data, w.table, 0, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Poisoned("barrier"); err != nil {
		t.Errorf("fresh pads: %v", err)
	}
}

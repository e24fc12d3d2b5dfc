package libops

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestUnitsBoundedAcrossShapes: a thousand row counts, as chunked prefill
// brings, keep at most maxUnits runners open, each call on its own m's.
func TestUnitsBoundedAcrossShapes(t *testing.T) {
	h, f := openFake(t, "bf16")
	for i := 1; i <= 1000; i++ {
		enq(t, h, 1, 2*i)
		if got := f.calls[len(f.calls)-1].m; got != 2*i {
			t.Fatalf("call %d ran the m=%d runner", 2*i, got)
		}
	}
	s := Stats()
	if s.Units > maxUnits || s.UnitBytes > maxUnitBytes || len(f.open) != s.Units {
		t.Errorf("stats %+v with %d runners open: want at most %d units, %d bytes", s, len(f.open), maxUnits, maxUnitBytes)
	}
	if s.DeviceBytes != s.EngineBytes+s.UnitBytes {
		t.Errorf("stats %+v: device bytes are not the engine's and the units'", s)
	}
}

// TestGraphKeepsItsRunners: a graph captured at one m replays right while
// a thousand other row counts come and go, and what it holds is freed at
// the first eager call after the graph is destroyed, not before.
func TestGraphKeepsItsRunners(t *testing.T) {
	cases := []struct {
		name    string
		retire  bool // the handle is retired (its region grew) after the capture
		destroy bool
	}{
		{"kept, evicted", false, false},
		{"kept, retired", true, false},
		{"destroyed, evicted", false, true},
		{"destroyed, retired", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, f := openFake(t, "bf16")
			enq(t, h, 1, 64) // the warm-up
			id := f.beginCapture(7)
			enq(t, h, 7, 64)
			enq(t, h, 7, 64) // a second call in the same capture takes no second hold
			f.endCapture(7)
			other := h
			if c.retire {
				if _, err := Retire([]uint64{h}); err != nil {
					t.Fatal(err)
				}
				other, _, _ = GemmOpen([]byte(fakeOpenReq), []uint64{1 << 20, 2 << 20}, 4096)
			}
			for i := 1; i <= 300; i++ {
				enq(t, other, 1, 128+2*i)
				if err := f.replay(id); err != nil {
					t.Fatalf("after %d other calls: %v", i, err)
				}
			}
			if s := Stats(); s.GraphHeld != 1 {
				t.Fatalf("stats %+v: want the captured runner held by its graph", s)
			}
			if !c.destroy {
				return
			}
			f.destroy(id)
			enq(t, other, 1, 4096) // an eager call reaps
			s := Stats()
			if s.GraphHeld != 0 || s.ZombieBytes != 0 {
				t.Errorf("stats %+v after the graph was destroyed: want nothing kept for it", s)
			}
			if c.retire {
				if _, err := liveHandle(h); err == nil {
					t.Errorf("retired handle %d still open", h)
				}
			}
		})
	}
}

// TestReapReportsRetiredHandles: runtime.reap names a retired handle once
// the graphs holding it are gone, so Python frees its region then.
func TestReapReportsRetiredHandles(t *testing.T) {
	h, f := openFake(t, "bf16")
	enq(t, h, 1, 64)
	id := f.beginCapture(7)
	enq(t, h, 7, 64)
	f.endCapture(7)
	ans, err := Retire([]uint64{h})
	if err != nil || len(ans.Kept) != 1 || ans.Kept[0] != h {
		t.Fatalf("retire: %+v, %v; want %d kept", ans, err, h)
	}
	if r := Reap(); len(r.Closed) != 0 {
		t.Fatalf("reap with the graph alive: %+v", r)
	}
	var b *BadInputError
	if _, err := GemmEnqueue(h, 1, 64, 1, 2, 3, 0); !errors.As(err, &b) || !strings.Contains(b.Msg, "retired") {
		t.Errorf("call on a retired handle: %v", err)
	}
	f.destroy(id)
	if r := Reap(); len(r.Closed) != 1 || r.Closed[0] != h {
		t.Errorf("reap after the graph was destroyed: %+v, want [%d]", r, h)
	}
	if r := Reap(); len(r.Closed) != 0 {
		t.Errorf("second reap: %+v, want nothing", r)
	}
}

// TestFirstCallInCaptureRefused: a row count never called eagerly cannot
// open inside a capture; it says so, and the capture can carry on.
func TestFirstCallInCaptureRefused(t *testing.T) {
	h, f := openFake(t, "bf16")
	f.beginCapture(7)
	_, err := GemmEnqueue(h, 7, 96, 1, 2, 3, 0)
	var ce *CaptureError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "m=96") {
		t.Fatalf("first call in a capture: %v, want a CaptureError naming m=96", err)
	}
	if len(f.calls) != 0 || len(f.open) != 0 {
		t.Errorf("%d calls and %d runners after the refusal", len(f.calls), len(f.open))
	}
}

// TestRowsChecked: m past the handle's, or not divisible by the world.
func TestRowsChecked(t *testing.T) {
	h, _ := openFake(t, "bf16")
	for _, m := range []int{0, -2, 3, 1048578} {
		var b *BadInputError
		if _, err := GemmEnqueue(h, 1, m, 1, 2, 3, 0); !errors.As(err, &b) || !strings.Contains(b.Msg, fmt.Sprintf("m=%d", m)) {
			t.Errorf("m=%d: %v, want bad input naming it", m, err)
		}
	}
}

// TestFakeFaults: the fake device can fail. A runner closed under a graph
// that holds it makes the replay fail, as a GPU's would.
func TestFakeFaults(t *testing.T) {
	h, f := openFake(t, "bf16")
	enq(t, h, 1, 64)
	id := f.beginCapture(7)
	enq(t, h, 7, 64)
	f.endCapture(7)
	for r := range f.open {
		if err := r.close(); err != nil { // what the runtime must never do
			t.Fatal(err)
		}
	}
	if err := f.replay(id); err == nil {
		t.Fatal("a graph replayed over a freed runner without a fault: the fake cannot catch the bug it exists for")
	}
}

// TestThreadsShareTheRuntime: two threads calling at once (each its own
// row counts, and some of the same) are serialized, every call on its m.
func TestThreadsShareTheRuntime(t *testing.T) {
	h, f := openFake(t, "bf16")
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 1; i <= 200; i++ {
				m := 2 * (i%50 + 1 + w*25)
				if _, err := GemmEnqueue(h, uint64(10+w), m, 1, 2, 3, 0); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(f.calls) != 400 {
		t.Errorf("%d calls, want 400", len(f.calls))
	}
}

// TestRetireClosesWhatNoGraphHolds: a handle whose runners no graph
// holds closes at once, every runner of it closed once.
// With another stream being captured meanwhile (a decode thread capturing
// while the prefill thread's workspace grows), the same: the units' and
// the op's closes run in the relaxed capture mode, which the fake's
// closes check (in the default mode a GPU refuses them and invalidates
// that capture).
func TestRetireClosesWhatNoGraphHolds(t *testing.T) {
	for _, otherCapture := range []bool{false, true} {
		t.Run(fmt.Sprintf("another stream captured %v", otherCapture), func(t *testing.T) {
			h, f := openFake(t, "bf16")
			for _, m := range []int{64, 128, 256} {
				enq(t, h, 1, m)
			}
			if otherCapture {
				f.beginCapture(9)
			}
			ans, err := Retire([]uint64{h})
			if err != nil || len(ans.Closed) != 1 || ans.Closed[0] != h || len(ans.Kept) != 0 {
				t.Fatalf("retire: %+v, %v; want %d closed", ans, err, h)
			}
			if p := poisoned.Load(); p != nil {
				t.Fatalf("the runtime stopped: %s", *p)
			}
			if len(f.open) != 0 {
				t.Errorf("%d runners still open", len(f.open))
			}
			if s := Stats(); s.Runners != 0 || s.Units != 0 {
				t.Errorf("stats %+v: want nothing left", s)
			}
		})
	}
}

// TestGrowthKeepsWarmRows: an op opened on a grown workspace with
// warm_from opens the row counts the old one ran, so a capture after the
// growth finds them (one warm-up per shape, in any order), least recently
// used first, so the eviction order carries over.
func TestGrowthKeepsWarmRows(t *testing.T) {
	h, f := openFake(t, "bf16")
	for _, m := range []int{4096, 64, 80} {
		enq(t, h, 1, m)
	}
	req := strings.Replace(fakeOpenReq, `"config"`, fmt.Sprintf(`"warm_from":%d,"config"`, h), 1)
	h2, _, err := GemmOpen([]byte(req), []uint64{1 << 20, 2 << 20}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for u := lru.front; u != nil; u = u.newer {
		if u.op == runners[h2].gemm {
			order = append(order, u.m)
		}
	}
	if !slices.Equal(order, []int{4096, 64, 80}) {
		t.Errorf("warmed row counts in the list %v, want the old handle's call order [4096 64 80]", order)
	}
	if _, err := Retire([]uint64{h}); err != nil {
		t.Fatal(err)
	}
	f.beginCapture(7)
	for _, m := range []int{64, 80, 4096} {
		enq(t, h2, 7, m)
	}
	if _, err := GemmEnqueue(h2, 7, 96, 1, 2, 3, 0); err == nil {
		t.Error("a row count never run opened inside the capture")
	}
	var b *BadInputError
	if _, _, err := GemmOpen([]byte(strings.Replace(req, fmt.Sprint(h), "99999", 1)), []uint64{1 << 20, 2 << 20}, 4096); !errors.As(err, &b) {
		t.Errorf("warm_from an unknown handle: %v, want bad input", err)
	}
}

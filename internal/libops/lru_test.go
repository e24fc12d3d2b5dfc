package libops

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestEvictsLeastRecentlyUsed: past maxUnits a first call closes the
// unit called longest ago, across handles, and a call moves its unit to
// the back; a retired handle's units leave the list, so what the list
// counts is what is open.
func TestEvictsLeastRecentlyUsed(t *testing.T) {
	h, f := openFake(t, "bf16")
	other, _, err := GemmOpen([]byte(fakeOpenReq), []uint64{1 << 20, 2 << 20}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	enq(t, other, 1, 2) // the oldest of all, on another handle
	for i := 2; i <= maxUnits; i++ {
		enq(t, h, 1, 2*i)
	}
	enq(t, other, 1, 2) // now the newest
	enq(t, h, 1, 2*(maxUnits+1))
	openMs := func() []int {
		var ms []int
		for r := range f.open {
			ms = append(ms, r.m)
		}
		slices.Sort(ms)
		return ms
	}
	got := openMs()
	if len(got) != maxUnits || slices.Contains(got, 4) || !slices.Contains(got, 2) {
		t.Fatalf("open row counts %v: want %d, m=4 (least recently used) closed, m=2 (called again) kept", got, maxUnits)
	}
	if _, err := Retire([]uint64{other}); err != nil {
		t.Fatal(err)
	}
	if lru.count != len(f.open) || lru.count != maxUnits-1 {
		t.Fatalf("list counts %d units, %d are open: want %d", lru.count, len(f.open), maxUnits-1)
	}
	// What is left is h's units, called in increasing m: the list holds
	// them oldest first.
	n := 0
	for u := lru.front; u != nil; u = u.newer {
		if u.newer != nil && u.newer.m <= u.m {
			t.Fatalf("list out of call order at m=%d (next m=%d)", u.m, u.newer.m)
		}
		n++
	}
	if n != lru.count || lru.bytes != int64(n)*f.bytes {
		t.Fatalf("list walks %d units and counts %d (%d bytes)", n, lru.count, lru.bytes)
	}
}

// TestEvictionAndCapture: an evicted unit's memory is freed after its last
// eager call's point on its stream, marked where no capture can take that
// point into its graph. As a serving program does it: the evicted unit
// last ran on the stream the program then captures on (torch's capture
// stream is one per process), and the engine's thread closes it during
// that capture; or the stream is being captured (by another thread) when
// the eviction comes, and the unit waits for a later eager call.
func TestEvictionAndCapture(t *testing.T) {
	openMs := func(f *fakeDevice) map[int]bool {
		ms := map[int]bool{}
		for r := range f.open {
			ms[r.m] = true
		}
		return ms
	}
	t.Run("closed later, during a capture of its stream", func(t *testing.T) {
		h, f := openFake(t, "bf16")
		f.deferLater = true
		enq(t, h, 7, 2) // the unit to be evicted, last called eagerly on stream 7
		for i := 2; i <= maxUnits+1; i++ {
			enq(t, h, 1, 2*i) // the warm-ups; the last evicts m=2
		}
		if len(f.later) != 1 {
			t.Fatalf("%d closes handed to the engine's thread: want 1", len(f.later))
		}
		f.beginCapture(7)
		f.runLater(t) // fails where the close marks its point now
		enq(t, h, 7, 4)
		f.endCapture(7)
		if openMs(f)[2] {
			t.Fatal("m=2 still open")
		}
	})
	t.Run("evicted while its stream is being captured", func(t *testing.T) {
		h, f := openFake(t, "bf16")
		enq(t, h, 7, 2)
		f.beginCapture(7) // another thread's capture
		for i := 2; i <= maxUnits+1; i++ {
			enq(t, h, 1, 2*i)
		}
		if !openMs(f)[2] || len(zombies) != 1 {
			t.Fatalf("m=2 open %v, %d zombies: want it kept as the one zombie while stream 7 is captured", openMs(f)[2], len(zombies))
		}
		enq(t, h, 1, 4) // an eager call during the capture: still kept
		if !openMs(f)[2] {
			t.Fatal("m=2 closed while its stream is being captured")
		}
		f.endCapture(7)
		enq(t, h, 1, 6) // the first eager call after it closes it
		if openMs(f)[2] || len(zombies) != 0 {
			t.Fatalf("m=2 open %v, %d zombies after the capture: want it closed", openMs(f)[2], len(zombies))
		}
		if s := Stats(); s.Units != maxUnits || len(f.open) != maxUnits {
			t.Fatalf("stats %+v, %d runners open: want %d units", s, len(f.open), maxUnits)
		}
	})
}

// TestCaptureAfterEviction: a program that warms up more row counts than
// the bounds keep before it captures them (100 here) meets, in the
// capture, a row count whose unit the bounds closed: the CaptureError
// says so and names the setting that raises the bound; one never warmed
// up gets the warm-up's error; with $SYMMTUNE_RUNTIME_UNITS above the
// warm-ups every capture finds its unit; a bad value is refused at the
// op's open, naming the variable.
func TestCaptureAfterEviction(t *testing.T) {
	cases := []struct {
		name, units string
		m           int
		want        string // "" : the captured call runs
	}{
		{"evicted", "", 2, "after its runner was closed: its warm-up was followed by first calls at more row counts than are kept open (64, or 256 MiB"},
		{"never warmed up", "", 1000, "the first matmulrs call with m=1000 (n=1024, k=1024) came during a CUDA graph capture, where its runner cannot be opened"},
		{"bound raised", "128", 2, ""},
		{"bound raised, never warmed up", "128", 1000, "make the same call once before the capture (a warm-up)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(UnitsEnv, tc.units)
			h, f := openFake(t, "bf16")
			for i := 1; i <= 100; i++ {
				enq(t, h, 1, 2*i)
			}
			f.beginCapture(1)
			_, err := GemmEnqueue(h, 1, tc.m, 1, 2, 3, 0)
			var ce *CaptureError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("captured call at m=%d: %v", tc.m, err)
			case tc.want != "" && (!errors.As(err, &ce) || !strings.Contains(ce.Msg, tc.want)):
				t.Fatalf("captured call at m=%d: %v\nwant a CaptureError with %q", tc.m, err, tc.want)
			case tc.want != "" && strings.Contains(tc.want, "closed") && !strings.Contains(ce.Msg, "$"+UnitsEnv):
				t.Fatalf("%v: want it to name $%s", err, UnitsEnv)
			}
		})
	}
	for _, v := range []string{"0", "-3", "many", "1.5"} {
		t.Run("bad "+v, func(t *testing.T) {
			useFake(t)
			t.Setenv(UnitsEnv, v)
			_, _, err := GemmOpen([]byte(fakeOpenReq), []uint64{1 << 20, 2 << 20}, 4096)
			var b *BadInputError
			if !errors.As(err, &b) || !strings.Contains(b.Msg, "$"+UnitsEnv+"=") {
				t.Fatalf("open with %s=%q: %v; want a bad-input error naming it", UnitsEnv, v, err)
			}
		})
	}
}

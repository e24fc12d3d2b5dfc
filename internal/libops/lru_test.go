package libops

import (
	"slices"
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

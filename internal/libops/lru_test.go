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

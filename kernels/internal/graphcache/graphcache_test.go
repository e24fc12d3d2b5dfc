package graphcache

import (
	"slices"
	"testing"
)

// TestGraphCache: a call seen once at a set of operands runs directly, the
// second is captured and every later one replays; at most CacheSize
// graphs are kept, the least recently used destroyed first; SeenSize
// operand sets seen once are remembered.
func TestGraphCache(t *testing.T) {
	var destroyed []int
	gc := &Cache[int, int]{Destroy: func(g int) error { destroyed = append(destroyed, g); return nil }}
	// run is what a runner's Enqueue does with operands p: "direct",
	// "capture" (the graph is p+1000) or "replay".
	run := func(p int) string {
		if _, ok := gc.Get(p); ok {
			return "replay"
		}
		if !gc.Second(p) {
			return "direct"
		}
		if err := gc.Put(p, p+1000); err != nil {
			t.Fatal(err)
		}
		return "capture"
	}
	steps := []struct {
		p    int
		want string
	}{{1, "direct"}, {1, "capture"}, {1, "replay"}, {2, "direct"}, {1, "replay"}, {2, "capture"}, {2, "replay"}}
	for i, s := range steps {
		if got := run(s.p); got != s.want {
			t.Fatalf("step %d (operands %d): %s, want %s", i, s.p, got, s.want)
		}
	}
	// Graphs for 3..9 make nine; 1 was used after 2, so 2 goes first.
	run(1)
	for p := 3; p <= 9; p++ {
		run(p)
		run(p)
	}
	if !slices.Equal(destroyed, []int{1002}) {
		t.Errorf("destroyed %v, want [1002] (the least recently used)", destroyed)
	}
	if got := run(1); got != "replay" {
		t.Errorf("operands 1 after the eviction: %s, want replay", got)
	}
	if got := run(2); got != "direct" {
		t.Errorf("operands 2 after its eviction: %s, want direct (seen anew)", got)
	}
	// Only SeenSize operand sets seen once are remembered.
	for p := 100; p < 100+SeenSize+1; p++ {
		run(p)
	}
	if got := run(100); got != "direct" {
		t.Errorf("the oldest of %d seen once: %s, want direct (forgotten)", SeenSize+1, got)
	}
	if got := run(100 + SeenSize); got != "capture" {
		t.Errorf("the newest seen once: %s, want capture", got)
	}
	if err := gc.DestroyAll(); err != nil || len(gc.graphs) != 0 || len(destroyed) != 1+CacheSize+1 {
		t.Errorf("destroyAll: %v, %d left, %d destroyed", err, len(gc.graphs), len(destroyed))
	}
}

package cache

import (
	"math"
	"testing"
	"time"

	"github.com/symmtune/symmtune/space"
)

func TestNeighbours(t *testing.T) {
	tag := func(name string) func(*Entry) {
		return func(e *Entry) { e.Config = space.Config{"tag": space.Str(name)} }
	}
	at := func(h int) func(*Entry) { return func(e *Entry) { e.TunedAt = t0.Add(time.Duration(h) * time.Hour) } }
	world := func(w int) func(*Entry) { return func(e *Entry) { e.World = w } }
	gpu := func(e *Entry) { e.Hardware = gpuHW().ID(); e.HardwareInfo = gpuHW() }
	s := storeOf(t,
		entry(4096, tag("n4k")),              // the query's own slot
		entry(8192, tag("n8k")),              // one doubling
		entry(1024, tag("n1k")),              // two halvings
		entry(4096, tag("w8"), world(8)),     // world 4 -> 8: one doubling
		entry(4096, tag("w2"), world(2)),     // one halving; as new as n8k and w8: by key (world 2 first)
		entry(4096, tag("other-gpu"), gpu),   // other hardware
		entry(16384, tag("far-gpu"), gpu),    // other hardware and two doublings
		entry(2048, tag("newer-n2k"), at(1)), // one halving, newest of distance 1
		// Never neighbours: another version, backend, dtype, kernel or dims.
		entry(4096, tag("v2"), func(e *Entry) { e.KernelVersion = "v2" }),
		entry(4096, tag("cuda"), func(e *Entry) { e.Backend = "cuda" }),
		entry(4096, tag("bf16"), func(e *Entry) { e.Dtype = "bf16" }),
		entry(4096, tag("gemm"), func(e *Entry) { e.Kernel = "gemm" }),
		entry(0, tag("2d"), func(e *Entry) { e.Shape = space.Shape{"m": 4096, "n": 4096} }),
	)
	q := NeighbourQuery{Kernel: "allreduce", KernelVersion: "3f2a9c1e", Backend: "cpu", Dtype: "f32", World: 4,
		Shape: space.Shape{"n": 4096}, Hardware: cpuHW().ID()}
	type want struct {
		tag  string
		dist float64
	}
	cases := []struct {
		name string
		q    NeighbourQuery
		want []want
	}{
		{"ranked by shape, world and hardware", q, []want{
			{"n4k", 0}, {"newer-n2k", 1}, {"w2", 1}, {"n8k", 1}, {"w8", 1},
			{"n1k", 2}, {"other-gpu", OtherHardwareDistance}, {"far-gpu", 2 + OtherHardwareDistance},
		}},
		{"from the other hardware's side", func() NeighbourQuery { q := q; q.Hardware = gpuHW().ID(); return q }(), []want{
			{"other-gpu", 0}, {"far-gpu", 2}, {"n4k", 3}, {"newer-n2k", 4}, {"w2", 4}, {"n8k", 4}, {"w8", 4}, {"n1k", 5},
		}},
		{"no kernel: nothing", func() NeighbourQuery { q := q; q.Kernel = ""; return q }(), nil},
		{"other dims: nothing", func() NeighbourQuery { q := q; q.Shape = space.Shape{"k": 4}; return q }(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.Neighbours(c.q)
			if len(got) != len(c.want) {
				var tags []string
				for _, g := range got {
					tags = append(tags, g.Entry.Config["tag"].Str)
				}
				t.Fatalf("got %d neighbours %v, want %d", len(got), tags, len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if g.Entry.Config["tag"].Str != w.tag || math.Abs(g.Distance-w.dist) > 1e-9 {
					t.Errorf("#%d: %s at %.3f, want %s at %.3f", i, g.Entry.Config["tag"].Str, g.Distance, w.tag, w.dist)
				}
			}
		})
	}
}

package gpu

import (
	"reflect"
	"sort"
	"testing"
)

func TestPlanFusedAG(t *testing.T) {
	for _, c := range []struct {
		name                       string
		m, world, rank, chunks, bm int
		push                       bool
		order                      []uint32
		bounds                     []uint32
		flags                      []uint32
	}{
		{
			name: "two ranks, own shard first then the peer's chunks in order",
			m:    1024, world: 2, rank: 0, chunks: 2, bm: 128,
			order:  []uint32{0, 1, 2, 3, 4, 5, 6, 7},
			bounds: []uint32{0, 256, 512, 768, 1024},
			flags:  []uint32{NoFlag, NoFlag, uint32(PartialFlag(1, 0)), uint32(PartialFlag(1, 1))},
		},
		{
			name: "rank 1 of two: its own rows are the second half",
			m:    1024, world: 2, rank: 1, chunks: 1, bm: 256,
			order:  []uint32{2, 3, 0, 1},
			bounds: []uint32{0, 512, 1024},
			flags:  []uint32{uint32(PartialFlag(0, 0)), NoFlag},
		},
		{
			name: "four ranks: every peer's chunk 0 (next rank first), then every chunk 1",
			m:    1024, world: 4, rank: 1, chunks: 2, bm: 128,
			// Rank q's chunk c is tile 2q+c; own tiles 2, 3; peers 2, 3, 0.
			order:  []uint32{2, 3, 4, 6, 0, 5, 7, 1},
			bounds: []uint32{0, 128, 256, 384, 512, 640, 768, 896, 1024},
			flags: []uint32{uint32(PartialFlag(0, 0)), uint32(PartialFlag(0, 1)), NoFlag, NoFlag,
				uint32(PartialFlag(2, 0)), uint32(PartialFlag(2, 1)), uint32(PartialFlag(3, 0)), uint32(PartialFlag(3, 1))},
		},
		{
			name: "four ranks pushing: the copy of the rank before lands first (each sender's engine serves its next rank first)",
			m:    1024, world: 4, rank: 1, chunks: 2, bm: 128, push: true,
			// Rank 0 sends to 1 first, rank 3 to 1 second, rank 2 third.
			order:  []uint32{2, 3, 0, 6, 4, 1, 7, 5},
			bounds: []uint32{0, 128, 256, 384, 512, 640, 768, 896, 1024},
			flags: []uint32{uint32(PartialFlag(0, 0)), uint32(PartialFlag(0, 1)), NoFlag, NoFlag,
				uint32(PartialFlag(2, 0)), uint32(PartialFlag(2, 1)), uint32(PartialFlag(3, 0)), uint32(PartialFlag(3, 1))},
		},
		{
			name: "two ranks pushing: the same as fetching",
			m:    1024, world: 2, rank: 1, chunks: 1, bm: 256, push: true,
			order:  []uint32{2, 3, 0, 1},
			bounds: []uint32{0, 512, 1024},
			flags:  []uint32{uint32(PartialFlag(0, 0)), NoFlag},
		},
		{
			name: "a tile straddling the own shard and a peer's chunk waits for the chunk",
			m:    1000, world: 2, rank: 0, chunks: 2, bm: 128,
			// Own rows 0..499: tiles 0-2 whole, tile 3 (384..511) also
			// holds peer chunk 0 (500..749), so it comes with tiles 4, 5.
			order:  []uint32{0, 1, 2, 3, 4, 5, 6, 7},
			bounds: []uint32{0, 250, 500, 750, 1000},
			flags:  []uint32{NoFlag, NoFlag, uint32(PartialFlag(1, 0)), uint32(PartialFlag(1, 1))},
		},
		{
			name: "rank 1 of two, uneven: tile 3 straddles and waits for rank 0's chunk 1",
			m:    1000, world: 2, rank: 1, chunks: 2, bm: 128,
			// Own rows 500..999: tiles 4-7 (tile 3 holds rows 384..511).
			order:  []uint32{4, 5, 6, 7, 0, 1, 2, 3},
			bounds: []uint32{0, 250, 500, 750, 1000},
			flags:  []uint32{uint32(PartialFlag(0, 0)), uint32(PartialFlag(0, 1)), NoFlag, NoFlag},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := PlanFusedAG(c.m, c.world, c.rank, c.chunks, c.bm, c.push)
			if !reflect.DeepEqual(f.Order, c.order) {
				t.Errorf("order %v, want %v", f.Order, c.order)
			}
			if !reflect.DeepEqual(f.Bounds, c.bounds) {
				t.Errorf("bounds %v, want %v", f.Bounds, c.bounds)
			}
			if !reflect.DeepEqual(f.Flag, c.flags) {
				t.Errorf("flags %v, want %v", f.Flag, c.flags)
			}
			if tab := f.Table(); len(tab) != 2*len(f.Flag)+1 {
				t.Errorf("table of %d words for %d spans", len(tab), len(f.Flag))
			}
		})
	}
}

// Every tile row appears once, whatever the shape.
func TestPlanFusedAGPermutation(t *testing.T) {
	for _, m := range []int{64, 1000, 4096, 8190} {
		for _, w := range []int{2, 3, 4, 8} {
			if m%w != 0 {
				continue
			}
			for _, bm := range []int{64, 128, 256} {
				for _, push := range []bool{false, true} {
					f := PlanFusedAG(m, w, w-1, 4, bm, push)
					got := append([]uint32{}, f.Order...)
					sort.Slice(got, func(a, b int) bool { return got[a] < got[b] })
					for i, v := range got {
						if int(v) != i {
							t.Fatalf("m=%d w=%d bm=%d push=%v: order %v is not a permutation", m, w, bm, push, f.Order)
						}
					}
					if f.Bounds[len(f.Bounds)-1] != uint32(m) {
						t.Fatalf("bounds end at %d, want %d", f.Bounds[len(f.Bounds)-1], m)
					}
				}
			}
		}
	}
}

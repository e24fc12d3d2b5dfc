package hopper

import (
	"fmt"
	"strings"
	"testing"
)

// TestStreamKNames: ":st" names stream-K, read back by ParseTile, and the
// options carry STREAM_K only then.
func TestStreamKNames(t *testing.T) {
	tl, err := ParseTile("128x256:st:s4")
	if err != nil {
		t.Fatal(err)
	}
	if !tl.StreamK || tl.String() != "128x256:s4:c2:g8:st" {
		t.Errorf("128x256:st:s4 read as %s (stream-K %v)", tl, tl.StreamK)
	}
	has := func(tl Tile) bool {
		return strings.Contains(strings.Join(tl.Options(Format{Elem: ElemBF16}), " "), "-DSTREAM_K=1")
	}
	plain := tl
	plain.StreamK = false
	if !has(tl) || has(plain) {
		t.Errorf("STREAM_K in the options: %v with stream-K, %v without", has(tl), has(plain))
	}
	for _, bad := range []string{"128x256:st2", "128x256:stx"} {
		if _, err := ParseTile(bad); err == nil {
			t.Errorf("ParseTile(%q) accepted", bad)
		}
	}
}

// TestStreamKCheck: stream-K runs plain products with two cooperative
// consumers (the kernel's #error), with room for the fixup's registers.
func TestStreamKCheck(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{"128x256:s4:c2:g8:st", ""},
		{"128x224:s5:c2:g4:st", ""},
		{"128x128:s6:c2:g8:st", ""},
		{"128x128:s6:c2:g4:pp:st", "cooperative"},
		{"128x256:s4:c2:g8:cl2:st", ""}, // a cluster's pair walks the same ranges
		{"256x160:s4:c2:g8:cl2:st", ""},
		{"128x256:s4:c2:g8:sk2:st", "cooperative"},
		{"128x128:s4:c1:g8:st", "cooperative"},
		{"256x192:s3:c2:g8:st", "the fixup needs 16 registers"},
	} {
		tl, err := ParseTile(c.name)
		if err != nil {
			t.Fatal(err)
		}
		err = tl.Check(SmemLimit)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestStreamKTiles: which tiles stream-K shares out, by wave arithmetic.
func TestStreamKTiles(t *testing.T) {
	st, err := ParseTile("128x256:s4:c2:g8:st")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m, n, kblocks, grid, want int
	}{
		// Sharing out wins back (grid - r) / grid of a tile's k-blocks, r
		// the last wave's tiles: at least StreamKMinGain (64) of them.
		{4096, 28672, 128, 132, 152},    // 3,584 tiles: 27 waves and 20 (under half a wave: 20 + 132), 109 to win
		{4096, 14784, 128, 132, 140},    // 32 x 58 = 1,856: 14 waves and 8, 120 to win
		{4096, 1280, 128, 132, 160},     // 160: one wave and 28, 101 to win
		{16384, 5120, 128, 132, 184},    // 2,560: 19 waves and 52, 78 to win
		{8192, 3584, 128, 132, 0},       // 896: 6 waves and 104, 27 to win
		{8192, 8192, 128, 132, 0},       // 2,048: 15 waves and 68, 62 to win
		{8192, 8192, 256, 132, 68},      // the same with twice the k-blocks: 124 to win, and over half a wave
		{8448, 4096, 64, 132, 0},        // 66 x 16 = 1,056 tiles: 8 whole waves
		{1024, 4096, 128, 132, 0},       // 128 tiles, one wave: 4/132 of 128 k-blocks to win
		{1024, 2304, 256, 132, 72},      // 72 tiles, over half a wave: all of them, 116 to win
		{1024, 2048, 256, 132, 0},       // 64 tiles, under half a wave: split-K's
		{128 * 140, 256, 128, 132, 140}, // 140 tiles: 8 over one wave, so 8 + 132
		{128 * 140, 256, 1, 132, 0},     // one k-block a tile: too little to win
		{1000, 3000, 64, 132, 0},        // 96 tiles of 64 k-blocks: 17 to win
		{1000, 3000, 256, 132, 96},      // of 256: 70 to win
		{4096, 28672, 128, 0, 0},        // no grid
		{4096, 28672, 128, 1, 0},        // one CTA: whole waves
	} {
		if got := st.StreamKTiles(c.m, c.n, c.kblocks, c.grid); got != c.want {
			t.Errorf("%dx%d, %d k-blocks, grid %d: %d stream-K tiles, want %d", c.m, c.n, c.kblocks, c.grid, got, c.want)
		}
	}
	// In clusters of two the walk's units are the 66 clusters and their
	// 256-row tiles.
	cl, err := ParseTile("128x256:s4:c2:g8:cl2:st")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m, n, kblocks, grid, want int
	}{
		{16384, 5120, 128, 132, 92},  // 64 x 20 = 1,280 cluster tiles: 19 waves of 66 and 26 (under half a wave: 26 + 66), 78 to win
		{16384, 14336, 128, 132, 86}, // 64 x 56 = 3,584: 54 waves and 20 (20 + 66), 89 to win
		{4096, 14784, 128, 132, 70},  // 16 x 58 = 928: 14 waves and 4 (4 + 66), 120 to win
		{8192, 3584, 128, 132, 0},    // 32 x 14 = 448: 6 waves and 52, 27 to win
		{16384, 5120, 128, 131, 0},   // 65 clusters: 19 waves and 45, 39 to win
		{16384, 5120, 128, 1, 0},     // under one cluster
	} {
		if got := cl.StreamKTiles(c.m, c.n, c.kblocks, c.grid); got != c.want {
			t.Errorf("clusters: %dx%d, %d k-blocks, grid %d: %d stream-K tiles, want %d", c.m, c.n, c.kblocks, c.grid, got, c.want)
		}
	}
	plain := st
	plain.StreamK = false
	if got := plain.StreamKTiles(8192, 3584, 128, 132); got != 0 {
		t.Errorf("a tile without stream-K shares %d tiles", got)
	}
}

// skUnit is a unit of the kernel's stream-K walk (hopper_split.cuh's Unit).
type skUnit struct{ tile, kb0, kb1, parts, part, first, start int }

// streamKUnits plays sched_start and sched_next for CTA c of a grid of
// grid CTAs over tiles tiles, sk of them stream-K, kblocks each: the
// kernel's arithmetic, term by term, its range's pieces last first.
func streamKUnits(c, grid, tiles, sk, kblocks int) []skUnit {
	var out []skUnit
	dp := tiles - sk
	for u := c; u < dp; u += grid {
		out = append(out, skUnit{tile: u, kb0: 0, kb1: kblocks, parts: 1})
	}
	length := sk * kblocks
	lo, hi := StreamKRange(c, length, grid)
	g, l := int64(grid), int64(length)
	for hi > lo {
		j := (hi - 1) / kblocks
		start, end := j*kblocks, (j+1)*kblocks
		from := max(lo, start)
		u := skUnit{tile: dp + j, kb0: from - start, kb1: hi - start, start: start}
		hi = from
		u.first = int((int64(start+1)*g+l-1)/l) - 1
		u.parts = int((int64(end)*g+l-1)/l) - 1 - u.first + 1
		u.part = c - u.first
		out = append(out, u)
	}
	return out
}

// TestStreamKWalk plays the stream-K walk for many waves, grids and
// k-blocks: every k-block of every tile goes to exactly one CTA; a tile's
// parts are the CTAs that have some of it, each knowing how many and which
// one it is; at most three share a tile; and the fixup's workspace holds
// them: a CTA's partials go to slot 0 (the tile its range starts in) or 1
// (the one it ends in), never two tiles to one slot, and the counts'
// index (a tile's place among the stream-K tiles) stays within
// SplitKBytes' counts.
func TestStreamKWalk(t *testing.T) {
	st := Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true, StreamK: true}
	cases := 0
	for _, grid := range []int{1, 2, 3, 7, 66, 114, 132} {
		for _, tiles := range []int{1, 2, 5, 40, 64, 65, 70, 131, 132, 133, 140, 199, 200, 263, 264, 265, 896, 1792, 2048} {
			for _, kblocks := range []int{1, 2, 3, 7, 64, 127, 128, 129} {
				// tiles tiles of 128 x 256 in one row of tiles.
				m, n := 128, 256*tiles
				// The shares whatever they win (StreamKTiles asks more).
				sk := streamKTiles(st.Tiles(m, n), kblocks, grid)
				if sk == 0 {
					continue
				}
				cases++
				name := func() string { return fmt.Sprintf("%d CTAs, %d tiles, %d k-blocks", grid, tiles, kblocks) }
				if sk > tiles || sk*kblocks < grid {
					t.Fatalf("%s: %d stream-K tiles", name(), sk)
				}
				_, counts := st.SplitKBytes(m, n, grid)
				// The same walk in clusters of two: grid clusters of 2 CTAs,
				// each cluster tile two CTA tiles, CTA w*2 + crank's partials
				// and tile j*2 + crank's counts (fixup_unit).
				cl := st
				cl.Cluster = 2
				clParts, clCounts := cl.SplitKBytes(2*m, n, 2*grid)
				tileBytes := int64(st.BM) * int64(st.BN) * 4
				covered := make([][]int, tiles)
				for i := range covered {
					covered[i] = make([]int, kblocks)
				}
				parts := map[int]map[int]bool{} // stream-K tile: the parts seen
				for c := 0; c < grid; c++ {
					slots := map[int]int{} // slot: tile
					lo, hi := StreamKRange(c, sk*kblocks, grid)
					if lo >= hi {
						t.Fatalf("%s: CTA %d has no k-block of the stream-K tiles", name(), c)
					}
					units := streamKUnits(c, grid, tiles, sk, kblocks)
					// The range's pieces go last first: where there are two or
					// more, the first taken starts at a tile's k-block 0.
					if pieces := units[len(units)-countSK(units, tiles-sk):]; len(pieces) > 1 && pieces[0].kb0 != 0 {
						t.Fatalf("%s: CTA %d starts its range at k-block %d of tile %d", name(), c, pieces[0].kb0, pieces[0].tile)
					}
					for _, u := range units {
						for kb := u.kb0; kb < u.kb1; kb++ {
							covered[u.tile][kb]++
						}
						if u.parts == 1 {
							if u.kb0 != 0 || u.kb1 != kblocks {
								t.Fatalf("%s: CTA %d has k-blocks [%d, %d) of tile %d alone", name(), c, u.kb0, u.kb1, u.tile)
							}
							continue
						}
						j := u.tile - (tiles - sk)
						if u.parts > 3 || u.part < 0 || u.part >= u.parts {
							t.Fatalf("%s: CTA %d is part %d of %d of tile %d", name(), c, u.part, u.parts, u.tile)
						}
						if int64(j+1)*int64(st.storerWarps())*4 > counts {
							t.Fatalf("%s: tile %d's counts past the workspace's %d bytes", name(), u.tile, counts)
						}
						if int64(2*j+2)*int64(st.storerWarps())*4 > clCounts {
							t.Fatalf("%s, clusters: tile %d's counts past the workspace's %d bytes", name(), u.tile, clCounts)
						}
						if parts[j] == nil {
							parts[j] = map[int]bool{}
						}
						parts[j][u.part] = true
						// hopper_split.cuh's fixup_unit: slot 0 if the range starts in the tile.
						slot := 1
						if lo >= u.start {
							slot = 0
						}
						if int64((2*c+1)*2+slot+1)*tileBytes > clParts {
							t.Fatalf("%s, clusters: CTA %d's slot %d past the workspace's %d bytes", name(), 2*c+1, slot, clParts)
						}
						if prev, ok := slots[slot]; ok && prev != u.tile {
							t.Fatalf("%s: CTA %d puts tiles %d and %d in slot %d", name(), c, prev, u.tile, slot)
						}
						slots[slot] = u.tile
					}
				}
				for tl, row := range covered {
					for kb, n := range row {
						if n != 1 {
							t.Fatalf("%s: tile %d k-block %d multiplied %d times", name(), tl, kb, n)
						}
					}
				}
				for j, seen := range parts {
					// Every part 0..parts-1 came, so the count completes.
					want := 0
					for c := 0; c < grid; c++ {
						for _, u := range streamKUnits(c, grid, tiles, sk, kblocks) {
							if u.tile == tiles-sk+j {
								want = u.parts
							}
						}
					}
					if len(seen) != want {
						t.Fatalf("%s: stream-K tile %d has %d of its %d parts", name(), j, len(seen), want)
					}
				}
			}
		}
	}
	if cases < 100 {
		t.Fatalf("only %d cases share tiles", cases)
	}
}

// countSK is how many of units are stream-K pieces (tiles from dp on).
func countSK(units []skUnit, dp int) int {
	n := 0
	for _, u := range units {
		if u.tile >= dp {
			n++
		}
	}
	return n
}

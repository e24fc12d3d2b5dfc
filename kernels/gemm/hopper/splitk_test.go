package hopper

import (
	"slices"
	"strings"
	"testing"
)

// TestSplitKNames: ":skS" names the slices, read back by ParseTile; one
// slice (or none) is no split-K and is not named.
func TestSplitKNames(t *testing.T) {
	for _, c := range []struct {
		name, canonical string
		splits          int
	}{
		{"64x128:s6:c2:g8:pp:sk4", "64x128:s6:c2:g8:pp:sk4", 4},
		{"128x256:sk2", "128x256:s4:c2:g8:sk2", 2},
		{"128x256:sk2:s5", "128x256:s5:c2:g8:sk2", 2},
		{"128x256:sk1", "128x256:s4:c2:g8", 1},
		{"128x256:sk0", "128x256:s4:c2:g8", 1},
		{"128x256", "128x256:s4:c2:g8", 1},
	} {
		tl, err := ParseTile(c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if tl.String() != c.canonical || tl.KSplits() != c.splits {
			t.Errorf("%s: named %s with %d slices, want %s with %d", c.name, tl, tl.KSplits(), c.canonical, c.splits)
		}
	}
	for _, bad := range []string{"128x256:sk", "128x256:skx", "128x256:sk2x", "128x256:k2"} {
		if _, err := ParseTile(bad); err == nil {
			t.Errorf("ParseTile(%q) accepted", bad)
		}
	}
}

// TestSplitKCheck: slices within 1..MaxSplitK, no clusters, no peer
// buffers (the kernel's #error); the options carry SPLIT_K only with more
// than one slice, so unsplit tiles compile as before.
func TestSplitKCheck(t *testing.T) {
	pp, err := ParseTile("64x128:s6:c2:g8:pp")
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*Tile)) Tile { c := pp; f(&c); return c }
	for _, c := range []struct {
		name string
		tile Tile
		want string
	}{
		{"two slices", with(func(t *Tile) { t.SplitK = 2 }), ""},
		{"the most slices", with(func(t *Tile) { t.SplitK = MaxSplitK }), ""},
		{"one slice", with(func(t *Tile) { t.SplitK = 1 }), ""},
		{"too many slices", with(func(t *Tile) { t.SplitK = MaxSplitK + 1 }), "1 to 16 slices"},
		{"negative", with(func(t *Tile) { t.SplitK = -2 }), "1 to 16 slices"},
		{"with a cluster", Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true, Cluster: 2, SplitK: 2}, "without clusters"},
		{"with peer buffers", Tile{BM: 128, BN: 128, Stages: 5, Consumers: 2, PingPong: true, GroupM: 4, BKMajor: true, SplitK: 2, PeerBuffers: 1}, "plain products"},
		{"one consumer", Tile{BM: 128, BN: 128, Stages: 4, Consumers: 1, GroupM: 8, BKMajor: true, SplitK: 2}, "two consumer warpgroups"},
		{"192 accumulators", Tile{BM: 256, BN: 192, Stages: 3, Consumers: 2, GroupM: 8, BKMajor: true, SplitK: 2}, "the fixup needs 16 registers"},
		{"192 accumulators unsplit", Tile{BM: 256, BN: 192, Stages: 3, Consumers: 2, GroupM: 8, BKMajor: true}, ""},
		{"cooperative 128x256", Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true, SplitK: 2}, ""},
	} {
		err := c.tile.Check(SmemLimit)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: rejected: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want one with %q", c.name, err, c.want)
		}
	}
	if _, ok := with(func(t *Tile) { t.SplitK = 2 }).WithPeerBuffers(1); ok {
		t.Error("a split-K tile took peer buffers")
	}
	f := Format{Elem: ElemBF16}
	if opts := with(func(t *Tile) { t.SplitK = 4 }).Options(f); !slices.Contains(opts, "-DSPLIT_K=4") {
		t.Errorf("options %q lack -DSPLIT_K=4", opts)
	}
	for _, sk := range []int{0, 1} {
		if opts := strings.Join(with(func(t *Tile) { t.SplitK = sk }).Options(f), " "); strings.Contains(opts, "SPLIT_K") {
			t.Errorf("split-K %d: options %q name SPLIT_K", sk, opts)
		}
	}
}

// TestKSlices: for every k-block count and slice count, the slices are
// consecutive, cover [0, kblocks) once, differ in size by at most one, and
// none is empty where there are as many k-blocks as slices.
func TestKSlices(t *testing.T) {
	for splits := 1; splits <= MaxSplitK; splits++ {
		tl := Tile{SplitK: splits}
		for kb := 0; kb <= 300; kb++ {
			next, small, large := 0, kb, 0
			for s := range splits {
				lo, hi := tl.KSlice(s, kb)
				if lo != next || hi < lo {
					t.Fatalf("split %d, %d k-blocks: slice %d is [%d, %d) after %d", splits, kb, s, lo, hi, next)
				}
				next = hi
				small, large = min(small, hi-lo), max(large, hi-lo)
			}
			if next != kb || large-small > 1 || (kb >= splits && small == 0) {
				t.Fatalf("split %d, %d k-blocks: slices end at %d, sizes %d to %d", splits, kb, next, small, large)
			}
		}
	}
}

// TestSplitKShape: a split-K tile needs a k-block per slice, counted in
// the format's k-blocks (64 two-byte or 128 one-byte elements).
func TestSplitKShape(t *testing.T) {
	tl, err := ParseTile("64x128:s6:c2:g8:pp:sk8")
	if err != nil {
		t.Fatal(err)
	}
	bf16, e4m3 := Format{Elem: ElemBF16}, Format{Elem: ElemE4M3}
	for _, c := range []struct {
		f  Format
		k  int
		ok bool
	}{
		{bf16, 512, true},  // 8 k-blocks
		{bf16, 456, true},  // 7 and a ragged eighth
		{bf16, 448, false}, // 7
		{e4m3, 1024, true}, // 8 of 128
		{e4m3, 896, false}, // 7
	} {
		if err := tl.CheckShapeFor(c.f, 1280, c.k); (err == nil) != c.ok {
			t.Errorf("%v k=%d: err %v, want ok=%v", c.f, c.k, err, c.ok)
		}
	}
}

// TestSplitKBytes: the partials are KSplits fp32 tiles of every CTA tile
// (the storing warps' shares make a whole tile), the counts a word per CTA
// tile and storing warp; nothing without split-K.
func TestSplitKBytes(t *testing.T) {
	for _, c := range []struct {
		name           string
		m, n           int
		parts, counts  int64
		warps, perWarp int
	}{
		// 10 tiles of 64x128 (4 warps of 16 rows by 128 fp32 columns).
		{"64x128:s6:c2:g8:pp:sk4", 64, 1280, 10 * 4 * 64 * 128 * 4, 10 * 4 * 4, 4, 16 * 128},
		// 2 x 9 ragged tiles of 128x128 ping-pong: 4 warps of 32 rows.
		{"128x128:s6:c2:g4:pp:sk2", 200, 1096, 18 * 2 * 128 * 128 * 4, 18 * 4 * 4, 4, 32 * 128},
		// Cooperative: 8 warps of 16 rows.
		{"128x256:s4:c2:g8:sk2", 128, 14336, 56 * 2 * 128 * 256 * 4, 56 * 8 * 4, 8, 16 * 256},
		{"128x256:s4:c2:g8", 128, 14336, 0, 0, 8, 16 * 256},
	} {
		tl, err := ParseTile(c.name)
		if err != nil {
			t.Fatal(err)
		}
		parts, counts := tl.SplitKBytes(c.m, c.n, 132)
		if parts != c.parts || counts != c.counts {
			t.Errorf("%s at %dx%d: %d and %d bytes, want %d and %d", c.name, c.m, c.n, parts, counts, c.parts, c.counts)
		}
		// The kernel's SK_WARPS and SK_WARP_FLOATS: MI m64 blocks of BN/2
		// floats per lane, 32 lanes; the warps' shares are the tile.
		mi := tl.rowsPerConsumer() / 64
		if w, f := tl.storerWarps(), mi*tl.BN/2*32; w != c.warps || f != c.perWarp || w*f != tl.BM*tl.BN {
			t.Errorf("%s: %d warps of %d floats, want %d of %d (a %dx%d tile)", c.name, w, f, c.warps, c.perWarp, tl.BM, tl.BN)
		}
	}
}

// TestSplitKWalk plays the kernel's persistent walk (hopper_gemm.cu) on
// the host: every work unit goes to exactly one CTA, and for ping-pong
// tiles to one consumer; the slices of each tile cover its k-blocks once;
// and each consumer, skipping the other's units by their k-blocks, finds
// every k-block of its units in the ring stage, and at the phase, that
// the producer loaded it into.
func TestSplitKWalk(t *testing.T) {
	for _, name := range []string{"64x128:s6:c2:g8:pp:sk4", "64x256:s5:c2:g8:pp:sk2", "128x256:s4:c2:g8:sk2", "64x128:s6:c2:g8:pp:sk8", "64x128:s6:c2:g8:pp"} {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range [][3]int{{64, 1280, 8192}, {64, 14336, 4096}, {200, 8192, 3584}, {128, 8192, 456}} {
			m, n, k := sh[0], sh[1], sh[2]
			if tl.CheckShapeFor(Format{Elem: ElemBF16}, n, k) != nil {
				continue
			}
			kblocks := (k + BK - 1) / BK
			units := tl.Units(m, n)
			for _, sms := range []int{132, 7} {
				grid := min(sms, units)
				covered := make(map[int][]int) // tile -> k-blocks seen
				taken := make([]int, units)
				for b := range grid {
					type slot struct{ s, phase int }
					var loaded []slot // the producer's (stage, phase) per k-block, in order
					s, phase := 0, 0
					for u := b; u < units; u += grid {
						lo, hi := tl.KSlice(u%tl.KSplits(), kblocks)
						for kb := lo; kb < hi; kb++ {
							covered[u/tl.KSplits()] = append(covered[u/tl.KSplits()], kb)
							loaded = append(loaded, slot{s, phase})
							if s++; s == tl.Stages {
								s, phase = 0, phase^1
							}
						}
					}
					consumers := 1
					if tl.PingPong {
						consumers = tl.Consumers
					}
					for cw := range consumers {
						s, phase, next := 0, 0, 0 // next: index into loaded
						for i, u := 0, b; u < units; u, i = u+grid, i+1 {
							lo, hi := tl.KSlice(u%tl.KSplits(), kblocks)
							if i%consumers != cw {
								adv := s + (hi - lo)
								phase ^= (adv / tl.Stages) & 1
								s = adv % tl.Stages
								next += hi - lo
								continue
							}
							taken[u]++
							for kb := lo; kb < hi; kb++ {
								if loaded[next] != (slot{s, phase}) {
									t.Fatalf("%s %v grid %d: CTA %d consumer %d waits for unit %d's k-block %d at %v, loaded at %v", name, sh, grid, b, cw, u, kb, slot{s, phase}, loaded[next])
								}
								next++
								if s++; s == tl.Stages {
									s, phase = 0, phase^1
								}
							}
						}
					}
				}
				for u, n := range taken {
					if n != 1 {
						t.Fatalf("%s %v grid %d: unit %d multiplied %d times", name, sh, grid, u, n)
					}
				}
				if len(covered) != tl.Tiles(m, n) {
					t.Fatalf("%s %v: %d tiles walked, want %d", name, sh, len(covered), tl.Tiles(m, n))
				}
				for tile, kbs := range covered {
					slices.Sort(kbs)
					for i, kb := range kbs {
						if kb != i || len(kbs) != kblocks {
							t.Fatalf("%s %v: tile %d multiplies k-blocks %v, want 0..%d once each", name, sh, tile, kbs, kblocks-1)
						}
					}
				}
			}
		}
	}
}

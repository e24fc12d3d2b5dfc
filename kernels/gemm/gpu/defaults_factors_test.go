package gpu

// Tests of the cards' own rules (defaults_factors.go): the tile factors
// and the H100's clustered twin, against the H200's picks.

import (
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// TestTileEfficiencyKeepsRowChoice: tileEfficiency only chooses among the
// 128-row tiles; whether a 64-row tile is taken stays as rowsEfficiency64
// was measured (against 128-row work by waves alone), over a grid of
// shapes, both dtypes and three SM counts.
func TestTileEfficiencyKeepsRowChoice(t *testing.T) {
	saved, savedCards := tileEfficiency, cardTileEfficiency
	defer func() { tileEfficiency, cardTileEfficiency = saved, savedCards }()
	for _, name := range []string{"NVIDIA H200", "NVIDIA H100 80GB HBM3"} {
		for _, sms := range []int{132, 114, 78} {
			c := Device{Name: name, SMs: sms}
			for _, m := range []int{64, 128, 256, 512, 1024, 2048, 4096} {
				for _, n := range []int{1280, 2560, 5120, 8192, 14336, 28672} {
					for _, k := range []int{1024, 4096, 8192, 29568} {
						for _, fp8 := range []bool{false, true} {
							tileEfficiency, cardTileEfficiency = saved, savedCards
							with := DefaultTile(m, n, k, c, fp8)
							tileEfficiency, cardTileEfficiency = map[string]float64{}, nil
							without := DefaultTile(m, n, k, c, fp8)
							if (with.BM < 128) != (without.BM < 128) || with.BM < 128 && with != without {
								t.Errorf("%dx%dx%d fp8 %v %v: %s with the factors, %s without", m, n, k, fp8, c, with, without)
							}
						}
					}
				}
			}
		}
	}
}

// TestCardFactors: the H100's factors (cardTileEfficiency) move the
// bf16 picks from 128x128:pp where 128x224 ran faster on that card
// (bench/results/2026-12-06-h100-pp-rows.md), keep them where the
// ping-pong tile was faster there, move the FP8 pick from it where the
// factor leads to a tile other than 128x256, and leave FP8 where it
// would lead to a whole 128x256 tile (plain or clustered), short loops,
// the H200 and a card the rule has no factors for as they were.
func TestCardFactors(t *testing.T) {
	h100 := Device{Name: "NVIDIA H100 80GB HBM3", SMs: 132}
	cases := []struct {
		m, n, k   int
		fp8       bool
		ref, h100 string // the pick with the H200's factors, with the H100's
	}{
		{1024, 29568, 8192, false, "128x128:s6:c2:g4:pp", "128x224:s5:c2:g16"},   // 224 ran 1.13x pp
		{2048, 7168, 8192, false, "128x128:s6:c2:g4:pp", "128x224:s5:c2:g16"},    // 1.08x
		{1024, 22528, 8192, false, "128x128:s6:c2:g4:pp", "128x160:s6:c2:g8"},    // the H200's 128x160 factor: untimed
		{1024, 6144, 8192, false, "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:pp"},  // pp 1.07x 224: waves
		{1536, 4096, 8192, false, "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:pp"},  // pp 1.07x
		{16384, 8192, 1024, false, "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:pp"}, // a short loop
		{1024, 29568, 8192, true, "128x128:s6:c2:g4:pp", "128x224:s5:c2:g16"},    // FP8: pp 0.889 on the H100
		{16384, 8192, 2048, true, "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:pp"},  // FP8, a short loop
		{3072, 6144, 4096, true, "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:pp"},   // FP8: not to plain 128x256 (0.940)
		{10240, 3072, 4096, true, "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:pp"},  // FP8: not to 128x256:cl2 (0.941)
	}
	for _, tc := range cases {
		for _, c := range []struct {
			dev  Device
			want string
		}{{h200, tc.ref}, {Device{Name: "Some GPU", SMs: 132}, tc.ref}, {h100, tc.h100}} {
			if got := DefaultTile(tc.m, tc.n, tc.k, c.dev, tc.fp8).String(); got != c.want {
				t.Errorf("%dx%dx%d fp8 %v on %q: %s, want %s", tc.m, tc.n, tc.k, tc.fp8, c.dev.Name, got, c.want)
			}
		}
	}
}

// TestOffSectorTwin: on an H100 the untuned tile of a plain product is the
// ping-pong pick's clustered twin on the 20 shapes its held-out run timed
// (bench/results/2026-12-07-h100-offsector-cl2.md: rows off 32-byte
// sectors, 256-1,024 rows, a multiple of 256) where 128x256 tiles would not
// fill the card, and 128x256 in clusters of two where they would
// (wideFills: the 16 shapes of 2026-12-07-h100-offsector-fill.md, and the
// 1,024-row ones of -offsector-wide-1024.md it was read from); the
// ping-pong tile everywhere outside that scope and on other cards; the twin
// runs the fused kernels wherever it is picked.
func TestOffSectorTwin(t *testing.T) {
	const wide = "128x256:s4:c2:g8:cl2"
	judged := []h100Pick{
		// offsector-cl2's 20 shapes: 64 (512 x 4096) to 48 (768 x 2048)
		// wide tiles stay with the twin; 184-1,120 take the wide tile.
		{"e4m3", 256, 23552, 6224, wide}, {"e4m3", 256, 22528, 3088, wide}, {"e4m3", 256, 22528, 8240, wide},
		{"e4m3", 512, 4096, 6224, ppClusterTwin}, {"e4m3", 512, 4096, 14416, ppClusterTwin},
		{"e4m3", 512, 3072, 3184, ppClusterTwin}, {"e4m3", 768, 2048, 12368, ppClusterTwin},
		{"e4m3", 768, 2048, 2096, ppClusterTwin}, {"e4m3", 768, 35840, 4144, wide},
		{"e4m3", 1024, 2048, 8304, ppClusterTwin}, {"e4m3", 1024, 2048, 4176, ppClusterTwin},
		{"e4m3", 1024, 6144, 2064, wide},
		{"bf16", 256, 24576, 3096, wide}, {"bf16", 256, 22528, 1592, wide}, {"bf16", 512, 12288, 6168, wide},
		{"bf16", 512, 4096, 6200, ppClusterTwin}, {"bf16", 768, 2048, 3096, ppClusterTwin},
		{"bf16", 768, 2048, 4136, ppClusterTwin}, {"bf16", 1024, 2048, 4136, ppClusterTwin},
		{"bf16", 1024, 6144, 7192, wide},
		// offsector-fill's judged shapes (wide) and controls (the twin).
		{"e4m3", 256, 22528, 3152, wide}, {"e4m3", 256, 23552, 12400, wide}, {"e4m3", 256, 24576, 2064, wide},
		{"e4m3", 512, 11264, 3120, wide}, {"e4m3", 512, 12288, 3152, wide}, {"e4m3", 768, 35840, 6256, wide},
		{"e4m3", 256, 22528, 4208, wide}, {"e4m3", 256, 23552, 4208, wide},
		{"bf16", 256, 22528, 2056, wide}, {"bf16", 256, 23552, 1544, wide}, {"bf16", 256, 24576, 1080, wide},
		{"bf16", 512, 11264, 6184, wide}, {"bf16", 512, 12288, 1048, wide}, {"bf16", 256, 22528, 3128, wide},
		{"bf16", 256, 23552, 4152, wide}, {"bf16", 256, 24576, 4120, wide},
		{"e4m3", 512, 3072, 14416, ppClusterTwin}, {"e4m3", 512, 4096, 4144, ppClusterTwin},
		{"e4m3", 768, 2048, 8240, ppClusterTwin}, {"bf16", 512, 3072, 2104, ppClusterTwin},
		{"bf16", 512, 4096, 2056, ppClusterTwin}, {"bf16", 768, 2048, 6152, ppClusterTwin},
	}
	checkH100Picks(t, judged)
	// Outside the scope the H100 keeps its pick: rows on sectors, rows not
	// a multiple of 256, more than 1,024 rows.
	checkH100Picks(t, []h100Pick{
		{"e4m3", 512, 4096, 6208, ppTile},  // 6,208 bytes: on sectors
		{"bf16", 512, 4096, 3104, ppTile},  // bf16 rows of 6,208 bytes
		{"e4m3", 384, 4096, 4144, ppTile},  // three 128-row tiles: a cluster of two would straddle the edge
		{"bf16", 2048, 3072, 3112, ppTile}, // more rows than the run timed
		{"e4m3", 1024, 2048, 4176, ppClusterTwin},
	})
	// Wherever the twin is picked, every fused kernel at every world runs it.
	twin, err := hopper.ParseTile(ppClusterTwin)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []Variant{VariantAGMM, VariantMatmulRS} {
		for _, world := range []int{1, 2, 4, 8} {
			for _, dtype := range []string{"bf16", "e4m3"} {
				p := problemOf(t, 1024*world, 2048, 4176, world, dtype)
				if err := runsFused(t, v, twin, p); err != nil {
					t.Errorf("%s at world %d, %s: %v", v, world, dtype, err)
				}
			}
		}
	}
}

// TestOffLineWide: on the H100, at 256-512 rows whose rows start off
// 128-byte lines, the ping-pong pick runs as offLineWideTile where its
// tiles fill the card; elsewhere, and on other cards, the pick stays.
// The shapes are 2026-12-08-h100-wide-fill-rows' (its judged ones and controls)
// and the two runs' that the rule was read from.
func TestOffLineWide(t *testing.T) {
	h100 := Device{Name: "NVIDIA H100 80GB HBM3", SMs: 132}
	cases := []h100Pick{
		// The plan's judged shapes: off sectors, then on sectors off lines.
		{"e4m3", 432, 11264, 8304, offLineWideTile}, {"e4m3", 496, 12288, 14448, offLineWideTile},
		{"e4m3", 416, 11264, 4208, offLineWideTile}, {"e4m3", 448, 12288, 14448, offLineWideTile},
		{"bf16", 496, 11264, 6200, offLineWideTile}, {"bf16", 416, 11264, 3112, offLineWideTile},
		{"bf16", 400, 11264, 7208, offLineWideTile}, {"bf16", 464, 11264, 6152, offLineWideTile},
		{"e4m3", 464, 12288, 14368, offLineWideTile}, {"e4m3", 448, 11264, 2112, offLineWideTile},
		{"e4m3", 480, 11264, 8256, offLineWideTile}, {"e4m3", 416, 11264, 12320, offLineWideTile},
		{"bf16", 464, 12288, 4112, offLineWideTile}, {"bf16", 448, 12288, 4128, offLineWideTile},
		{"bf16", 496, 12288, 1568, offLineWideTile}, {"bf16", 400, 11264, 6176, offLineWideTile},
		// Its controls: the wide tiles would not fill the card.
		{"e4m3", 416, 4096, 8240, ppTile}, {"bf16", 464, 4096, 7208, ppTile},
		{"e4m3", 432, 3072, 12384, ppTile}, {"bf16", 400, 3072, 3120, ppTile},
		// offsector-3rows: filling, and at N 3,072 and 4,096 not.
		{"e4m3", 352, 16384, 12400, offLineWideTile}, {"bf16", 368, 16384, 6184, offLineWideTile},
		{"e4m3", 352, 3072, 12336, ppTile}, {"bf16", 336, 4096, 7224, ppTile},
		// The off-line rows screen: 256 and 512 rows on sectors.
		{"bf16", 256, 22528, 1040, offLineWideTile}, {"e4m3", 512, 11264, 14400, offLineWideTile},
		{"bf16", 256, 8192, 3696, ppTile}, {"e4m3", 512, 4096, 12320, ppTile},
		// Rows outside 256-512, off lines, filling: the pick stays.
		{"e4m3", 528, 9216, 4144, ppTile}, {"e4m3", 240, 22528, 4144, ppTile},
	}
	checkH100Picks(t, cases)
	// Rows on 128-byte lines: the H100 keeps its pick.
	for _, c := range []struct {
		m, n, k int
		fp8     bool
	}{{448, 11264, 8192, true}, {448, 11264, 4096, false}} {
		if got, ref := DefaultTile(c.m, c.n, c.k, h100, c.fp8), DefaultTile(c.m, c.n, c.k, h200, c.fp8); got.String() == offLineWideTile && ref.String() != offLineWideTile {
			t.Errorf("%dx%dx%d fp8 %v on the H100: %s outside the scope", c.m, c.n, c.k, c.fp8, got)
		}
	}
}

// h100Pick is a shape and the tile the H100's rule picks there, where
// the H200 and a card listed nowhere pick the ping-pong tile.
type h100Pick struct {
	dtype   string
	m, n, k int
	h100    string
}

// checkH100Picks checks each case's pick on the H100, the H200 and an
// unlisted card. A case where the H200 does not pick the ping-pong
// tile would test no H100 rule, so it stops the test.
func checkH100Picks(t *testing.T, cases []h100Pick) {
	t.Helper()
	h100 := Device{Name: "NVIDIA H100 80GB HBM3", SMs: 132}
	for _, c := range cases {
		p := problemOf(t, c.m, c.n, c.k, 1, c.dtype)
		if ref := DefaultTileFor(VariantAGMM, p, h200).String(); ref != ppTile {
			t.Fatalf("%s %dx%dx%d: the H200's pick %s, not the ping-pong tile: the case tests nothing", c.dtype, c.m, c.n, c.k, ref)
		}
		for _, dc := range []struct {
			dev  Device
			want string
		}{{h100, c.h100}, {h200, ppTile}, {Device{Name: "Some GPU", SMs: 132}, ppTile}} {
			if got := DefaultTileFor(VariantAGMM, p, dc.dev).String(); got != dc.want {
				t.Errorf("%s %dx%dx%d on %q: %s, want %s", c.dtype, c.m, c.n, c.k, dc.dev.Name, got, dc.want)
			}
		}
	}
}

package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

// h200 is the card the rule's factors (tileEfficiency) were set on.
var h200 = Device{Name: "NVIDIA H200", SMs: 132}

// TestDefaultTile: the untuned whole tile of a product (issue 56's
// "untuned defaults" bar; TestDefaultTileFor: where it splits), by shape
// and dtype: for bf16 the tile of least waves times area (the picks that
// were within 3% of the best measured at M 64-1024 on 1 x H200, and
// 128x224 at 4096 x 1792 x 4096), agmm's family tile from 4,096 rows
// where 128x256 wins and for FP8 from 4,096 rows (below, bf16's rule);
// it fits the GPU and takes every shape
// of the issue.
func TestDefaultTile(t *testing.T) {
	for _, tc := range []struct {
		m, n, k int
		fp8     bool
		want    string
	}{
		{64, 14336, 4096, false, "64x112:s9:c2:g8:pp:ef"}, // 128 tiles of 64x112, one wave (112 of 64x128: +2.6% on 1 x H200, 2026-12-05)
		{64, 8192, 8192, false, "64x64:s10:c2:g8:pp:ef"},  // 128 narrow tiles fill one wave, 64 of 64x128 half
		{256, 1280, 8192, false, "64x128:s8:c2:g8:pp"},    // 80 narrow tiles fill 61%: not a candidate; B (20 MiB) fits L2: no evict-first
		{1024, 1280, 8192, false, "128x128:s6:c2:g4:pp"},  // compute-bound: no narrow tile
		{64, 28672, 8192, false, "64x224:s6:c2:g8:pp:ef"}, // 128 of 64x224 in one wave beat 224 of 64x128 in two
		{128, 8192, 8192, false, "64x128:s8:c2:g8:pp:ef"}, // 128 tiles
		{256, 8192, 8192, false, "128x128:s6:c2:g4:pp"},   // 128 tiles; 64x256 ties and comes later
		{512, 14336, 4096, false, "128x224:s5:c2:g16"},    // 256 tiles in 2 waves beat 224 of 128x256 in 2
		{1024, 28672, 8192, false, "128x256:s4:c2:g8"},    // 896 tiles: 7 waves
		{4096, 1792, 4096, false, "128x224:s5:c2:g16"},    // 256 tiles in 2 waves; 128x256: 224 in 2
		{8192, 3584, 8192, false, "128x256:s4:c2:g8:cl2"}, // 128x256 from 4,096 rows: the family tile
		{4096, 14336, 4096, false, "256x160:s4:c2:g8"},    // 1,440 tiles: 11 waves, 99% full (128x256: 14, 97%); 64x128's 55 waves count less work, but it runs 18% slower
		{2048, 14336, 4096, false, "128x256:s4:c2:g8"},    // likewise, 7 waves
		// Many waves: 128x256's throughput over the finer tiles' (tileEfficiency).
		{16384, 8192, 14336, false, "128x256:s4:c2:g8:cl2"}, // waves alone: 128x224 (36 waves against 32), 4-10% slower measured
		{4096, 8192, 4096, false, "128x256:s4:c2:g8:cl2"},   // waves alone: 128x224
		{1024, 14336, 8192, false, "128x128:s6:c2:g4:pp"},   // 13 waves of 128x128 beat 128x224's 7 at its efficiency
		{4096, 1280, 8192, false, "256x160:s4:c2:g8"},       // 128 tiles: one wave; 128x128's 320 fill 3 at 81%, 128x256's 160 fill 2 at 61%
		{1024, 2560, 8192, false, "128x160:s6:c2:g8"},       // 128 tiles: one wave; 128x224's 96 fill 73%
		{4096, 3840, 8192, false, "256x160:s4:c2:g8"},       // 384 tiles: 3 waves, 97% full (128x256: 480 in 4, 91%)
		{64, 14336, 4096, true, "64x112:s9:c2:g8:pp"},       // FP8: bf16's rule at every size
		{64, 8192, 8192, true, "64x64:s10:c2:g8:pp"},
		{512, 8192, 8192, true, "128x256:s4:c2:g8"},
		{1024, 8192, 8192, true, "128x256:s4:c2:g8"},     // 4-6% ahead of the family tile here
		{4096, 8192, 8192, true, "128x256:s4:c2:g8:cl2"}, // from 4,096: clusters, as bf16 (not agmm's FP8 family tile, g4)
		{16384, 3584, 8192, true, "128x256:s4:c2:g8:cl2"},
		{4096, 1280, 8192, true, "256x160:s4:c2:g8"},      // one wave, as bf16: 1.08x cuBLASLt FP8 where the family tile ran 0.79
		{4096, 8192, 1024, false, "128x128:s6:c2:g4:pp"},  // a short main loop: 16 k-blocks
		{4096, 8192, 2048, false, "128x256:s4:c2:g8:cl2"}, // 32 k-blocks: not short
		{16384, 8192, 2048, true, "128x128:s6:c2:g4:pp"},  // 16 FP8 k-blocks (128 bytes each)
		{16384, 8192, 4096, true, "128x256:s4:c2:g8:cl2"},
		{1024, 8192, 3696, true, "128x256:s4:c2:g8:cl2"}, // FP8 rows off 32-byte sectors: clusters from 1,024 rows
		{1024, 8192, 3584, true, "128x256:s4:c2:g8"},     // on them: from 4,096
		{1024, 8192, 3696, false, "128x256:s4:c2:g8"},    // bf16 rows of 7,392 bytes are on them
	} {
		got := DefaultTile(tc.m, tc.n, tc.k, h200, tc.fp8)
		if got.String() != tc.want {
			t.Errorf("%dx%dx%d fp8 %v: %s, want %s", tc.m, tc.n, tc.k, tc.fp8, got, tc.want)
		}
		if err := got.Check(hopper.SmemLimit); err != nil {
			t.Errorf("%s: %v", got, err)
		}
	}
	// bf16 only: FP8's family tile at world 2 (128x256:s4:c2:g4) was
	// searched on two GPUs, DefaultTile's clusters measured on one.
	p := problemOf(t, 8192, 3584, 8192, 2, "bf16")
	c, err := VariantAGMM.DefaultOn(p, h100x2)
	if err != nil {
		t.Fatal(err)
	}
	if want := ImplFused + ":" + DefaultTile(8192, 3584, 8192, h200, false).String(); c[ParamImpl].Str != want {
		t.Errorf("agmm's default %s, DefaultTile %s", c[ParamImpl].Str, want)
	}
}

// h200MACsPerByte is smMACsPerByte of an H200 (4.8 TB/s): splitK must
// pick the same at either GPU's figure (TestDefaultTileFor).
const h200MACsPerByte = 0.78

// runsFused reports why the fused config of tile tl does not run kernel
// v on p: Validate's reason, as the runtime gives it (nil: it runs).
func runsFused(t *testing.T, v Variant, tl hopper.Tile, p Problem) error {
	t.Helper()
	c := v.Default()
	c[ParamImpl] = space.Str(ImplFused + ":" + tl.String())
	c[ParamChunks] = space.Int(1)
	cfg, err := v.ParseConfig(c)
	if err != nil {
		t.Fatalf("%s: %v", tl, err)
	}
	return v.Validate(cfg, p)
}

// TestDefaultTileFor: the untuned tile of a kernel on a problem: split in
// K where the whole tiles fill few SMs, the split's units fit one wave
// and Validate takes it (issue 56, 2026-12-02-h200-splitk.md: :sk4 at 64
// and 128 x 1280 x 8192, :sk2 at 256); DefaultTile's whole tiles
// elsewhere: where tiles fill the SMs, where the product is
// memory-bound, and wherever a split may not run (more than 256 rows,
// K/S under 512, a reduce-scatter, more than one rank). The same
// decision to split at the H200's bytes-per-MAC figure; every tile runs.
func TestDefaultTileFor(t *testing.T) {
	const pp128, pp64 = "64x128:s8:c2:g8:pp", "64x64:s10:c2:g8:pp"
	always := func(hopper.Tile) bool { return true }
	for _, tc := range []struct {
		v       Variant
		m, n, k int
		world   int
		dtype   string
		want    string
		// barred: the split splitK would pick if anything ran, which
		// Validate forbids here (the case tests the gate, not the cost).
		barred string
	}{
		// The measured N = 1280 shapes: 10, 20, 40 tiles of 64x128; the
		// split with the most units in one wave, 64x64 where it ties
		// (mostUnits).
		{VariantAGMM, 64, 1280, 8192, 1, "bf16", pp64 + ":sk4", ""},
		{VariantAGMM, 128, 1280, 8192, 1, "bf16", pp64 + ":sk2", ""},
		{VariantAGMM, 256, 1280, 8192, 1, "bf16", pp128 + ":sk2", ""},
		{VariantAGMM, 64, 1280, 8192, 1, "f16", pp64 + ":sk4", ""},
		{VariantAGMM, 100, 1288, 4144, 1, "bf16", pp128 + ":sk4", ""}, // ragged: 22 tiles, 88 units; 64x64 in 2: 84
		// Shapes first measured in the same call (2026-12-03-h200-smallm-stages,
		// three rounds) and read before the rule was written: its pick was
		// the fastest split of both tiles.
		{VariantAGMM, 64, 2048, 8192, 1, "bf16", pp64 + ":sk4", ""},
		{VariantAGMM, 128, 2560, 8192, 1, "bf16", pp128 + ":sk2", ""}, // 64x64 in 2: 160 units, two waves
		{VariantAGMM, 64, 1024, 16384, 1, "e4m3", pp64 + ":sk4", ""},
		{VariantAGMM, 192, 1536, 8192, 1, "bf16", pp128 + ":sk2", ""},
		{VariantAGMM, 128, 1792, 4096, 1, "e4m3", pp64 + ":sk2", ""},
		// FP8 at N = 1280, tensor and row scales (2026-12-02-h200-fp8-smallm).
		{VariantAGMM, 64, 1280, 8192, 1, "e4m3", pp64 + ":sk4", ""},
		{VariantAGMM, 64, 1280, 8192, 1, "e4m3_row", pp64 + ":sk4", ""},
		{VariantAGMM, 256, 1280, 8192, 1, "e4m3", pp128 + ":sk2", ""},
		{VariantAGMM, 256, 1280, 8192, 1, "e4m3_row", pp128 + ":sk2", ""},
		// Memory-bound with 64x128 filling at most half the SMs: whole
		// 64x64 tiles, which fill one wave (narrowFits).
		{VariantAGMM, 64, 8192, 3584, 1, "bf16", pp64 + ":ef", ""}, // 64 tiles; :sk2 measured 7% slower
		{VariantAGMM, 64, 8192, 8192, 1, "bf16", pp64 + ":ef", ""}, // :sk2 3% slower
		{VariantAGMM, 64, 7168, 8192, 1, "bf16", pp64 + ":ef", ""},
		{VariantAGMM, 64, 8192, 3200, 1, "bf16", pp64, ""},         // B exactly L2 (50 MiB): no evict-first (bBytesOverL2)
		{VariantAGMM, 64, 8192, 3264, 1, "bf16", pp64 + ":ef", ""}, // 51 MiB
		{VariantAGMM, 64, 8192, 1024, 1, "bf16", pp64, ""},         // B (16 MiB) fits L2: no evict-first (0.78x cuBLASLt with it, 1.20x without, 1 x H100)
		// Tiles fill more than half the SMs: never split.
		{VariantAGMM, 128, 8192, 3584, 1, "bf16", pp128 + ":ef", ""},
		{VariantAGMM, 128, 8192, 8192, 1, "bf16", pp128 + ":ef", ""},
		{VariantAGMM, 256, 8192, 3584, 1, "bf16", "128x128:s6:c2:g4:pp", ""},
		{VariantAGMM, 256, 8192, 1024, 1, "bf16", "128x128:s6:c2:g4:pp", ""},
		{VariantAGMM, 64, 14336, 4096, 1, "bf16", "64x112:s9:c2:g8:pp:ef", ""},
		{VariantAGMM, 128, 28672, 8192, 1, "bf16", "128x224:s5:c2:g16", ""},
		// Memory-bound: 64x224's lead in work stands. Compute-bound at
		// 1024 x 1280 x 8192, its lead (96 tiles against 80 of 128x128,
		// one wave each) is under rowsEfficiency64's 18%: 128x128:pp (one
		// round had them at 45.3 and 44.1 µs).
		{VariantAGMM, 256, 7168, 8192, 1, "bf16", "64x224:s6:c2:g8:pp:ef", ""},
		{VariantAGMM, 1024, 1280, 8192, 1, "bf16", "128x128:s6:c2:g4:pp", ""},
		// A split that would pay, where it may not run.
		{VariantAGMM, 320, 640, 8192, 1, "bf16", pp128, pp128 + ":sk4"}, // more than 256 rows: no split, no evict-first (evictFirstMaxRows)
		{VariantAGMM, 512, 1280, 8192, 1, "bf16", pp128, ""},            // eight tile rows read each B tile: no evict-first (8.5% slower with it, 1 x H100)
		{VariantAGMM, 64, 1280, 960, 1, "bf16", pp128, pp128 + ":sk2"},  // 480 of K a slice
		{VariantAGMM, 128, 1280, 8192, 2, "bf16", pp128, pp128 + ":sk4"},
		{VariantAGMM, 256, 1280, 8192, 8, "bf16", pp128, pp128 + ":sk2"},
		{VariantMatmulRS, 128, 1280, 8192, 2, "bf16", pp128, pp128 + ":sk4"},
		// A reduce-scatter of one rank is its product (FusedPlain): split
		// as agmm's.
		{VariantMatmulRS, 64, 1280, 8192, 1, "bf16", pp64 + ":sk4", ""},
		// The last wave mostly idle, compute-bound: stream-K where its
		// cost is lower (streamK) and it may run (a plain product).
		{VariantAGMM, 16384, 14336, 8192, 1, "bf16", streamKTile, ""},        // 7,168 tiles: 40 in the last wave
		{VariantAGMM, 4096, 14784, 8192, 1, "bf16", streamKTile, ""},         // 1,856: 8
		{VariantMatmulRS, 4096, 14784, 8192, 1, "bf16", streamKTile, ""},     // its product
		{VariantAGMM, 4096, 14784, 8192, 2, "bf16", "128x224:s5:c2:g16", ""}, // DefaultTile's: no stream-K at world > 1
		{VariantMatmulRS, 4096, 14784, 8192, 4, "bf16", "128x224:s5:c2:g16", ""},
		{VariantAGMM, 4096, 28672, 8192, 1, "bf16", "256x160:s4:c2:g8", ""},    // 2,880 tiles, 22 waves, 99% full: below :st's cost
		{VariantAGMM, 4096, 1280, 8192, 1, "bf16", "256x160:s4:c2:g8", ""},     // 128 tiles, one wave: below :st's cost (160 tiles)
		{VariantAGMM, 8192, 3584, 8192, 1, "bf16", "128x256:s4:c2:g8:cl2", ""}, // 104 of 132 in the last wave: too little to win
		// FP8 counts 128-element k-blocks: stream-K at 16384 x 8192 x 28672
		// (2,048 cluster tiles, the last of 32 waves 2/66 full), not at K
		// 8,192 (where StreamKMinGain's k-blocks weigh four times as much).
		{VariantAGMM, 16384, 8192, 28672, 1, "e4m3", streamKTile, ""},
		{VariantAGMM, 16384, 8192, 28672, 1, "e4m3_row", streamKTile, ""},
		{VariantAGMM, 16384, 8192, 28672, 2, "e4m3", "128x256:s4:c2:g8:cl2", ""},
		{VariantAGMM, 16384, 8192, 8192, 1, "e4m3", "128x256:s4:c2:g8:cl2", ""},
	} {
		name := fmt.Sprintf("%s %dx%dx%d w%d %s", tc.v, tc.m, tc.n, tc.k, tc.world, tc.dtype)
		t.Run(name, func(t *testing.T) {
			p := problemOf(t, tc.m, tc.n, tc.k, tc.world, tc.dtype)
			got := DefaultTileFor(tc.v, p, h200)
			if got.String() != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
			whole := DefaultTile(tc.m, tc.n, tc.k, h200, p.Dtype.FP8())
			if got.KSplits() == 1 && !got.StreamK && got != whole {
				t.Errorf("unsplit %s is not DefaultTile's %s", got, whole)
			}
			if got.StreamK && (tc.world != 1 || got.StreamKTiles(tc.m, tc.n, operandElem(p.Dtype.FP8()).KBlocks(tc.k), 132) == 0) {
				t.Errorf("%s where stream-K may not run or shares nothing", got)
			}
			if s := got.KSplits(); s > 1 {
				if u := got.Units(tc.m, tc.n); u > 132 || u <= got.Tiles(tc.m, tc.n) {
					t.Errorf("%s: %d units for 132 SMs from %d tiles", got, u, got.Tiles(tc.m, tc.n))
				}
				for _, why := range []bool{tc.world == 1, tc.m <= SplitKMaxRows, tc.k/s >= SplitKMinK} {
					if !why {
						t.Errorf("%s where a split may not run", got)
					}
				}
			}
			if tc.world == 1 && tc.n == 1280 && tc.k == 8192 {
				// The measured shapes: the same pick at the H200's MACs
				// a byte.
				h200 := splitK(unhinted(whole), tc.m, tc.n, tc.k, 132, p.Dtype.FP8(), h200MACsPerByte, func(s hopper.Tile) bool { return runsFused(t, tc.v, s, p) == nil })
				if h200.KSplits() > 1 != (got.KSplits() > 1) {
					t.Errorf("%s at the H200's %v MACs a byte, %s at %v", h200, h200MACsPerByte, got, smMACsPerByte)
				}
			}
			if tc.barred != "" {
				if free := splitK(unhinted(whole), tc.m, tc.n, tc.k, 132, p.Dtype.FP8(), smMACsPerByte, always); free.String() != tc.barred {
					t.Errorf("unbarred: %s, want %s (the case would not test the gate)", free, tc.barred)
				}
			}
			// A split tile runs where it is returned: the runtime's
			// ParseConfig and Validate take its config. A whole tile
			// passes the tile's own checks, as bin/gemmalone runs it
			// (rows per rank in whole tiles are DefaultOn's business).
			if got.KSplits() > 1 || got.StreamK {
				if err := runsFused(t, tc.v, got, p); err != nil {
					t.Errorf("%s does not run: %v", got, err)
				}
			}
			if err := got.Check(hopper.SmemLimit); err != nil {
				t.Errorf("%s: %v", got, err)
			}
			if err := got.CheckShapeFor(p.Dtype.Format(), tc.n, tc.k); err != nil {
				t.Errorf("%s: %v", got, err)
			}
		})
	}
}

// TestSplitKNeverWhereItMayNot: over a grid of small-M products, kernels,
// worlds and dtypes, DefaultTileFor splits only a plain product of
// at most SplitKMaxRows rows and SplitKMinK of K a slice, whose whole tiles
// fill at most half the SMs, into units that fit one wave; Validate takes
// every split it returns; and shapes with enough tiles never split.
func TestSplitKNeverWhereItMayNot(t *testing.T) {
	splits := 0
	for _, sms := range []int{132, 114, 78} {
		for _, m := range []int{16, 64, 96, 128, 192, 256, 320, 512} {
			for _, nk := range [][2]int{{1280, 8192}, {1280, 1024}, {2048, 8192}, {1024, 2048}, {3584, 8192}, {8192, 1024}, {7168, 8192}, {8192, 3584}, {512, 16384}} {
				for _, world := range []int{1, 2, 4, 8} {
					for _, dtype := range []string{"bf16", "f16", "e4m3"} {
						for _, v := range Variants {
							if m%world != 0 {
								continue
							}
							p := problemOf(t, m, nk[0], nk[1], world, dtype)
							got := DefaultTileFor(v, p, Device{SMs: sms})
							whole := DefaultTile(m, nk[0], nk[1], Device{SMs: sms}, p.Dtype.FP8())
							s := got.KSplits()
							if s == 1 {
								if got != whole {
									t.Errorf("%s %v sms %d: %s, DefaultTile %s", v, p, sms, got, whole)
								}
								continue
							}
							splits++
							got1 := got
							got1.SplitK = 0
							got1.EvictFirstB = whole.EvictFirstB // a split keeps B's default policy
							switch {
							case got1 != whole && (got1.BM != whole.BM || got1.BN >= whole.BN):
								t.Errorf("%s %v sms %d: %s splits another tile than DefaultTile's %s", v, p, sms, got, whole)
							case world != 1 || m > SplitKMaxRows || nk[1]/s < SplitKMinK:
								t.Errorf("%s %v sms %d: %s where a split may not run", v, p, sms, got)
							case 2*whole.Tiles(m, nk[0]) > sms || got.Units(m, nk[0]) > sms:
								t.Errorf("%s %v sms %d: %s of %d tiles, %d units", v, p, sms, got, whole.Tiles(m, nk[0]), got.Units(m, nk[0]))
							}
							if err := runsFused(t, v, got, p); err != nil {
								t.Errorf("%s %v: %s does not run: %v", v, p, got, err)
							}
						}
					}
				}
			}
		}
	}
	if splits == 0 {
		t.Error("no shape split")
	}
}

// TestDefaultOnNeverSplits: what an untuned caller runs (DefaultOn: the
// cuBLASLt pipeline on one rank, fixed fused configs on teams) holds no
// split tile, whatever the rows.
func TestDefaultOnNeverSplits(t *testing.T) {
	for _, v := range Variants {
		for _, world := range []int{1, 2, 4, 8} {
			for _, m := range []int{64, 128, 256, 1024} {
				for _, dtype := range []string{"bf16", "e4m3"} {
					p := problemOf(t, m, 1280, 8192, world, dtype)
					c, err := v.DefaultOn(p, h100x2)
					if err != nil {
						t.Fatal(err)
					}
					if impl := c[ParamImpl].Str; strings.Contains(impl, ":sk") {
						t.Errorf("%s %v: %s", v, p, impl)
					}
				}
			}
		}
	}
}

// TestSmallTilesAreSearched: every DefaultTile candidate runs on the GPU
// (Check) and is a tile searches try (hopper.Searched), so an untuned call
// never runs a tile no search could have measured; and every
// tileEfficiency entry names a candidate (a misspelt key would be ignored
// silently and its tile weighed at 128x256's throughput).
func TestSmallTilesAreSearched(t *testing.T) {
	searched := map[string]bool{}
	for _, name := range hopper.Searched {
		searched[name] = true
	}
	candidate := map[string]bool{}
	for _, name := range smallTiles {
		tl, err := hopper.ParseTile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := tl.Check(hopper.SmemLimit); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !searched[tl.String()] {
			t.Errorf("%s is a DefaultTile candidate but not in hopper.Searched", name)
		}
		candidate[name] = true
	}
	for name, e := range tileEfficiency {
		if !candidate[name] || e <= 0 || e > 1 {
			t.Errorf("tileEfficiency[%q] = %v: want a smallTiles entry and a factor in (0, 1]", name, e)
		}
	}
	for _, cf := range cardTileEfficiency {
		for _, fp8 := range []bool{false, true} {
			for name, e := range cf.of(fp8) {
				if !candidate[name] || e <= 0 || e > 1 {
					t.Errorf("cardTileEfficiency %q fp8 %v: %q = %v: want a smallTiles entry and a factor in (0, 1]",
						cf.part, fp8, name, e)
				}
			}
		}
	}
}

// TestStreamKOnlyWhereItMayRun: over a grid of large products, kernels,
// worlds and dtypes, DefaultTileFor returns the stream-K tile only for a
// plain product (one rank) that it shares tiles out on, which
// Validate takes; and it does return it somewhere.
func TestStreamKOnlyWhereItMayRun(t *testing.T) {
	shared := 0
	for _, m := range []int{1024, 4096, 16384} {
		for _, n := range []int{1280, 5120, 14784, 28672} {
			for _, k := range []int{4096, 8192} {
				for _, world := range []int{1, 2, 4, 8} {
					for _, dtype := range []string{"bf16", "f16", "e4m3"} {
						for _, v := range Variants {
							p := problemOf(t, m, n, k, world, dtype)
							got := DefaultTileFor(v, p, h200)
							if !got.StreamK {
								continue
							}
							shared++
							if world != 1 || got.StreamKTiles(m, n, operandElem(p.Dtype.FP8()).KBlocks(k), 132) == 0 {
								t.Errorf("%s %v: %s where stream-K may not run or shares nothing", v, p, got)
							}
							if err := runsFused(t, v, got, p); err != nil {
								t.Errorf("%s %v: %s does not run: %v", v, p, got, err)
							}
						}
					}
				}
			}
		}
	}
	if shared == 0 {
		t.Error("no shape took the stream-K tile")
	}
}

// unhinted is t without evictFirst64's hint: the whole tile splitK splits
// (DefaultTileFor adds the hint only to a tile it does not split).
func unhinted(t hopper.Tile) hopper.Tile {
	t.EvictFirstB = false
	return t
}

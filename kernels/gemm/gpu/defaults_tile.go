package gpu

// The fused GEMM's untuned tile for one GPU (issue 56): DefaultTile's
// rule by shape and dtype, and DefaultTileFor, which adds the work splits
// of defaults_split.go (stream-K, split-K) where the caller's kernel may
// run them. defaults.go has the untuned configs of the kernels.

import (
	"strings"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

// smallTiles are DefaultTile's bf16 and f16 candidates, largest first
// (a tie goes to the earlier): the tiles that were best at some shape of
// bench/results/2026-12-02-h200-gemmalone-smallm.md (M 64-1024), and
// 64x64 (narrowTileCols). Each has as many stages as fit in shared
// memory: at 64-256 rows the products stream B, and more k-blocks in
// flight read it faster. 64x128 with 8 stages instead of 6 ran 0.4-7%
// faster on 8 small-M shapes of 8 (1 x H200, 2026-12-03, the mean of two
// interleaved rounds: bench/results/2026-12-03-h200-smallm-stages.md). No
// split-K tile here: a split runs plain products only, which DefaultTile
// cannot tell from a fused kernel's; DefaultTileFor splits its pick
// (splitK) where the caller's kernel and problem may.
//
// The two 160-column tiles are there for the waves: their tile counts
// fill 132 SMs where the others leave a last wave mostly idle (4096 x
// 1280: 128 tiles of 256x160 against 160 of 128x256; 1024 x 2560: 128 of
// 128x160 against 96 of 128x224), bench/results/2026-12-03-h200-wave-tiles.md.
//
// 128x224 walks its tiles in swizzle groups of 16 rows, not the 4 it was
// first searched with: a wave of 132 tiles then spans 16 rows of A and 8
// columns of B instead of 4 and 33, half the operand bytes that its tiles
// share through L2 (the least at about sqrt(132 x 224 / 128) = 15 rows).
// On 8 shapes of 6,144-16,384 rows outside issue 56's set (1 x H200,
// 2026-12-04, three interleaved rounds, bf16) g16 ran 2.4% faster than g4
// (geometric mean; ahead on 8 of 8,
// bench/results/2026-12-04-h200-large-tiles.md). At most 4 tile rows
// (M <= 512 here) the two walk alike. The other candidates keep their
// groups: moving them gained nothing measurable in the same rounds
// (128x256:st g8 against g16, 128x160 g8 against g16, 256x160 g8 against
// g16, 128x128:pp g4 against g16: each pair within 0.4%), even for
// 128x128:pp, whose g4 is 3-4x off the optimum: the rule of thumb is no
// law for every tile.
//
// The 64-row tiles of 80-192 columns other than 64 and 128 are there for
// the waves too (wave-width tiles): at 64-256 rows the product streams B
// from DRAM, and a width whose tile count is about one wave puts every SM
// on its own slice of B (64 x 14336: 128 tiles of 64x112 against 112 of
// 64x128; 64 x 10240: 128 of 64x80 against 80 of 64x128 and 160 of
// 64x64). On 1 x H200 (2026-12-05, bench/results/2026-12-05-h200-smallm-ksweep.md)
// B streamed at 4.12 TB/s with 64 CTAs of 64x128 at 64 x 8192 and 4.31
// with 128 (its two k-slices), cuBLASLt's rate. Those narrower than 128
// columns, and 64x160 and 64x192, are candidates only where narrowFits
// (memory-bound, one wave at least three quarters full), as 64x64 is:
// waveOnly. On 1 x H200 (2026-12-05, 19 shapes of 64-256 rows never timed
// with them, two interleaved rounds, bf16 and FP8 row scales, a keep rule
// written before the run: bench/results/2026-12-05-h200-wave-widths.md)
// the untuned tile with them against without: 80-112 columns 10 of 10
// ahead in bf16 (+3.4% geometric mean, the least +0.3%) and 9 of 10 in
// FP8 (+3.7%, the least -0.3%); 160 and 192 4 of 5 (+7.5%, the least
// -0.7%) and 5 of 5 (+7.7%). 64x48 (its A tile read again for every 48
// columns of B) failed the rule in both: 28% behind 64x128 split in two
// k-slices at 256 x 1280 x 8192 in bf16 (0.830 against 1.153 of
// cuBLASLt), though 26% ahead at 64 x 5120 x 8192; it is not a candidate.
var smallTiles = []string{"256x160:s4:c2:g8", "128x256:s4:c2:g8", "128x224:s5:c2:g16", "128x160:s6:c2:g8",
	ppTile, "64x256:s5:c2:g8:pp", "64x224:s6:c2:g8:pp", "64x192:s6:c2:g8:pp", "64x160:s7:c2:g8:pp",
	"64x128:s8:c2:g8:pp", "64x112:s9:c2:g8:pp", "64x96:s10:c2:g8:pp", "64x80:s11:c2:g8:pp", narrowTile}

// narrowTile is the 64x64 candidate: DefaultTile's where narrowFits, and
// mostUnits' other split tile.
const narrowTile = "64x64:s10:c2:g8:pp"

// narrowTileCols: tiles narrower than this (64x64) are DefaultTile's
// candidates only where narrowFits.
const narrowTileCols = 128

// waveOnly says whether candidate t is DefaultTile's only where
// narrowFits: the narrow tiles and the 64-row wave-width ones (smallTiles).
func waveOnly(t hopper.Tile) bool {
	return t.BN < narrowTileCols || t.BM == 64 && (t.BN == 160 || t.BN == 192)
}

// narrowFits says whether narrow tile t (64x64) is a candidate for an m x
// n product on sms SMs: where it is memory-bound (bound false) and t's
// tiles fill one wave at least three quarters full. There it doubles
// 64x128's CTAs that stream B, which fill half the SMs: on 1 x H200
// (2026-12-03, bench/results/2026-12-03-h200-smallm-stages.md)
// 64x64:s10:pp ran 0.984 and 1.055x cuBLASLt at 64 x 8192 x 8192 and
// 64 x 8192 x 3584 (two interleaved rounds), where 64x128:s8:pp ran 0.966
// and 1.030x. Not elsewhere: each of its wgmmas reads as many bytes of
// shared memory as 64x128's for half the multiply-adds, so where tensor
// throughput decides it is the slower tile; in two waves it tied 64x128's
// one at best (0.992 against 1.010 at 64 x 14336 x 4096); and 80 whole
// tiles (256 x 1280 x 8192) ran 20.8 µs against 14.3 for 64x128 in two
// k-slices, the same 80 units with half the k-blocks each. Its split
// forms are DefaultTileFor's (mostUnits).
func narrowFits(m, n int, t hopper.Tile, sms int, bound bool) bool {
	tiles := t.Tiles(m, n)
	return !bound && tiles <= sms && 4*tiles >= 3*sms
}

// rowsEfficiency64 is what a 64-row (ping-pong) tile keeps of a 128-row
// tile's tensor throughput where both are compute-bound: ncu on 1 x H200
// (2026-12-02, bench/results/2026-12-02-h200-ncu.md) at 4096 x 14336 x
// 4096 had 64x128:pp's tensor pipe 79.4% busy against 96.6% for 128x256
// (0.82). Counting waves alone, 64x128's finer quantization (55 waves,
// 99% of the last full) came out 2% under 128x256's (14 waves, 97%), and
// it ran 18% slower (0.82x cuBLASLt). Of the 25 small-M shapes measured
// (M 64-1024), one pick changed with the factor: 1024 x 1280 x 8192 from
// 64x224:pp to 128x128:pp, 2.7% behind it in both rounds measured.
const rowsEfficiency64 = 0.82

// shortLoopKBlocks and shortLoopEfficiency: where a tile's main loop is
// at most shortLoopKBlocks k-blocks (K up to 1,024 in bf16, 2,048 in FP8:
// a k-block is 128 bytes of K either way, and takes as long), the tiles
// whose consumers split a tile's rows (not ping-pong) are counted at
// 1/shortLoopEfficiency more where the product is compute-bound: their
// epilogue stalls both consumers while a ping-pong tile's runs beside the
// other consumer's main loop, and with few k-blocks the epilogue is a
// large share of a tile. On 1 x H200 (2026-12-03, one round of 0.2 s
// each) 128x128:pp over 128x256:cl2 at 4,096 and 16,384 rows was 1.019
// and 1.058 at 16 bf16 k-blocks (K 1024), 1.048-1.125 at 8 and 16 FP8
// ones (K 1024, 2048; geometric mean of the six 1.063, hence 0.94), but
// 0.94-1.00 at 32 (bf16 K 2048, FP8 K 4096), and from 56 behind on 32
// of 38 FP8 cells (ahead mostly where 128x256's waves fit badly)
// (bench/results/2026-12-03-h200-fp8-large-rows.md). Held out (22 cells
// outside issue 56's set, with offSectorClusterRows and FP8's clusters,
// two rounds): the untuned tile 1.067x faster than before, within 3% of
// the best measured on all 22. FP8 row scales at K = 1,024 lost the pick
// (128x256 5.8-7.4% ahead at 16,384 x 8,192 and 2,048 x 28,672) until the
// epilogue's scales loaded early (EARLY_SCALES); then, on 7 shapes at K
// 1,024-2,048, within 3% of the best of three tiles on all 7 (1 x H200,
// 2026-12-04, bench/results/2026-12-04-h200-fp8-scales.md, call N).
const (
	shortLoopKBlocks    = 16
	shortLoopEfficiency = 0.94
)

// offSectorClusterRows: from this many rows, not clusterRows, the
// 128x256 tile runs in clusters of two where A's and B's rows start off
// 32-byte sectors (K x the element's bytes not a multiple of 32: FP8 at K
// = 3696). Each 128-byte load of such a row then reads five sectors, and
// the cluster's multicast halves B's reads from L2: at 1024 x 8192 x 3696
// in FP8 :cl2 ran 1.016x cuBLASLt FP8 against 0.921 without, while at 256
// rows no tile reached 0.75 (1 x H200, 2026-12-03; ncu at 4096 x 8192 x
// 3696: tensor pipe 68% busy against 86% at K = 3584, long-scoreboard
// stalls 15.7 against 3.0).
const offSectorClusterRows = 1024

// operandElem is the rule's operand type: e4m3 where fp8, else bf16
// (f16 has its sizes).
func operandElem(fp8 bool) hopper.Elem {
	if fp8 {
		return hopper.ElemE4M3
	}
	return hopper.ElemBF16
}

// computeBound says whether an m x n x k bf16 product takes longer in
// multiply-adds on sms SMs than in HBM bytes (productBytes), by splitK's
// roofline (smMACsPerByte). Only there does a tile's tensor throughput
// decide (rowsEfficiency64): at 128 x 14336 x 4096, memory-bound,
// 64x224:pp was the best tile and 128x128:pp 3.2% slower (one round,
// 2026-12-02-h200-gemmalone-smallm).
//
// FP8 (fp8 true): one-byte operands, and twice bf16's multiply-adds an SM
// (1,979 against 989 TFLOP/s dense).
func computeBound(m, n, k, sms int, fp8 bool) bool {
	macs := float64(m) * float64(n) * float64(k)
	bytes, rate := productBytes(m, n, k), smMACsPerByte
	if fp8 {
		bytes, rate = fp8ProductBytes(m, n, k), 2*smMACsPerByte
	}
	return macs > bytes*rate*float64(sms)
}

// productBytes is what an m x n x k product moves through HBM at least: A
// and B in bf16 or f16 once each, C in OutElemBytes.
func productBytes(m, n, k int) float64 {
	return 2*(float64(m)+float64(n))*float64(k) + hopper.OutElemBytes*float64(m)*float64(n)
}

// fp8ProductBytes is productBytes with one-byte (e4m3) A and B.
func fp8ProductBytes(m, n, k int) float64 {
	return (float64(m)+float64(n))*float64(k) + hopper.OutElemBytes*float64(m)*float64(n)
}

// clusterRows: from this many rows DefaultTile's 128x256 tile runs in
// clusters of two (:cl2, agmm's bf16 family tile), the best tile sustained
// at 8192 and 16384 x 3584 x 8192 on an H200
// (bench/results/2026-11-24-h200-sustained-gemm.md); at 512-1024 rows the
// plain tile was 1-7% faster on 1 x H200 (2026-12-02). FP8 alike: at
// 4,096-16,384 rows (e4m3, 23 shapes of issue 56's set, one round of 0.2 s,
// 1 x H200, 2026-12-03, bench/results/2026-12-03-h200-fp8-large-rows.md)
// the clustered tile was 0.968 of the best of eight tiles (geometric mean)
// and agmm's FP8 family tile (128x256:s4:c2:g4) 0.951; the whole rule,
// bf16's unchanged, 0.990 (within 3% of the best on 21 of 23 shapes),
// the FP8 family tile everywhere 0.950 (8 of 23).
const clusterRows = 4096

// DefaultTile is the fused GEMM's untuned tile for an m x n x k product on
// one sm_90 GPU d (fp8: e4m3 operands): the tile issue 56's
// "untuned defaults" bar measures against the best tile of each shape
// (bin/gemmalone -tiles default, bench/gemmalone_table.py).
//
// bf16 and f16: of smallTiles, the one whose waves (output tiles over
// SMs, rounded up) times its area is least: the rows and columns the
// busiest SM computes, where the product is compute-bound a 128-row
// tile's counted at 1/tileEfficiency and a 64-row tile's at
// 1/rowsEfficiency64 (their lower tensor throughput, measured). On 1 x H200
// (2026-12-02, 25 shapes at M 64-1024, one round each) it was within 3%
// of the best of six tiles on all 25, where agmm's family tile
// (128x256:s4:c2:g8:cl2) was on 1 and up to 4x slower; at 4096 x 1792 x
// 4096 it picks 128x224, the tile recorded best there (H100 and H200,
// 2026-11-28). FP8: the same rule with its own bytes and multiply-adds in
// computeBound, and bf16's factors (fitted on bf16 alone; see clusterRows
// for how it held on FP8). Whole tiles only, for any kernel at any world;
// DefaultTileFor adds split-K where the caller may run it.
//
// At 128 x 28672 x 8192 the cost ties: 128x224 (128 tiles, one wave) and
// 64x224:pp (256 tiles, two waves) both come to 28,672. The tie stays
// with the larger tile: for the same outputs it loads 1.6x fewer bytes
// of A and B from L2 ((128+224)/(128*224) against (64+224)/(64*224)).
// The measurements do not overrule that: one round each, the 2026-12-02
// runs disagree (smallm: 128x224 best, 64x224 +1.3%; splitk: 64x224 best,
// 128x224 +5.9% by ratio but +2.7% in µs, cuBLASLt around the 64-row
// tile at 124.8 and 137.9 µs, and 128x256 faster than both in µs).
func DefaultTile(m, n, k int, d Device, fp8 bool) hopper.Tile {
	t, _ := defaultTile(m, n, k, d, fp8)
	t.EvictFirstB = evictFirst64(t, m, n, k, fp8)
	return t
}

// defaultTile is DefaultTile's pick and its cost (the busiest SM's rows x
// columns, each 128- and 256-row tile's over its tileEfficiency where the product
// is compute-bound), or a cost of -1 where the rule does not weigh one
// (nonsense sizes).
func defaultTile(m, n, k int, d Device, fp8 bool) (hopper.Tile, float64) {
	sms := d.SMs
	// agmm's bf16 family tile, 128x256 in clusters of two, for FP8 too
	// (clusterRows).
	family := func() hopper.Tile {
		impl := familyDefaults[VariantAGMM][false][0][ParamImpl].Str
		t, err := hopper.ParseTile(strings.TrimPrefix(impl, ImplFused+":"))
		if err != nil {
			panic("gpu: familyDefaults' agmm tile " + impl + ": " + err.Error())
		}
		return t
	}
	if m <= 0 || n <= 0 || sms <= 0 {
		return family(), -1
	}
	// The least busiest-SM work of the 128- and 256-row tiles (each counted at
	// 1/tileEfficiency where compute-bound), and of the 64-row ones: a
	// 64-row tile is taken only where its cost is below rowsEfficiency64
	// of the least 128-row cost by waves alone, the comparison its factor
	// was measured in (so tileEfficiency moves no pick between 64- and
	// 128-row tiles: that is unmeasured).
	bound := computeBound(m, n, k, sms, fp8)
	elem := operandElem(fp8)
	shortLoop := bound && elem.KBlocks(k) <= shortLoopKBlocks
	longLoop := elem.KBlocks(k) > shortLoopKBlocks
	// weigh is the least-cost tile, with the card's own factors
	// (cardTileEfficiency) or with tileEfficiency's alone.
	weigh := func(card bool) (hopper.Tile, float64) {
		var best, best64 hopper.Tile
		bestCost, bestCost64, waves128 := -1.0, -1.0, -1.0
		for _, name := range smallTiles {
			t, err := hopper.ParseTile(name)
			if err != nil {
				panic("gpu: smallTiles' " + name + ": " + err.Error())
			}
			if waveOnly(t) && !narrowFits(m, n, t, sms, bound) {
				continue
			}
			tiles := int64((m+t.BM-1)/t.BM) * int64((n+t.BN-1)/t.BN)
			work := float64((tiles + int64(sms) - 1) / int64(sms) * int64(t.BM) * int64(t.BN))
			cost := work
			if e, ok := d.efficiency(name, fp8, !longLoop, card); ok && bound {
				cost /= e
			}
			if shortLoop && t.BM >= 128 && !t.PingPong {
				cost /= shortLoopEfficiency
			}
			switch {
			case t.BM >= 128:
				if bestCost < 0 || cost < bestCost {
					best, bestCost = t, cost
				}
				if waves128 < 0 || work < waves128 {
					waves128 = work
				}
			case bestCost64 < 0 || cost < bestCost64:
				best64, bestCost64 = t, cost
			}
		}
		keep := 1.0 // what a 64-row tile keeps of a 128-row one's speed
		if bound {
			keep = rowsEfficiency64
		}
		if bestCost64 >= 0 && bestCost64 < keep*waves128 {
			best, bestCost = best64, bestCost64
		}
		return best, bestCost
	}
	best, bestCost := weigh(true)
	// A card's FP8 factors may not hand the pick to a whole 128x256 tile,
	// plain or clustered: held out three times on 1 x H100, those moves
	// were at or above the ping-pong tile on 8 of 15 (worst 0.940), the
	// factor's other moves on 20 of 22 (worst 0.992;
	// bench/results/2026-12-07-h100-card-factors-4.md). So guarded, the
	// factor passed a fourth held-out run (9 of 12, geometric mean 1.044,
	// worst 0.984; 2026-12-07-h100-card-factors-5.md).
	// The cost stays the factor's, which stream-K is weighed against.
	if fp8 && best.BM == 128 && best.BN == 256 {
		best, _ = weigh(false)
	}
	offSectors := k*elem.Bytes()%32 != 0
	if best.BM == 128 && best.BN == 256 && (m >= clusterRows || offSectors && m >= offSectorClusterRows) {
		return family(), bestCost
	}
	if cf, ok := d.card(); ok && cf.offSectorTwin && offSectors && best.String() == ppTile &&
		m%offSectorTwinRows == 0 && m <= offSectorTwinMaxRows {
		if cf.offSectorFill && wideFills(m, n, sms) {
			return family(), bestCost
		}
		twin, err := hopper.ParseTile(ppClusterTwin)
		if err != nil {
			panic("gpu: ppClusterTwin " + ppClusterTwin + ": " + err.Error())
		}
		return twin, bestCost
	}
	if cf, ok := d.card(); ok && cf.offLineWide && k*elem.Bytes()%128 != 0 && best.String() == ppTile &&
		m >= offLineWideMinRows && m <= offLineWideMaxRows && tilesFill(m, n, 224, sms) {
		wide, err := hopper.ParseTile(offLineWideTile)
		if err != nil {
			panic("gpu: offLineWideTile " + offLineWideTile + ": " + err.Error())
		}
		return wide, bestCost
	}
	return best, bestCost
}

// offLineWideTile is the tile a card with offLineWide runs in the
// ping-pong tile's place at offLineWideMinRows-offLineWideMaxRows rows
// whose rows start off 128-byte lines, where its tiles fill the card
// (where the clustered twin does not take the pick first). There the
// ping-pong tile's L2 requests limit it (a 128-byte load of a row
// straddles two lines), and a wider tile requests fewer rows of A and B
// per output; where its tiles do not fill the card, the ping-pong
// tile's smaller ones keep more SMs busy. Read on 1 x H100
// (bench/results/2026-12-07-h100-offsector-3rows.md and
// 2026-12-07-h100-offline-rows-screen.md): ahead on 18 of 19 shapes
// where its tiles fill the card, behind on 7 of 10 where they do not.
// Held out on 1 x H100 at 400-496 rows no run had timed
// (2026-12-08-h100-wide-fill-rows.md): 8 of 8 at or above in each
// dtype, geometric mean 1.146 (FP8 row scales) and 1.170 (bf16), worst
// 1.046 and 1.014.
const (
	offLineWideTile    = "128x224:s5:c2:g16"
	offLineWideMinRows = 256
	offLineWideMaxRows = 512
)

// tilesFill says whether 128-row tiles bn columns wide make at least
// sms tiles of an m x n product: every SM gets one.
func tilesFill(m, n, bn, sms int) bool {
	return (m+127)/128*((n+bn-1)/bn) >= sms
}

// wideFills says whether 128x256 tiles of an m x n product fill sms SMs at
// least once. Where the H100's rule would run the clustered twin, it runs
// 128x256 in clusters of two (the family tile) instead where they do: off
// sectors that tile requests a third fewer rows of A and B per output than
// the twin (B multicast over a pair), which pays once no SM idles. Read at
// 1,024 rows (bench/results/2026-12-07-h100-offsector-wide-1024.md: lost
// at 64 tiles, won 1.07-1.19 from 192) and held out at 256-768 rows on 16
// shapes no run had timed (2026-12-07-h100-offsector-fill.md, rule
// written before the run): FP8 row scales 6 of 8 at or above the twin,
// geometric mean 1.042, worst 0.960; bf16 7 of 8, 1.025, worst 0.962;
// below one fill, 6 controls 0.77-0.84.
func wideFills(m, n, sms int) bool {
	return tilesFill(m, n, 256, sms)
}

// ppTile is the 128-row ping-pong candidate (smallTiles) and
// ppClusterTwin the same 128x128 tile with two cooperative consumers in
// clusters of two along M, B multicast to both: the tile a card with
// offSectorTwin runs instead where rows start off 32-byte sectors, at a
// multiple of offSectorTwinRows rows up to offSectorTwinMaxRows (the
// scope held out on 1 x H100, cardTileEfficiency). Off sectors each
// 128-byte load of a row reads five sectors, and L2 tag requests limit
// the kernel there (bench/results/2026-12-07-h100-ncu-offsector.md);
// the multicast halves B's requests. The cost stays the ping-pong tile's,
// which stream-K is weighed against.
const (
	ppTile               = "128x128:s6:c2:g4:pp"
	ppClusterTwin        = "128x128:s6:c2:g4:cl2"
	offSectorTwinRows    = 256
	offSectorTwinMaxRows = 1024
)

// evictFirst64 says whether the untuned whole tile t loads B evict-first
// (hopper.Tile.EvictFirstB): the 64-row ping-pong tiles of 64, 128 and 224
// columns in bf16 and f16 (64x256 was never timed with it; split tiles
// keep the split's own rule, mostUnits).
// There each B tile is read by one or two tile rows and B streams from
// DRAM; evict-first keeps it from pushing out what is reused. Held out on
// 1 x H200 (2026-12-05, three rounds, rule fixed before the run): at 10
// tensor-parallel shapes of 64-192 rows (9 never timed before), the tile
// this rule picks was faster with it on 10 of 10, +0.8% to +4.2%
// (bench/results/2026-12-05-h200-evict-first-bf16-defaults.md). Not in
// FP8, where the first check (1 x H100) split 10 of 16 and its 64-row
// tiles are 1.3-2.9x cuBLASLt FP8 already, nor with clusters (no cache
// hint on a multicast load). Only up to evictFirstMaxRows rows, near the
// premise above: at 512 x 1280 x
// 8192 (eight tile rows read each B tile, and B fits L2) it took the
// untuned tile 8.5% behind the same tile without it on 1 x H100
// (2026-12-06, two passes each, bench/results/2026-12-06-h100-ef-defaults-set.md).
// And only where B is larger than L2 (bBytesOverL2), the premise's other
// half: a B that fits stays in L2 for the next call on the same weights,
// and evict-first throws that away. On the whole bf16 set (1 x H100,
// 2026-12-06) it took 64 x 8,192 x 2,048 (B 32 MiB) from 1.17x cuBLASLt
// to 0.68x and 64 x 8,192 x 1,024 (16 MiB) from 1.20x to 0.78x; every
// shape it was faster on had B of 56 MiB or more
// (bench/results/2026-12-06-h100-bf16-set-retime.md). Held out on five
// new 64-row shapes (1 x H100, same day): it held, though evict-first was
// already 5.6% ahead at B of 48 MiB
// (bench/results/2026-12-06-h100-ef-l2-heldout.md).
func evictFirst64(t hopper.Tile, m, n, k int, fp8 bool) bool {
	return !fp8 && m <= evictFirstMaxRows && bBytesOverL2(n, k) &&
		t.BM == 64 && t.BN <= 224 && t.PingPong && t.ClusterM() == 1 && t.KSplits() == 1
}

// sm90L2Bytes is the L2 cache of the sm_90 GPUs symmtune tunes (H100 and
// H200: 50 MiB, cudaDevAttrL2CacheSize).
const sm90L2Bytes = 50 << 20

// bBytesOverL2 says whether a 2-byte B of n x k cannot stay in L2.
func bBytesOverL2(n, k int) bool { return int64(n)*int64(k)*2 > sm90L2Bytes }

// evictFirstMaxRows: the most rows evictFirst64 hints B at. The held-out
// check reached 192 (three 64-row tile rows); 256 keeps the hint it had
// before the bound (no run timed it either way); 512 lost.
const evictFirstMaxRows = 256

// DefaultTileFor is the untuned tile of kernel v on p, on one sm_90 GPU
// c: DefaultTile's, cut into k-slices (hopper.Tile.SplitK) where
// splitK estimates that faster and v.Validate accepts the split tile on
// p. Validate takes split tiles on plain products only (agmm on one rank,
// at most SplitKMaxRows rows, SplitKMinK of K a slice), so the fused
// kernels at world > 1 and the reduce-scatter get DefaultTile's whole
// tiles.
//
// On 1 x H200 at N = 1280 (10-40 tiles of 64x128 for 132 SMs) it picks
// the split that was best there, in bf16 and FP8 (2026-12-03-h200-smallm-stages.md):
// 64x64 in 4 slices at 64 rows and in 2 at 128, 64x128 in 2 at 256
// (splitK decides whether to split, mostUnits which split). Unsplit, a
// compute-bound plain product whose last wave leaves most SMs
// idle takes the stream-K tile where its cost is lower (streamK), and a
// whole 64-row ping-pong tile in bf16 or f16 loads B evict-first where v
// runs it (evictFirst64). bin/gemmalone -tiles default times it.
// Untuned calls of symmtune.torch do not run it: on one rank DefaultOn
// gives the cuBLASLt pipeline (FitDefault), which the fused GEMM's best
// tile trailed on most small-M bf16 shapes measured (0.90-0.98x, 2026-12-02).
func DefaultTileFor(v Variant, p Problem, d Device) hopper.Tile {
	sms := d.SMs
	t, cost := defaultTile(p.M, p.N, p.K, d, p.Dtype.FP8())
	runs := func(s hopper.Tile) bool {
		c := v.Default()
		c[ParamImpl] = space.Str(ImplFused + ":" + s.String())
		c[ParamChunks] = space.Int(1)
		cfg, err := v.ParseConfig(c)
		return err == nil && v.Validate(cfg, p) == nil
	}
	s := splitK(t, p.M, p.N, p.K, sms, p.Dtype.FP8(), smMACsPerByte, runs)
	if s.KSplits() > 1 {
		return mostUnits(t, p.M, p.N, sms, runs)
	}
	if st, ok := streamK(p, sms, cost, runs); ok {
		return st
	}
	if ef := s; evictFirst64(s, p.M, p.N, p.K, p.Dtype.FP8()) {
		ef.EvictFirstB = true
		if runs(ef) {
			return ef
		}
	}
	return s
}

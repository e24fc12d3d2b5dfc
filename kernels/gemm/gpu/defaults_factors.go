package gpu

// The untuned tile rule's tile factors (issue 56): what each tile keeps
// of 128x256's tensor throughput where the product is compute-bound, the
// H200's for every card (tileEfficiency) and a card's own where it was
// measured on that card (cardTileEfficiency). defaultTile weighs its
// candidates' waves by them.

import "strings"

// tileEfficiency is what a 128-row tile keeps of 128x256's tensor
// throughput where the product is compute-bound (a tile absent here keeps
// all of it): the geometric mean of its speed over 128x256:cl2's on the 23
// shapes of issue 56's set (1,024-16,384 rows, Llama-3 70B's projections
// and the table) where every candidate fills eight waves or more,
// so that quantization does not enter (1 x H200, 2026-12-03, one round of
// 0.2 s a kernel: bench/results/2026-12-03-h200-w1-plain-matmulrs.md).
// Counting waves alone, DefaultTile took 128x224 or 128x128:pp on most
// shapes from 4,096 rows, 3.0% behind the best of five tiles on average
// (28 of 53 within 3%); with these 0.8% (48 of 53), and on the 23
// Qwen-2.5 72B shapes, never used to set them, 3.3% → 1.4% (12 → 17 of 23).
//
// The 160-column tiles' factors come from 8 shapes of the same set where
// every tile fills eight waves or more (two interleaved rounds of 0.2 s,
// 2026-12-03, bench/results/2026-12-03-h200-wave-tiles.md): 256x160
// 0.996, 128x160:s6 0.956 (its k-blocks carry the fewest multiply-adds a
// byte of the 128-row tiles but 128x128:pp's).
var tileEfficiency = map[string]float64{
	"256x160:s4:c2:g8":    0.996,
	"128x224:s5:c2:g16":   0.946, // measured with g4, 2.4% slower (smallTiles)
	"128x160:s6:c2:g8":    0.956,
	"128x128:s6:c2:g4:pp": 0.965,
}

// cardTileEfficiency is tileEfficiency on other cards, by a part of the
// card's name (Device.Name; a name listed nowhere gets tileEfficiency's,
// the H200's bf16 ones, in both dtypes): bf16 and f16 products (bf16) and
// FP8 ones (fp8) whose main loop is not short (shortLoopKBlocks), the
// regime the factors were measured in; short loops keep
// tileEfficiency's. A tile absent here keeps its tileEfficiency factor.
//
// H100 (SXM, 3.35 TB/s of HBM against the H200's 4.8): the same 23
// shapes and method as tileEfficiency's, on 1 x H100 (2026-12-06, one
// round of 0.2 s, bench/results/2026-12-06-h100-tile-factors.md):
// 128x128:pp kept 0.896 of 128x256:cl2's rate against 0.965 on the H200,
// 128x224 0.936 against 0.946. Read afterwards on 22 shapes of 512-2,048
// rows that set no factor (bench/results/2026-12-06-h100-pp-rows.md):
// weighing only the three tiles timed there (128x128:pp, 128x224:g16,
// 128x256:g8), these factors take the fastest on 18 and the H200's on 7.
// The whole rule also weighs stream-K and the 160-column tiles, which
// these factors pick at some of those shapes and which were not timed
// there. Held out (bench/results/2026-12-06-h100-card-factors.md, by a
// rule written before the run): twelve bf16 shapes where these factors
// change the pick, 1 s windows, two rounds: the new pick at or above the
// old on 12 of 12, geometric mean 1.066, worst 1.000.
// At 16384 x 8192 x 1024, a short loop, the ping-pong tile led
// 128x256:cl2 by 7.8% on the H100 and 11% on the H200: there the cards
// agree, hence not short loops.
//
// The H100's ping-pong tile in FP8 (row scales), by the same shapes and
// method (1 x H100, 2026-12-06, one round of 0.2 s,
// bench/results/2026-12-06-h100-fp8-tile-factors.md): 128x128:pp kept
// 0.889 against the H200's bf16 0.965, the rest within 0.03 of theirs.
// defaultTile does not let it hand the pick to a whole 128x256 tile.
// Held out so on 12 shapes no run had timed (1 x H100, 2026-12-07,
// bench/results/2026-12-07-h100-card-factors-5.md): at or above main's
// ping-pong pick on 9, geometric mean 1.044, worst 0.984.
//
// The H100's clustered twin (offSectorTwin): where A's and B's rows start
// off 32-byte sectors, the ping-pong pick at 256-1,024 rows (a multiple of
// 256) runs as 128x128 in clusters of two along M (B multicast), in both
// dtypes. Held out on 20 shapes no run had timed (1 x H100, 2026-12-07,
// bench/results/2026-12-07-h100-offsector-cl2.md, rule written before the
// run): FP8 row scales 12 of 12 at or above the ping-pong tile, geometric
// mean 1.213, worst 1.110; bf16 8 of 8, 1.256, worst 1.204. The earlier
// run that chose this scope (rows off 128-byte lines, on sectors too)
// failed its rule (2026-12-07-h100-offline-cl2.md): on sectors the twin
// lost. An H200 has no run: it keeps the ping-pong tile.
var cardTileEfficiency = []cardFactors{
	{part: "H100",
		bf16: map[string]float64{
			"128x224:s5:c2:g16":   0.936,
			"128x128:s6:c2:g4:pp": 0.896,
		},
		fp8: map[string]float64{
			"128x128:s6:c2:g4:pp": 0.889,
		},
		offSectorTwin: true, offSectorFill: true, offLineWide: true},
}

// cardFactors is one card's tile factors, for names holding part: bf16
// for bf16 and f16 products, fp8 for FP8 ones. A slice, not a map: where
// two parts match one name, the first listed wins, the same on every
// run.
type cardFactors struct {
	part      string
	bf16, fp8 map[string]float64
	// offSectorTwin: the card's rule runs the ping-pong pick as its
	// clustered twin where rows start off 32-byte sectors (defaultTile).
	offSectorTwin bool
	// offSectorFill: where the twin would run, 128x256 in clusters of
	// two runs instead if its tiles fill the card (wideFills; held out
	// on the H100 alone).
	offSectorFill bool
	// offLineWide: the ping-pong pick at 256-512 rows whose rows start
	// off 128-byte lines runs as offLineWideTile where its tiles fill
	// the card (defaultTile; held out on the H100 alone).
	offLineWide bool
}

// card is the first cardTileEfficiency entry whose part d's name holds.
func (d Device) card() (cardFactors, bool) {
	for _, cf := range cardTileEfficiency {
		if strings.Contains(d.Name, cf.part) {
			return cf, true
		}
	}
	return cardFactors{}, false
}

// of is the card's factors for an FP8 product (fp8) or a bf16 or f16 one.
func (cf cardFactors) of(fp8 bool) map[string]float64 {
	if fp8 {
		return cf.fp8
	}
	return cf.bf16
}

// efficiency is tile's factor on GPU d (fp8: an FP8 product;
// shortLoop: a main loop of at most shortLoopKBlocks; card: with the
// card's own factors), and whether the rule has one:
// cardTileEfficiency's where it applies, else tileEfficiency's.
func (d Device) efficiency(tile string, fp8, shortLoop, card bool) (float64, bool) {
	if cf, ok := d.card(); card && !shortLoop && ok {
		if e, ok := cf.of(fp8)[tile]; ok {
			return e, true
		}
	}
	e, ok := tileEfficiency[tile]
	return e, ok
}

package gpu

// How the untuned tile shares a product's work out beyond whole tiles
// (issue 56): stream-K for a last wave that leaves most SMs idle, split-K
// and the most units for small M. DefaultTileFor (defaults_tile.go) calls
// them where the caller's kernel may run the tile.

import (
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// streamKTile is the stream-K tile DefaultTileFor weighs: 128x256 in
// clusters of two. Unclustered (128x256:s4:c2:g8:st, the tile first
// measured, bench/results/2026-12-03-h200-streamk.md) it lost the
// cluster's B multicast: on 1 x H200 (2026-12-04, call E of
// bench/results/2026-12-04-h200-streamk-clusters.md, two interleaved rounds
// of 0.2 s) the clustered tile ran 0.982x cuBLASLt against 0.952 on 9
// large bf16 shapes (5 of issue 56's set at 16,384 and 4,096 rows where
// :st was the untuned tile, 4 outside it), ahead or tied on all 9, and
// 0.893-0.975 against 0.770-0.873 on 4 ragged shapes of 2,900-4,000 rows
// whose K puts rows off 32-byte sectors. Held out (call F: the 6 shapes of
// 3,072-6,144 rows where the rule takes it) 1.009 against 1.008 for :st and
// 1.002 for 128x256:cl2, within the rounds' spread; timed in 2 s windows
// (call H) ahead of 128x256:cl2 on the 8 of issue 56's longest products
// where it shares tiles (0.994 against 0.981).
const streamKTile = "128x256:s4:c2:g8:cl2:st"

// streamK is streamKTile where it shares tiles out on p (StreamKTiles),
// the product is compute-bound (in its own dtype's k-blocks), runs says the caller may run
// it (a plain product: Validate), and its cost is below cost, DefaultTile's
// pick's: the busiest SM's share of the tiles, a walker's (one cluster's)
// share of the cluster tiles instead of whole waves, plus
// hopper.StreamKMinGain k-blocks of one for the parts' partials and
// pipelines (where it only ties the unshared tile). The cost leaves out
// the cluster's gain, as DefaultTile's leaves it out of 128x256:cl2.
// With the unclustered tile on 1 x H200 (2026-12-03, two rounds) it picked
// :st at 4096 x 28672 and 4096 x 14784 x 8192, 1.9% and 3.4% faster than
// the untuned tiles then (128x256:cl2, 128x224), and at 16384 x 5120 x
// 8192, 1.7% behind 128x256:cl2; not at 4096 x 1280 x 8192 (DefaultTile's
// 128x128:pp, 4.5% behind :st) or 1024 x 14336 x 8192 (128x128:pp, 2.6%
// ahead of it). Fitted on those five shapes, not a held-out check. FP8
// (128-element k-blocks) takes it on 4 of issue 56's FP8 shapes, 16384 x
// 8192 x K for K 14,336, 14,784, 28,672 and 29,568 (2,048 cluster tiles:
// the last of 32 waves 2/66 full). At the last two it ran 1.5-1.7% ahead
// of 128x256:cl2 with tensor and row scales (2026-12-04, call J of
// bench/results/2026-12-04-h200-fp8-scales.md, one round of 2 s). On
// 2026-12-05 (bench/results/2026-12-05-h200-fp8-streamk.md, two rounds of
// 2 s windows, the tiles in both orders) it took :st on seven long FP8
// products, two of that set and five not, tensor and row scales: ahead of
// main's untuned tile in both rounds on 6 of 7 (0.5-2.2%; 5.5-11.6% at
// 6144 x 7168 x 14336, where the untuned tile was 128x128:pp), behind at
// 8192 x 10240 x 14336 (-1.8% and -3.1% with row scales, 0 and +1.8% with
// tensor scales). Held out (call C, row scales, four shapes picked from a
// grid before any run): ahead at 8192 x 10240 x 28672 (+1.0%) and 12288 x
// 8192 x 14336 (+1.5%), even at 4096 x 10240 x 28672 (+1.2%, the rounds
// +3.0% and -0.5%), behind at 16384 x 5120 x 14336 (-3.6%, 4.8% in one
// round). Both losers have 1,280 cluster tiles at K 14,336; 8192 x 10240 x
// 28672 has the same tiles and wins, and the last wave's fill (26/66 there,
// 2-34/66 where it won) does not tell them apart: unexplained.
func streamK(p Problem, sms int, cost float64, runs func(hopper.Tile) bool) (hopper.Tile, bool) {
	if cost < 0 || !computeBound(p.M, p.N, p.K, sms, p.Dtype.FP8()) {
		return hopper.Tile{}, false
	}
	st, err := hopper.ParseTile(streamKTile)
	if err != nil {
		panic("gpu: streamKTile " + streamKTile + ": " + err.Error())
	}
	kblocks := operandElem(p.Dtype.FP8()).KBlocks(p.K) // a k-block is 128 bytes of K
	walkers := sms / st.ClusterM()
	if walkers < 1 || st.StreamKTiles(p.M, p.N, kblocks, sms) == 0 {
		return hopper.Tile{}, false
	}
	share := float64(st.Tiles(p.M, p.N))/float64(walkers) + float64(hopper.StreamKMinGain)/float64(kblocks)
	if share*float64(st.BM*st.BN) >= cost || !runs(st) {
		return hopper.Tile{}, false
	}
	return st, true
}

// mostUnits is the split that splitK's roofline cannot pick, once it has
// decided to split whole tile t: of t's and (for a 64-row t) the narrow
// 64x64 tile's splits that run and fit one wave, the one with the most
// work units; a tie goes to the narrower tile (the same units with fewer
// partials each), then to fewer slices. On 1 x H200 (2026-12-03, three
// interleaved rounds, bf16 and FP8 e4m3, bench/results/2026-12-03-h200-smallm-stages.md)
// it picked the fastest split of the two tiles on 8 of 8 shapes in
// each dtype: the three at N = 1280 and five measured there for the first
// time (64 x 2048 x 8192, 128 x 2560 x 8192, 64 x 1024 x 16384, 192 x
// 1536 x 8192, 128 x 1792 x 4096). The rule was written after reading all
// eight, so they are not a held-out check. splitK's own pick was up to
// 1.8x slower (64 x 2048 x 8192: 64x128 in 2 slices 16.7 µs, 64x64 in 4
// 9.3 µs).
func mostUnits(t hopper.Tile, m, n, sms int, runs func(hopper.Tile) bool) hopper.Tile {
	tiles := []hopper.Tile{t}
	narrow, err := hopper.ParseTile(narrowTile)
	if err != nil {
		panic("gpu: narrowTile " + narrowTile + ": " + err.Error())
	}
	if narrow.BM == t.BM && narrow.BN < t.BN {
		tiles = append(tiles, narrow)
	}
	var best hopper.Tile
	bestUnits := 0
	for _, w := range tiles {
		for _, slices := range []int{2, 4, 8} {
			c := w
			c.SplitK = slices
			u := c.Units(m, n)
			if u > sms || !runs(c) {
				continue
			}
			if u > bestUnits || u == bestUnits && c.BN < best.BN {
				best, bestUnits = c, u
			}
		}
	}
	if bestUnits == 0 {
		return t
	}
	return best
}

// smMACsPerByte is the multiply-adds one SM does at dense bf16 peak while
// HBM moves one byte. H100 SXM: 989 TFLOP/s over 132 SMs is 3.75e12 MAC/s
// an SM, over 3.35 TB/s: 1.12. H200 (4.8 TB/s): 0.78. splitK takes the
// H100's figure: with the slower memory more products are memory-bound,
// so it splits fewer. Both give the picks measured best at N = 1280
// (TestDefaultTileFor); they can differ elsewhere (100 x 1288 x 4144:
// :sk2 here, :sk4 at the H200's). FP8 doubles it (computeBound).
const smMACsPerByte = 1.12

// splitK is t (whole tiles), or t in S = 2, 4 or 8 k-slices where the
// estimate below is lower and runs says the caller may run the split.
// fp8: e4m3 operands (one byte, 128-element k-blocks, twice the
// multiply-adds an SM).
//
// The estimate is a roofline in one SM's multiply-adds: the busiest SM's
// (waves of units x the tile's area x a slice's k: waves x area / S), or
// the HBM bytes times macsPerByte, whichever is more. The bytes are A, B
// and C once each, plus a split's fp32 partials, written and read back.
// The partials mostly stay in L2 (a tile's slices run on neighbouring
// CTAs), so counting them as HBM traffic leans against splitting. The
// bytes term keeps products whose whole tiles already stream B at memory
// speed unsplit: at 64 x 8192 x 3584 (64 tiles) :sk2 was 7% slower.
//
// Only splits whose units fit in one wave (tiles x S <= SMs), so only
// tiles that fill at most half the SMs. A slice beyond the SMs adds no
// SM; it cuts the same SMs' work into more units, each with its own
// pipeline fill, partial and fixup, which waves x area does not count.
// On 1 x H200 every split that took a second wave was slower than a
// one-wave split of the same shape (2026-12-02-h200-splitk/).
// A tie goes to fewer slices: fewer partials.
func splitK(t hopper.Tile, m, n, k, sms int, fp8 bool, macsPerByte float64, runs func(hopper.Tile) bool) hopper.Tile {
	if t.KSplits() > 1 || 2*t.Tiles(m, n) > sms {
		return t
	}
	elem, base := operandElem(fp8), productBytes(m, n, k)
	if fp8 {
		base, macsPerByte = fp8ProductBytes(m, n, k), 2*macsPerByte
	}
	bk, kblocks := elem.BK(), elem.KBlocks(k)
	cost := func(s hopper.Tile) float64 {
		waves := (s.Units(m, n) + sms - 1) / sms
		slice := (kblocks + s.KSplits() - 1) / s.KSplits() // the longest slice's k-blocks
		busiest := float64(waves) * float64(s.BM*s.BN) * float64(slice*bk)
		parts, _ := s.SplitKBytes(m, n, 0)
		return max(busiest, (base+2*float64(parts))*macsPerByte)
	}
	best, bestCost := t, cost(t)
	for _, slices := range []int{2, 4, 8} {
		s := t
		s.SplitK = slices
		if s.Units(m, n) > sms || !runs(s) {
			continue
		}
		if c := cost(s); c < bestCost {
			best, bestCost = s, c
		}
	}
	return best
}

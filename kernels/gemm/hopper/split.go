package hopper

// Split-K and stream-K: tiles whose k-blocks fall to more than one work
// unit of the persistent walk (hopper_split.cuh), the units' arithmetic and
// the workspace their fixup sums through.

// MaxSplitK is the most slices a tile's k-blocks are cut into.
const MaxSplitK = 16

// splitKRegs is what Check leaves a consumer thread of a split-K or
// stream-K tile beyond the accumulators and the ~40 of every tile: the
// fixup's workspace addresses and count (NVRTC 12.4 spilled tiles of 192
// accumulators).
const splitKRegs = 16

// KSplits is the k-slices per tile (1 without split-K).
func (t Tile) KSplits() int { return max(t.SplitK, 1) }

// KSlice is slice s's k-blocks [lo, hi) of kblocks (hopper_split.cuh's
// slice_lo): as even as integers allow, each kblocks/KSplits or one more,
// and together [0, kblocks) once.
func (t Tile) KSlice(s, kblocks int) (lo, hi int) {
	return s * kblocks / t.KSplits(), (s + 1) * kblocks / t.KSplits()
}

// Units is the persistent walk's work units of an m x n output: its
// cluster tiles (Tiles) times the k-slices of each (stream-K's parts are
// not counted: they take the grid's CTAs, not more).
func (t Tile) Units(m, n int) int { return t.Tiles(m, n) * t.KSplits() }

// storerWarps is the consumer warps that store one tile (hopper_tile.cuh's
// STORERS / 32): a ping-pong consumer's 4, else every consumer's.
func (t Tile) storerWarps() int {
	if t.PingPong {
		return 4
	}
	return 4 * t.Consumers
}

// Shares is whether t's tiles may be summed from parts (split-K or
// stream-K), which needs a workspace (SplitKBytes).
func (t Tile) Shares() bool { return t.KSplits() > 1 || t.StreamK }

// SplitKBytes is the device memory the fixup of a split-K or stream-K tile
// needs for an m x n output on a grid of at most grid CTAs
// (hopper_split.cuh): the partials and the counts (a uint32 per shared
// tile and storing warp, zero before the first launch; every launch leaves
// them zero), or zeros for a tile that shares none. Split-K: KSplits fp32
// partials of every CTA tile. Stream-K: two tiles' partials per CTA (the
// tiles its range starts and ends in), counts for the CTA tiles of the at
// most 2 x grid / ClusterM stream-K (cluster) tiles (StreamKTiles).
func (t Tile) SplitKBytes(m, n, grid int) (partials, counts int64) {
	tile := int64(t.BM) * int64(t.BN) * 4
	cm := t.ClusterM()
	switch {
	case t.KSplits() > 1:
		tiles := int64(t.Tiles(m, n)) * int64(cm)
		return tiles * int64(t.KSplits()) * tile, tiles * int64(t.storerWarps()) * 4
	case t.StreamK && grid >= cm:
		walkers := grid / cm
		return int64(walkers*cm) * 2 * tile, int64(min(t.Tiles(m, n), 2*walkers)*cm) * int64(t.storerWarps()) * 4
	}
	return 0, 0
}

// StreamKMinGain is the least time, in k-blocks per CTA, that stream-K
// must win back from the last wave's idle SMs ((grid - r) / grid of a
// tile's kblocks, r the last wave's tiles) before StreamKTiles shares
// tiles out: each CTA stores about two fp32 partials of a tile and reads
// one or two back, and the parts' pipelines fill twice. Measured on 1 x
// H200 (2026-12-03, 128x256 against the same tile unshared, 21 shapes of
// 1,024-16,384 rows, two interleaved rounds:
// bench/results/2026-12-03-h200-streamk.md), with the rule at 16 then:
// 101-120 k-blocks to win ran 1.8-15.6% faster (3 shapes of 3); 50-78
// within 1% either way on 6 of 7 (one 2.4% faster); 19-36 from 0.8%
// faster to 13.8% slower (at 1,024 x 3,584 x 8,192, 112 tiles of 128
// k-blocks: 106 µs against 92).
const StreamKMinGain = 64

// StreamKTiles is how many of an m x n output's tiles (cluster tiles), of
// kblocks k-blocks each, a stream-K tile shares out by k-blocks on a grid
// of grid CTAs (the kernel's sk_tiles; 0 for every other tile). The walk's
// units are the clusters (grid / ClusterM of them; the CTAs without
// clusters) and their tiles: none are shared where the tiles fill whole
// waves, less than half of one (split-K's case, a small M), or where the
// last wave's idle clusters would win back less than StreamKMinGain
// k-blocks; else the last wave's part, r = tiles mod clusters, or r +
// clusters where r is under half a wave. That keeps every range at least
// half a tile long, so at most three CTAs share a tile, and each CTA
// writes at most two partials (the tiles its range starts and ends in),
// which the workspace holds.
func (t Tile) StreamKTiles(m, n, kblocks, grid int) int {
	walkers := grid / t.ClusterM()
	if !t.StreamK || walkers < 1 || kblocks < 1 {
		return 0
	}
	tiles := t.Tiles(m, n)
	if (walkers-tiles%walkers)*kblocks < StreamKMinGain*walkers {
		// Too little of the last wave's time to win back.
		return 0
	}
	return streamKTiles(tiles, kblocks, walkers)
}

// streamKTiles is StreamKTiles' share of tiles tiles of kblocks k-blocks
// on grid CTAs, whatever it wins: none for whole waves or less than half
// of one; the last wave's r tiles where r is half a wave or more, else r +
// grid; none where some CTA would get no k-block (it would leave its
// tiles' counts short).
func streamKTiles(tiles, kblocks, grid int) int {
	r := tiles % grid
	var sk int
	switch {
	case r == 0 || 2*tiles < grid:
		return 0
	case tiles < grid:
		sk = tiles
	case 2*r >= grid:
		sk = r
	default:
		sk = r + grid
	}
	if sk*kblocks < grid {
		return 0
	}
	return sk
}

// StreamKRange is CTA c's range [lo, hi) of the len k-blocks of the
// stream-K tiles laid end to end, on a grid of grid CTAs
// (hopper_split.cuh's sk_lo).
func StreamKRange(c, length, grid int) (lo, hi int) {
	return int(int64(c) * int64(length) / int64(grid)), int(int64(c+1) * int64(length) / int64(grid))
}

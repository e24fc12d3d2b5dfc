// hopper_split.cuh: the work units of symmtune's persistent Hopper GEMM
// (hopper_gemm.cu) when a tile's k-blocks may fall to more than one unit:
// split-K (SPLIT_K > 1) and stream-K (STREAM_K), their schedule (Sched,
// Unit) and the fixup that sums a tile's partials. Concatenated after
// hopper_tile.cuh (whose Walk and tile_at it uses) and before
// hopper_comm.cuh (kernels/gemm/hopper.Source).

// slice_lo is the first k-block of slice s of kblocks (s = SPLIT_K:
// kblocks): the slices cut the k-blocks as evenly as integers allow, each
// holding kblocks / SPLIT_K of them or one more, and together each k-block
// once (kernels/gemm/hopper.Tile.KSlice is its Go twin). With SPLIT_K 1,
// [0, kblocks).
__device__ __forceinline__ int slice_lo(int s, int kblocks) { return s * kblocks / SPLIT_K; }
// unit_at is walk's work unit u: slice u % SPLIT_K of tile u / SPLIT_K, its
// tile as tile_at gives it and its k-blocks [kb0, kb1). The slices of a
// tile are consecutive units, so they run at about the same time (on
// consecutive CTAs) and the partials they leave stay in L2 until the last
// one sums them.
__device__ __forceinline__ void unit_at(const Walk& walk, int u, int kblocks, int& tm, int& tn, int& kb0, int& kb1) {
	tile_at(walk, u / SPLIT_K, tm, tn);
	kb0 = slice_lo(u % SPLIT_K, kblocks);
	kb1 = slice_lo(u % SPLIT_K + 1, kblocks);
}

// Unit is one unit of a CTA's walk: tile (tm, tn)'s k-blocks [kb0, kb1),
// part `part` of the `parts` units that share the tile (1: the whole
// tile, no fixup). For the fixup: `tile` indexes the tile's counts (split-K:
// tm * tiles_n + tn; stream-K: the tile's place among the stream-K tiles),
// and with stream-K, `first` is the first CTA that has a part of it and
// `start` the tile's first k-block in the stream-K tiles' line.
struct Unit {
	int tm, tn, kb0, kb1, parts, part, tile;
#if STREAM_K
	int first, start;
#endif
};

// Sched walks a CTA's units: first the whole units (split-K's slices)
// u = walk.first, + walk.stride, ... below `units`, then, with stream-K,
// its range [lo, hi) of the stream-K tiles' k-blocks laid end to end
// (len of them, from tile sk_first on), cut at tile edges and taken from
// the last piece back (hi moves down to lo). Backwards, because every
// CTA's last piece starts at a tile's first k-block: the CTAs then begin
// their ranges together at k-block 0 and go on at most two k-blocks
// apart, reading the same k-blocks of A and B at about the same time, as
// the whole tiles' waves do. Front to back, each CTA started at its own
// offset in its tile, every k-block of A and B came from HBM for one CTA
// alone, and the stream-K tiles ran at about half speed (1 x H200,
// 8192 x 3584 x 8192: 786 µs against 711 µs without stream-K).
struct Sched {
	int u, units;
#if STREAM_K
	int lo, hi, len, sk_first;
#endif
};

#if STREAM_K
// sk_lo is where CTA c's range of the stream-K tiles' len k-blocks starts
// on a grid of `grid` CTAs (CTA c has [sk_lo(c), sk_lo(c + 1))): as even as
// integers allow (kernels/gemm/hopper.StreamKRange is its Go twin).
__device__ __forceinline__ int sk_lo(int c, int len, int grid) { return (int)((long long)c * len / grid); }
#endif

// sched_start is CTA walk.first's schedule with sk_tiles stream-K tiles
// (0 without STREAM_K).
__device__ __forceinline__ Sched sched_start(const Walk& walk, int kblocks, int sk_tiles) {
	Sched s;
	s.u = walk.first;
	s.units = walk.units;
#if STREAM_K
	s.units -= sk_tiles;
	s.sk_first = s.units;
	s.len = sk_tiles * kblocks;
	s.lo = sk_lo(walk.first, s.len, walk.stride);
	s.hi = sk_lo(walk.first + 1, s.len, walk.stride);
#endif
	return s;
}

// sched_next sets un to the CTA's next unit and says whether there was one.
__device__ __forceinline__ bool sched_next(const Walk& walk, Sched& s, int kblocks, Unit& un) {
	if (s.u < s.units) {
		unit_at(walk, s.u, kblocks, un.tm, un.tn, un.kb0, un.kb1);
		un.parts = SPLIT_K;
		un.part = s.u % SPLIT_K;
		un.tile = un.tm * walk.tiles_n + un.tn;
		s.u += walk.stride;
		return true;
	}
#if STREAM_K
	if (s.hi <= s.lo) return false;
	const int j = (s.hi - 1) / kblocks, start = j * kblocks, end = start + kblocks;
	const int from = max(s.lo, start);
	un.kb0 = from - start;
	un.kb1 = s.hi - start;
	s.hi = from;
	tile_at(walk, s.sk_first + j, un.tm, un.tn);
	// The CTAs whose ranges meet [start, end): the first whose range ends
	// after start, the last whose range starts before end (every range is
	// non-empty: the host asks for len >= grid).
	const long long g = walk.stride, len = s.len;
	un.first = (int)(((long long)(start + 1) * g + len - 1) / len) - 1;
	un.parts = (int)(((long long)end * g + len - 1) / len) - 1 - un.first + 1;
	un.part = walk.first - un.first;
	un.tile = j;
	un.start = start;
	return true;
#else
	return false;
#endif
}

#if SPLIT_K > 1 || STREAM_K
// The workspace (kernels/gemm/hopper.Tile.SplitKBytes), two arrays.
// Counts: a u32 for every shared tile (Unit.tile) and consumer warp w of it
// (SK_WARPS a tile), zero between launches. Partials: fp32, SK_WARP_FLOATS
// for each (part, warp), the warp's accumulators as it holds them, its
// lane l's 16-byte vector q at float 4 * (32 * q + l), so that each store
// and load of the warp is 512 contiguous bytes (the layout needs no rows or
// columns: every part's warp holds the same elements in the same place).
// Split-K: SPLIT_K parts of every (tile, warp), [tile][warp][slice].
// Stream-K: by CTA, [cta][2][warp], slot 0 for the tile the CTA's range
// starts in, 1 for the one it ends in (any tile between is the CTA's alone):
// the partials scale with the grid, not with the tiles.
#define SK_WARPS (STORERS / 32)
#define SK_WARP_FLOATS (MI * (BN / 2) * 32)

// fixup joins this warp's accumulators, part `part` of `parts`, to its
// tile's sum: it stores them at mine, then counts the part on count. The
// warp whose count completes the parts (atom.inc wraps it back to zero for
// the next launch) adds every other part's partial (other(p), this lane's
// floats) to acc and returns true: it alone runs the epilogue. The others
// return false. Nobody waits: a warp counts only after its partial is
// stored, and the last one reads only after seeing every count.
template <class Other>
__device__ __forceinline__ bool fixup(float (&acc)[MI][BN / 2], float* mine, u32* count, int parts, int part, int lane, Other other) {
#pragma unroll
	for (int mi = 0; mi < MI; mi++)
#pragma unroll
		for (int q = 0; q < BN / 8; q++) st_f32x4(mine + 128 * (mi * (BN / 8) + q), &acc[mi][4 * q]);
	// Every lane has stored before lane 0 counts (bar.warp.sync orders
	// memory among the warp), and the fence is cumulative (as
	// signal_tile's): the stores are visible at gpu scope before the count.
	__syncwarp();
	u32 last = 0;
	if (lane == 0) {
		u32 old;
		asm volatile("fence.acq_rel.gpu;" ::: "memory");
		asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(count), "r"((u32)(parts - 1)) : "memory");
		last = old == (u32)(parts - 1);
	}
	// Lane 0's acquire, then bar.warp.sync: the other lanes' loads below
	// see what it saw.
	__syncwarp();
	asm volatile("shfl.sync.idx.b32 %0, %0, 0, 0x1f, 0xffffffff;" : "+r"(last));
	if (!last) return false;
#pragma unroll 1
	for (int p = 0; p < parts; p++) {
		if (p == part) continue;
		const float* const o = other(p);
#pragma unroll
		for (int mi = 0; mi < MI; mi++)
#pragma unroll
			for (int q = 0; q < BN / 8; q++) add_f32x4_cg(o + 128 * (mi * (BN / 8) + q), &acc[mi][4 * q]);
	}
	return true;
}

// fixup_unit is fixup for unit un (parts > 1) of consumer warp w (of the
// tile's SK_WARPS) on the workspace at sk_part and sk_count.
__device__ __forceinline__ bool fixup_unit(float (&acc)[MI][BN / 2], const Walk& walk, const Sched& s, const Unit& un, u64 sk_part, u64 sk_count, int w,
	int lane) {
	u32* const count = (u32*)sk_count + (u64)un.tile * SK_WARPS + (u64)w;
#if STREAM_K
	// CTA c's partial of this tile: slot 0 if its range starts in the tile.
	const auto at = [&](int c) {
		const u64 slot = sk_lo(c, s.len, walk.stride) >= un.start ? 0u : 1u;
		return (float*)sk_part + (((u64)c * 2 + slot) * SK_WARPS + (u64)w) * SK_WARP_FLOATS + 4 * lane;
	};
	return fixup(acc, at(walk.first), count, un.parts, un.part, lane, [&](int p) { return (const float*)at(un.first + p); });
#else
	float* const base = (float*)sk_part + ((u64)un.tile * SK_WARPS + (u64)w) * (SPLIT_K * SK_WARP_FLOATS) + 4 * lane;
	return fixup(acc, base + (u64)un.part * SK_WARP_FLOATS, count, un.parts, un.part, lane,
		[&](int p) { return (const float*)(base + (u64)p * SK_WARP_FLOATS); });
#endif
}
#endif

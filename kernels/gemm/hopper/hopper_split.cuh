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

// Unit is one unit of a CTA's walk: tile (tm, tn)'s k-blocks [kb0, kb1).
// `tile` tells the fixup which tile and part (split-K: the walk's unit u,
// slice u % SPLIT_K of tile u / SPLIT_K; stream-K: the tile's place among
// the stream-K tiles; unused for a whole tile), and with stream-K `share`
// the rest, packed: the parts (bits 0-1, at most 3), this CTA's part (bits
// 2-3) and whether the tile's first part's range starts before the tile
// (bit 4). The accumulators leave ptxas no registers to carry more through
// the main loop, nor to divide after it: with four more fields a stream-K
// 128x256 tile spilled 8 bytes, working them out after the main loop 20.
struct Unit {
	int tm, tn, kb0, kb1, tile;
#if STREAM_K
	int share;
#endif
};

// Sched walks a CTA's units: first the whole units (split-K's slices)
// u = walk.first, + walk.stride, ... below `units`, then, with stream-K,
// its range [lo, hi) of the stream-K tiles' k-blocks laid end to end
// (walk.units - units tiles of kblocks each, from tile `units` on), cut at
// tile edges and taken from the last piece back (hi moves down to lo).
// Backwards, because every CTA's last piece starts at a tile's first
// k-block: the CTAs then begin their ranges together at k-block 0 and go
// on at most two k-blocks apart, reading the same k-blocks of A and B at
// about the same time, as the whole tiles' waves do. Front to back, each
// CTA started at its own offset in its tile, every k-block of A and B came
// from HBM for one CTA alone, and the stream-K tiles ran at about half
// speed (1 x H200, 8192 x 3584 x 8192: 786 µs against 711 µs without
// stream-K).
struct Sched {
	int u, units;
#if STREAM_K
	int lo, hi;
#endif
};

#if STREAM_K
// sk_lo is where CTA c's range of the stream-K tiles' len k-blocks starts
// on a grid of `grid` CTAs (CTA c has [sk_lo(c), sk_lo(c + 1))): as even as
// integers allow (kernels/gemm/hopper.StreamKRange is its Go twin).
__device__ __forceinline__ int sk_lo(int c, int len, int grid) { return (int)((long long)c * len / grid); }
// sk_len is the stream-K tiles' k-blocks laid end to end.
__device__ __forceinline__ int sk_len(const Walk& walk, const Sched& s, int kblocks) { return (walk.units - s.units) * kblocks; }
#endif

// sched_start is CTA walk.first's schedule with sk_tiles stream-K tiles
// (0 without STREAM_K).
__device__ __forceinline__ Sched sched_start(const Walk& walk, int kblocks, int sk_tiles) {
	Sched s;
	s.u = walk.first;
	s.units = walk.units;
#if STREAM_K
	s.units -= sk_tiles;
	s.lo = sk_lo(walk.first, sk_len(walk, s, kblocks), walk.stride);
	s.hi = sk_lo(walk.first + 1, sk_len(walk, s, kblocks), walk.stride);
#endif
	return s;
}

// sched_next sets un to the CTA's next unit and says whether there was one.
__device__ __forceinline__ bool sched_next(const Walk& walk, Sched& s, int kblocks, Unit& un) {
	if (s.u < s.units) {
		unit_at(walk, s.u, kblocks, un.tm, un.tn, un.kb0, un.kb1);
		un.tile = s.u;
		s.u += walk.stride;
		return true;
	}
#if STREAM_K
	if (s.hi <= s.lo) return false;
	const int j = (s.hi - 1) / kblocks, start = j * kblocks;
	const int from = max(s.lo, start);
	un.kb0 = from - start;
	un.kb1 = s.hi - start;
	s.hi = from;
	tile_at(walk, s.units + j, un.tm, un.tn);
	un.tile = j;
	// The CTAs whose ranges meet the tile's k-blocks [start, start +
	// kblocks) of the line: the first whose range ends after start, the
	// last whose range starts before its end (every range is non-empty:
	// the host asks for len >= grid).
	const int len = sk_len(walk, s, kblocks);
	const long long g = walk.stride;
	const int first = (int)(((long long)(start + 1) * g + len - 1) / len) - 1;
	const int parts = (int)(((long long)(start + kblocks) * g + len - 1) / len) - first;
	un.share = parts | (walk.first - first) << 2 | (sk_lo(first, len, walk.stride) < start) << 4;
	return true;
#else
	return false;
#endif
}

// unit_shared says whether unit un is one part of a tile summed from
// several (the fixup's): every split-K slice; a stream-K piece short of
// its whole tile (the CTAs' pieces cover each tile once, so a whole-tile
// piece is its tile's only part, and a shorter one has company).
__device__ __forceinline__ bool unit_shared(const Unit& un, int kblocks) {
	return SPLIT_K > 1 || (STREAM_K && un.kb1 - un.kb0 < kblocks);
}

#if SPLIT_K > 1 || STREAM_K
// The workspace (kernels/gemm/hopper.Tile.SplitKBytes), two arrays.
// Counts: a u32 for every shared tile (split-K: the walk's tile, u /
// SPLIT_K; stream-K: Unit.tile) and consumer warp w of it (SK_WARPS a
// tile), zero between launches. Partials: fp32, SK_WARP_FLOATS
// for each (part, warp), the warp's accumulators as it holds them, its
// lane l's 16-byte vector q at float 4 * (32 * q + l), so that each store
// and load of the warp is 512 contiguous bytes (the layout needs no rows or
// columns: every part's warp holds the same elements in the same place).
// Split-K: SPLIT_K parts of every (tile, warp), [tile][warp][slice].
// Stream-K: by CTA, [cta][2][warp], slot 0 for the tile the CTA's range
// starts in, 1 for the one it ends in (any tile between is the CTA's alone):
// the partials scale with the grid, not with the tiles. The walk's ranges
// are a cluster's (Walk.first and Unit.tile count clusters and cluster
// tiles), so a CTA is walker w's row crank, CTA w * CLUSTER_M + crank, and
// a count is (tile * CLUSTER_M + crank)'s.
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

// fixup_unit is fixup for shared unit un (unit_shared) of consumer warp w
// (of the tile's SK_WARPS) on the workspace at sk_part and sk_count.
__device__ __forceinline__ bool fixup_unit(float (&acc)[MI][BN / 2], const Walk& walk, const Unit& un, u64 sk_part, u64 sk_count, int w, int lane) {
#if STREAM_K
	// Part p's partial: CTA first + p's, in its slot 0 (its range starts in
	// the tile) but for the first part where its range starts before.
	const int parts = un.share & 3, part = (un.share >> 2) & 3, first = walk.first - part;
	const u64 before = (u64)((un.share >> 4) & 1);
	const auto at = [&](int p) {
		const u64 slot = p == 0 ? before : 0;
		const u64 cta = (u64)(first + p) * CLUSTER_M + walk.crank;
		return (float*)sk_part + ((cta * 2 + slot) * SK_WARPS + (u64)w) * SK_WARP_FLOATS + 4 * lane;
	};
	u32* const count = (u32*)sk_count + ((u64)un.tile * CLUSTER_M + walk.crank) * SK_WARPS + (u64)w;
	return fixup(acc, at(part), count, parts, part, lane, [&](int p) { return (const float*)at(p); });
#else
	// Split-K: un.tile is the walk's unit, slice u % SPLIT_K of tile u / SPLIT_K.
	const int part = un.tile % SPLIT_K;
	float* const base = (float*)sk_part + ((u64)(un.tile / SPLIT_K) * SK_WARPS + (u64)w) * (SPLIT_K * SK_WARP_FLOATS) + 4 * lane;
	return fixup(acc, base + (u64)part * SK_WARP_FLOATS, (u32*)sk_count + (u64)(un.tile / SPLIT_K) * SK_WARPS + (u64)w, SPLIT_K, part, lane,
		[&](int p) { return (const float*)(base + (u64)p * SK_WARP_FLOATS); });
#endif
}
#endif

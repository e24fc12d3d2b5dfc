// hopper_tile.cuh: the compile-time configuration of symmtune's persistent
// Hopper GEMM (hopper_gemm.cu) and what follows from it: defaults, the
// checks that refuse impossible tiles, the tile order and the named
// barriers. Concatenated after hopper_ptx.cuh and before hopper_split.cuh
// (kernels/gemm/hopper.Source); Tile.Options writes the -D flags.
//
// Compile-time config:
//   DTYPE_BF16  C's type (and the inputs' unless IN_E4M3): 1 bf16, 0 f16
//   IN_E4M3     1: A and B are e4m3 (C bf16), and the epilogue multiplies
//               the fp32 accumulators by scale_a * scale_b before rounding
//   ROW_SCALES  with IN_E4M3, 1: scale_a holds a float per row of A (by
//               global row), scale_b one per column of C; 0: one float each
//   B_KMAJOR    1: B is stored [N, K] (a row per output column, as a
//               torch.nn.Linear weight); 0: B is stored [K, N] row-major
//   BM, BN      the CTA tile; BN is one of wgmma.cuh's widths
//   STAGES      shared-memory ring depth
//   CONSUMERS   consumer warpgroups (1 or 2)
//   PINGPONG    0: the consumers split each tile's rows (BM/CONSUMERS each);
//               1: each consumer owns whole tiles, alternating, so one's
//               epilogue overlaps the other's MMAs (BM is then one
//               consumer's rows)
//   GROUP_M     tile rows per swizzle group
//   CLUSTER_M   1, or 2: CTAs work in pairs on vertically adjacent tiles
//               (a cluster), each loading half of their common B tile and
//               multicasting it to both, which halves B's traffic from L2
//               (cooperative consumers and K-major B only)
//   EPI_BUFS    the epilogue's staging buffers per consumer warp (1, 2, 4)
//   SPLIT_K     k-slices per output tile (split-K; 1: none): see below
//   STREAM_K    1: the last wave's tiles are shared out by k-blocks
//               (stream-K): see below
//   B_EVICT_FIRST 1: B is loaded with an L2 evict-first policy, for small
//               M where each B tile is read by one or two tile rows and
//               B streams from DRAM: the untuned 64-row bf16 tiles ran
//               2.4% faster with it on 10 of 10 held-out shapes (1 x H200,
//               bench/results/2026-12-05-h200-evict-first-bf16-defaults.md);
//               not with clusters
// One k-block row of a tile is 128 bytes, the TMA/wgmma 128-byte swizzle's
// width, which makes shared-memory reads conflict-free: BK is 64 two-byte or
// 128 one-byte elements, and each wgmma takes 32 bytes of K (k16 or k32), so
// the stages, descriptors and their steps are the same in bytes.

#ifndef DTYPE_BF16
#error DTYPE_BF16 must be defined
#endif
#ifndef ROW_SCALES
#define ROW_SCALES 0
#endif
#if IN_E4M3 && !DTYPE_BF16
#error e4m3 products write bf16: DTYPE_BF16=1
#endif
#if ROW_SCALES && !IN_E4M3
#error row scales are for e4m3 operands
#endif

#define ELEM_BYTES (IN_E4M3 ? 1 : 2)
#define BK (128 / ELEM_BYTES)
#define WGMMA_KBYTES 32 // the K bytes of one wgmma's rows
#if PINGPONG
#define WG_M BM
#else
#define WG_M (BM / CONSUMERS)
#endif
#define MI (WG_M / 64)
#define THREADS ((CONSUMERS + 1) * 128)
#define A_BYTES (BM * 128)
#define B_BYTES (BN * 128)
// One 64-column block of an MN-major B stage (two-byte elements only): 64
// k-rows of 128 bytes.
#define B_NBLOCK_BYTES (BK * 128)

#if WG_M % 64 != 0 || MI < 1 || MI > 2
#error each consumer's rows must be 64 or 128
#endif
#if !B_KMAJOR && BN % 64 != 0
#error an MN-major B is loaded in 64-column blocks
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#if CLUSTER_M != 1 && CLUSTER_M != 2
#error CLUSTER_M is 1 or 2
#endif
#if CLUSTER_M > 1 && (PINGPONG || !B_KMAJOR)
#error clusters are built for cooperative consumers and a K-major B
#endif
// Diagnostic (bench/gemmalone -extra), off by default: CLUSTER_NOMCAST
// makes each CTA of a cluster load all of its B itself (no multicast, no
// remote release). It told the launch's cost from the multicast's when the
// multicast ran at half speed, until the stages were freed without a
// cluster-scope release (CLUSTER_RELEASE;
// bench/results/2026-11-23-h200-gemmalone-cluster.md).
#ifndef CLUSTER_NOMCAST
#define CLUSTER_NOMCAST 0
#endif
#define MCAST (CLUSTER_M > 1 && !CLUSTER_NOMCAST)
#ifndef B_EVICT_FIRST
#define B_EVICT_FIRST 0
#endif
#if B_EVICT_FIRST && CLUSTER_M > 1
#error evict-first B is for small M, without clusters
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define WGMMA CAT(wgmma_, BN)

// RS_EPILOGUE=1 builds the reduce-scatter's reduction in the epilogue
// (RSTable.epilogue; gpu.ReduceEpilogue): a variant of its own, since its
// bookkeeping costs the consumers registers that the widest accumulators
// (192 columns by 128 rows) do not have to spare.
#ifndef RS_EPILOGUE
#define RS_EPILOGUE 0
#endif
// RS_SMEM_PEERS=P (with RS_EPILOGUE, a team of P+1 ranks) gives the
// epilogue's reduction a shared-memory buffer of P partials of a whole
// tile (P * BM * BN bf16, after the staging buffers; Tile.PeerBuffers):
// the waiting warp copies the peers' partials of each own tile into it by
// bulk copies (cp.async.bulk, completing on PFULL) while the consumers
// still multiply it, and the epilogue reads them there instead of loading
// them from global memory, whose latency it could not hide
// (docs/fp8.md). 0: the epilogue loads them (after an L2 prefetch).
#ifndef RS_SMEM_PEERS
#define RS_SMEM_PEERS 0
#endif
#define PEER_BYTES (BM * BN * 2) // one peer's partial of a tile: BM rows of BN bf16
#if RS_SMEM_PEERS && !RS_EPILOGUE
#error RS_SMEM_PEERS buffers the epilogue's reduction: RS_EPILOGUE=1
#endif

// SPLIT_K=S > 1 splits each tile's k-blocks into S slices (split-K), for
// products with too few output tiles to keep every SM streaming B (small
// M): the persistent walk takes tiles x S work units, unit u being slice
// u % S of tile u / S (unit_at), and each unit accumulates its slice's
// k-blocks in fp32. Each consumer warp then stores its partial of its rows
// in a workspace and counts its slice; the warp that completes the count
// (the last of the S to get there, whichever slice it has) adds the other
// slices' partials to its own and alone runs the epilogue: the scales, the
// rounding and the stores, once, on the sum (fixup). Nobody waits. Plain
// products only: the reduce-scatter's epilogue counts and waits on whole
// tiles, and a cluster's pair would need both CTAs' units to agree.
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#if SPLIT_K < 1
#error SPLIT_K is 1 (no split-K) or more
#endif
#if SPLIT_K > 1 && (RS_EPILOGUE || CLUSTER_M > 1)
#error split-K tiles run plain products: no reduce-scatter epilogue, no clusters
#endif

// STREAM_K=1 (stream-K, for the last wave's tail): where an m x n output's
// tiles leave the last wave of the persistent grid part-empty, the last
// sk_tiles tiles of the walk (a kernel argument, 0: none; the host's
// kernels/gemm/hopper.StreamKTiles) are not dealt out whole: their
// k-blocks, laid end to end, are cut into one even range per CTA, so every
// SM stops at about the same time instead of a part of them running one
// more tile while the rest idle. A tile whose k-blocks fall to several CTAs
// is summed as split-K's are (fixup: partials, counts, the last to count
// runs the epilogue; nobody waits). In clusters (CLUSTER_M 2) the ranges
// are the clusters': both CTAs of one take the same k-blocks of their
// vertically adjacent tiles, as the cluster's B multicast needs, each
// summing its own tile's parts. Cooperative consumers, plain products
// only (no ping-pong, split-K or reduce-scatter).
#ifndef STREAM_K
#define STREAM_K 0
#endif
#if STREAM_K && (SPLIT_K > 1 || RS_EPILOGUE || PINGPONG)
#error stream-K tiles run plain products with cooperative consumers: no split-K, reduce-scatter or ping-pong
#endif

// EARLY_SCALES: an FP8 tile's consumer loads its epilogue's scales
// (TileScales) before its tile's main loop rather than under the last
// k-block's MMAs: ping-pong tiles whose whole units are a consumer's own,
// where the loads then overlap the other consumer's main loop; with row
// scales only where no all-gather's rows are waited for (the consumer's
// early_scales).
#define EARLY_SCALES (PINGPONG && SPLIT_K == 1)

// The epilogue stages 16-column blocks, two at a time where it reduces
// (below; the last pair of an odd count has one).
#if BN % 16 != 0
#error "the epilogue stores 16-column blocks: BN must be a multiple of 16"
#endif

// tile_of maps a linear tile index to its (row, column) tile: groups of
// GROUP_M tile rows, column-major inside a group, the rows taken in the
// order of the order table (0: natural order).
__device__ __forceinline__ void tile_of(int t, int tiles_m, int tiles_n, const u32* order, int& tm, int& tn) {
	const int per_group = GROUP_M * tiles_n;
	const int first = (t / per_group) * GROUP_M;
	const int rows = min(tiles_m - first, GROUP_M);
	const int r = t % per_group;
	tm = first + r % rows;
	tn = r / rows;
	if (order) tm = (int)order[tm];
}

// The named barriers (ids 3 and 4, alternating by tile) between the threads
// that store a tile and the signalling warp: both sides sync, so each id
// holds one tile's arrivals at a time; the storers wait only until the
// warp has signalled the tile before.
#define STORERS (PINGPONG ? 128 : 128 * CONSUMERS)
#define SIGNAL_BAR(i) (3 + ((i) & 1))
// With the epilogue's reduction, a warp of the producer's warpgroup waits
// for the peers' flags of each tile with own rows (the consumers have no
// registers to spare for the polling loop while they hold the
// accumulators); the tile's storers wait for it on a named barrier
// (ids 5 and 6 by tile, so each ping-pong consumer has its own), which
// orders their loads of the peers' partials after its acquire.
#define WAIT_BAR(i) (5 + ((i) & 1))
// reads_own_a: whether tile row tm lies wholly among the rows tma_a_own
// holds (an all-gather's own shard, read in place): the producer then loads
// its A there, and with row scales the epilogue reads its rows' scales
// from scale_a_own. Both sides must agree, so both ask here.
__device__ __forceinline__ bool reads_own_a(int tm, int m, int a_own_lo, int a_own_rows) {
	return a_own_rows > 0 && tm * BM >= a_own_lo && min(tm * BM + BM, m) <= a_own_lo + a_own_rows;
}
// own_rows: whether tile row tm has rows rank me owns.
__device__ __forceinline__ bool own_rows(int tm, int m, int me, int rows_per_rank) {
	return me >= 0 && tm * BM < min(m, (me + 1) * rows_per_rank) && tm * BM + BM > me * rows_per_rank;
}

// The epilogue's staging buffers: EPI_BUFS of STAGE_BYTES per consumer
// warp, after the mbarriers (kernels/gemm/hopper.Tile.SmemBytes counts
// them), each holding one 16 x 16 block of C (stage_write in
// hopper_ptx.cuh), which is also a TMA box of C in the 32-byte swizzle:
// the buffers start 256-byte aligned for that. More than one buffer lets
// a warp fill the next while the TMA still reads the last
// (Tile.EpiBuffers: as many as 4 where shared memory allows).
#define STAGE_BYTES 512
#ifndef EPI_BUFS
#define EPI_BUFS 1
#endif

// release frees a stage for the producers of every CTA of the cluster.
__device__ __forceinline__ void release(u32 bar) {
#if MCAST
#pragma unroll
	for (u32 r = 0; r < CLUSTER_M; r++) mbar_arrive_cta(bar, r);
#else
	mbar_arrive(bar);
#endif
}

#if CLUSTER_M > 1
#define CLUSTER_ATTR __cluster_dims__(CLUSTER_M, 1, 1)
#else
#define CLUSTER_ATTR
#endif

// Walk is the work units a CTA takes: unit u = first, first + stride, ...
// below units (tiles_m x tiles_n cluster tiles times SPLIT_K; with SPLIT_K
// 1 a unit is a tile), each mapped by unit_at (tile_at without split-K)
// and taking row crank of its cluster tile.
struct Walk {
	int first, stride, units, tiles_m, tiles_n;
	const u32* order;
	u32 crank;
};
// tile_at is walk's tile t as (row, column) of CTA tiles.
__device__ __forceinline__ void tile_at(const Walk& walk, int t, int& tm, int& tn) {
	tile_of(t, walk.tiles_m, walk.tiles_n, walk.order, tm, tn);
	tm = tm * CLUSTER_M + (int)walk.crank;
}

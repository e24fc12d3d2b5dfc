// symmtune's persistent Hopper GEMM (sm_90a): C = A * B with A [M, K]
// row-major, C [M, N] row-major (leading dimension N), fp32 accumulation,
// bf16 or f16 in and out, or e4m3 in (with fp32 scales) and bf16 out
// (docs/fp8.md). Preceded by wgmma.cuh (generated) and
// hopper_ptx.cuh, and compiled by NVRTC (kernels/gemm/hopper.Source) with no
// CUDA header: everything the chip offers beyond C++ is inline PTX.
//
// Structure (the warp-specialised design of CUTLASS's sm90 kernels and of
// public write-ups of Hopper GEMMs):
//   - warpgroup 0 is the producer: one thread walks the tiles this CTA owns
//     and issues TMA loads of A and B k-blocks into a ring of STAGES shared
//     memory stages, each completing on the stage's "full" mbarrier;
//   - warpgroups 1..CONSUMERS are consumers: they wait on "full", issue
//     wgmma on the stage and release it on its "empty" mbarrier once the
//     MMAs that read it have completed (one wgmma group stays in flight);
//   - the grid is persistent (one CTA per SM at most): CTA b takes tiles
//     b, b + gridDim.x, ... in group_m-swizzled order (as in Triton's
//     persistent matmul), so CTAs running together share rows of A and
//     columns of B in L2;
//   - the epilogue writes each consumer warp's 16 x 16 blocks of C into
//     shared memory (stmatrix) and stores them by TMA, as cuBLASLt's
//     kernels do; a reduce-scatter's rows, bound for peers, go by the
//     warp's own 16-byte stores.
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
// Arguments: the tensor maps of A and B, and of rows [a_own_lo, a_own_lo +
// a_own_rows) of A held elsewhere (the caller's own shard of an all-gather,
// read in place; a_own_rows 0: none; a tile straddling the range's ends
// reads A's map), and of C in 16 x 16 boxes with the 32-byte swizzle
// (unread with a reduce-scatter's table); C, m, n, k; then the tile order
// (0: natural), the all-gather's chunk table (see wait_rows; nchunks 0 for
// none), the flag words' base, a status word and the wait's bound; then the
// reduce-scatter's table and rows per rank (see RSTable; 0 for none; C is
// then this rank's rows of the sum when the table's epilogue is set, else
// unused); then the own rows' range; then the start gate (see Wait: this
// rank's start flag of rank 0, and the peers to wait for; 0 for none);
// last, the scales (fp32 device pointers, read only with IN_E4M3), and
// the row scales of the own rows' range where the caller holds them
// (0: scale_a has them too).
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
#if RS_SMEM_PEERS && !RS_EPILOGUE
#error RS_SMEM_PEERS buffers the epilogue's reduction: RS_EPILOGUE=1
#endif

// The epilogue stages 16-column blocks, two at a time where it reduces
// (below).
#if BN % 32 != 0
#error "the epilogue stores pairs of 16-column blocks: BN must be a multiple of 32"
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
extern "C" __global__ void __launch_bounds__(THREADS, 1) CLUSTER_ATTR
	hopper_gemm(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b,
		const __grid_constant__ TensorMap tma_a_own, const __grid_constant__ TensorMap tma_c, u64 c_ptr, int m, int n, int k, u64 order_ptr, u64 chunk_tab,
		int nchunks, u64 flags, u64 status, u64 timeout_ns, u64 rs_tab, int rows_per_rank, int a_own_lo, int a_own_rows, u64 start_flags, u32 start_mask,
		u64 scale_a, u64 scale_b, u64 scale_a_own) {
	const u32* order = (const u32*)order_ptr;
	extern __shared__ __align__(1024) unsigned char smem[];
	// 128-byte swizzled stages must start 1024-byte aligned; the host asks
	// for 1 KiB extra.
	const u32 base = (smem_addr(smem) + 1023) & ~1023u;
	const u32 sa = base, sb = base + STAGES * A_BYTES, bars = sb + STAGES * B_BYTES;
	const u32 stages_c = (bars + 16 * STAGES + 24 + 255) & ~255u; // the epilogue's staging buffers
#define FULL(s) (bars + 8 * (s))
#define EMPTY(s) (bars + 8 * (STAGES + (s)))
	// PINGPONG: completes a phase each time a consumer has waited for the
	// last stage of its tile's main loop (see below).
#define TURN (bars + 16 * STAGES)
#if RS_SMEM_PEERS
	// The peers' partials of one own tile (RS_SMEM_PEERS), after the
	// staging buffers: PFULL completes when the waiting warp's copies of
	// own tile j have landed (phase j), PEMPTY when every storer warp has
	// read them.
	const u32 pbuf = stages_c + (u32)(CONSUMERS * 4 * EPI_BUFS * STAGE_BYTES);
#define PFULL (bars + 16 * STAGES + 8)
#define PEMPTY (bars + 16 * STAGES + 16)
#define PEER_BYTES (BM * BN * 2) // one peer's partial of a tile, rows of BN bf16
#endif
	// The warpgroup, broadcast from lane 0 so that ptxas knows it is
	// warp-uniform (as CUTLASS's canonical_warp_group_idx does). Then the
	// main loop's stage index and wgmma descriptors live in uniform
	// registers: with threadIdx.x / 128 alone, ptxas built each descriptor
	// in vector registers and moved it over (R2UR), and the kernel ran 1.8x
	// cuBLASLt's instructions, drawing more power at a lower clock
	// (bench/results/2026-11-26-h200x2-fp8-uniform-wg.md).
	int wg = threadIdx.x / 128;
	asm volatile("shfl.sync.idx.b32 %0, %0, 0, 0x1f, 0xffffffff;" : "+r"(wg));
	// A kernel launched as this one's programmatic dependent (the fused
	// call's end barrier) may be scheduled from now on: it waits for this
	// grid's completion itself (griddepcontrol.wait), and its launch then
	// overlaps this grid's tail instead of following it.
	asm volatile("griddepcontrol.launch_dependents;");
	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			mbar_init(FULL(s), 1);
			// One arrival per consumer warp that reads the stage, in every
			// CTA of the cluster (each one's producer writes into all).
			mbar_init(EMPTY(s), (PINGPONG ? 4 : 4 * CONSUMERS) * (MCAST ? CLUSTER_M : 1));
		}
		mbar_init(TURN, 1);
#if RS_SMEM_PEERS
		mbar_init(PFULL, 1);
		mbar_init(PEMPTY, STORERS / 32);
#endif
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
#if CLUSTER_M > 1
	// No CTA may multicast into, or arrive on, a peer before the peer's
	// barriers exist.
	cluster_sync();
	const u32 crank = cluster_rank();
#else
	__syncthreads();
	const u32 crank = 0;
#endif

	// Tiles are walked in cluster tiles of CLUSTER_M vertically adjacent
	// tiles; this CTA takes row crank of each.
	const int tiles_m = (m + BM * CLUSTER_M - 1) / (BM * CLUSTER_M), tiles_n = (n + BN - 1) / BN;
	const int tiles = tiles_m * tiles_n, kblocks = (k + BK - 1) / BK;
	const int first = blockIdx.x / CLUSTER_M, stride = gridDim.x / CLUSTER_M;

	if (wg == 0) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
		if (rs_tab && threadIdx.x / 32 == 1) {
			// The reduce-scatter's signalling warp (see signal_tile).
			int i = 0;
			for (int t = first; t < tiles; t += stride, i++) {
				int tm, tn;
				tile_of(t, tiles_m, tiles_n, order, tm, tn);
				tm = tm * CLUSTER_M + crank;
				asm volatile("bar.sync %0, %1;" ::"r"(SIGNAL_BAR(i)), "r"(STORERS + 32) : "memory");
				if (threadIdx.x == 32) signal_tile((const RSTable*)rs_tab, tm * BM, min(tm * BM + BM, m));
				__syncwarp();
			}
		}
#if RS_EPILOGUE
		if (rs_tab && ((const RSTable*)rs_tab)->epilogue && threadIdx.x / 32 == 2) {
			// The epilogue reduction's waiting warp (see WAIT_BAR).
			const RSTable* rs = (const RSTable*)rs_tab;
			const int me = (int)rs->me;
			Wait w = {status, timeout_ns, start_flags, start_mask};
			bool waiting = true;
			int i = 0;
#if RS_SMEM_PEERS
			int j = 0; // own tiles so far: the buffer's phase
#endif
			for (int t = first; t < tiles; t += stride, i++) {
				int tm, tn;
				tile_of(t, tiles_m, tiles_n, order, tm, tn);
				tm = tm * CLUSTER_M + crank;
				if (!own_rows(tm, m, me, rows_per_rank)) continue;
				if (waiting && threadIdx.x == 64) waiting = rs_wait(rs, tm * BM, min(tm * BM + BM, m), w);
				u32 ok = waiting;
				asm volatile("shfl.sync.idx.b32 %0, %0, 0, 0x1f, 0xffffffff;" : "+r"(ok)); // lane 0's verdict
				waiting = ok != 0;
#if RS_SMEM_PEERS
				{
					// The peers' partials of the tile's own rows into the
					// buffer, a bulk copy per row and peer, once the storers
					// have read the last own tile's. Timed out, the phase
					// completes with nothing copied (the status word says
					// the output is wrong).
					const int lo = max(tm * BM, me * rows_per_rank), hi = min(min(tm * BM + BM, m), (me + 1) * rows_per_rank);
					const u32 bytes = (u32)min(BN, n - tn * BN) * 2;
					// The bulk copies (the async proxy) read what the flags
					// announced.
					asm volatile("fence.proxy.async.global;" ::: "memory");
					if (j > 0) mbar_wait(PEMPTY, (u32)((j - 1) & 1));
					if (threadIdx.x == 64) {
						if (waiting)
							mbar_expect_tx(PFULL, (u32)(hi - lo) * bytes * RS_SMEM_PEERS);
						else
							mbar_arrive(PFULL);
					}
					__syncwarp();
					if (waiting)
						for (int r = lo + (int)(threadIdx.x % 32); r < hi; r += 32)
							for (u32 src = 0, pi = 0; src < rs->world && pi < RS_SMEM_PEERS; src++) {
								if ((int)src == me) continue;
								const u64 p = rs->part[src] + ((u64)(r - me * rows_per_rank) * n + (u64)tn * BN) * 2;
								bulk_load(pbuf + pi * PEER_BYTES + (u32)(r - tm * BM) * (BN * 2), p, bytes, PFULL);
								pi++;
							}
					j++;
				}
#else
				if (waiting && !rs->remote) {
					// The peers' partials of the tile into L2 (one bulk
					// prefetch per row and peer) while the consumers still
					// compute it: their epilogue's loads then wait on L2,
					// not on HBM. (Partials in a peer's memory are not
					// prefetched: that a bulk prefetch of a peer's
					// address helps is not measured.)
					const int lo = max(tm * BM, me * rows_per_rank), hi = min(min(tm * BM + BM, m), (me + 1) * rows_per_rank);
					const u32 bytes = (u32)min(BN, n - tn * BN) * 2;
					for (int r = lo + (int)(threadIdx.x % 32); r < hi; r += 32)
						for (u32 src = 0; src < rs->world; src++) {
							if ((int)src == me) continue;
							const u64 p = rs->part[src] + ((u64)(r - me * rows_per_rank) * n + (u64)tn * BN) * 2;
							asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
						}
				}
#endif
				__syncwarp();
				asm volatile("bar.sync %0, %1;" ::"r"(WAIT_BAR(i)), "r"(STORERS + 32) : "memory");
			}
		}
#endif
		if (threadIdx.x == 0) {
			int s = 0;
			u32 phase = 0;
			u64 seen = 0;
			Wait w = {status, timeout_ns, start_flags, start_mask};
			bool waiting = nchunks > 0;
			for (int t = first; t < tiles; t += stride) {
				int tm, tn;
				tile_of(t, tiles_m, tiles_n, order, tm, tn);
				tm = tm * CLUSTER_M + crank;
				if (waiting) waiting = wait_rows((const u32*)chunk_tab, nchunks, tm * BM, min(tm * BM + BM, m), flags, w, seen);
				// A tile wholly among the rows tma_a_own holds reads them there.
				const bool own_a = reads_own_a(tm, m, a_own_lo, a_own_rows);
				const TensorMap* map_a = own_a ? &tma_a_own : &tma_a;
				const int row_a = own_a ? tm * BM - a_own_lo : tm * BM;
				for (int kb = 0; kb < kblocks; kb++) {
#if MCAST
					mbar_wait_cluster(EMPTY(s), phase ^ 1);
#else
					mbar_wait(EMPTY(s), phase ^ 1);
#endif
					mbar_expect_tx(FULL(s), A_BYTES + B_BYTES);
					tma_load(sa + s * A_BYTES, map_a, FULL(s), kb * BK, row_a);
#if CLUSTER_M > 1 && !MCAST
					for (int h = 0; h < CLUSTER_M; h++)
						tma_load(sb + s * B_BYTES + h * (B_BYTES / CLUSTER_M), &tma_b, FULL(s), kb * BK, tn * BN + h * (BN / CLUSTER_M));
#elif CLUSTER_M > 1
					// This CTA's share of B, into every CTA of the cluster.
					tma_load_multicast(sb + s * B_BYTES + crank * (B_BYTES / CLUSTER_M), &tma_b, FULL(s), kb * BK,
						tn * BN + crank * (BN / CLUSTER_M), (unsigned short)((1 << CLUSTER_M) - 1));
#elif B_KMAJOR
					tma_load(sb + s * B_BYTES, &tma_b, FULL(s), kb * BK, tn * BN);
#else
#pragma unroll
					for (int j = 0; j < BN / 64; j++)
						tma_load(sb + s * B_BYTES + j * B_NBLOCK_BYTES, &tma_b, FULL(s), tn * BN + 64 * j, kb * BK);
#endif
					if (++s == STAGES) {
						s = 0;
						phase ^= 1;
					}
				}
			}
		}
	} else {
		asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMERS == 1 ? 240 : 232));
		const int cw = wg - 1, tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
		const u32 stage = stages_c + (u32)(cw * 4 + warp) * (EPI_BUFS * STAGE_BYTES);
		const int row0 = PINGPONG ? 0 : cw * WG_M; // this consumer's first row of the tile
		// Stage 0's descriptors of those rows of A and of B. Another stage,
		// a later 16-deep K slice or 64 more rows only move the start
		// address, whose field (address / 16, 14 bits) cannot carry: shared
		// addresses stay below 256 KiB. So the main loop adds constants to
		// these (uniform) values instead of rebuilding each descriptor from
		// its address: ncu counted 78 instructions per k-block and warp
		// there, cuBLASLt's kernel 40 (bench/results/2026-11-24-h200-sustained-gemm.md).
		const u64 da0 = desc_kmajor(sa + row0 * 128);
#if IN_E4M3
		// Tensor scales: one float each, the same for every tile.
		const float sab = ROW_SCALES ? 0.f : ((const float*)scale_a)[0] * ((const float*)scale_b)[0];
#endif
#if B_KMAJOR
		const u64 db0 = desc_kmajor(sb);
#else
		const u64 db0 = desc_mnmajor(sb, B_NBLOCK_BYTES);
#endif
		float acc[MI][BN / 2];
		int s = 0;
		u32 phase = 0;
		int i = 0; // this CTA's tile counter
#if RS_SMEM_PEERS
		// Own tiles of this CTA so far, the other consumer's too: the
		// peers' buffer's phase (see the waiting warp).
		int j = 0;
		const int me_rs = rs_tab && ((const RSTable*)rs_tab)->epilogue ? (int)((const RSTable*)rs_tab)->me : -1;
#endif
		for (int t = first; t < tiles; t += stride, i++) {
#if PINGPONG
			if (i % CONSUMERS != cw) {
				// The other consumer's tile: skip its stages.
				const int adv = s + kblocks;
				phase ^= (u32)((adv / STAGES) & 1);
				s = adv % STAGES;
#if RS_SMEM_PEERS
				int tm, tn;
				tile_of(t, tiles_m, tiles_n, order, tm, tn);
				j += own_rows(tm * CLUSTER_M + crank, m, me_rs, rows_per_rank);
#endif
				continue;
			}
			// A parity wait cannot tell phase p from phase p+2, so a
			// consumer must not wait on a stage more than one phase ahead
			// of it: tile i's main loop starts once tile i-1's consumer has
			// seen its last stage full (CUTLASS orders its ping-pong
			// consumers the same way).
			if (i > 0) mbar_wait(TURN, (u32)((i - 1) & 1));
#endif
			int tm, tn;
			tile_of(t, tiles_m, tiles_n, order, tm, tn);
			tm = tm * CLUSTER_M + crank;
			int prev = -1;
#pragma unroll
			for (int mi = 0; mi < MI; mi++)
#pragma unroll
				for (int j = 0; j < BN / 2; j++) acc[mi][j] = 0.f;
			for (int kb = 0; kb < kblocks; kb++) {
				mbar_wait(FULL(s), phase);
				wgmma_fence();
				const u64 da = da0 + (u64)(s * (A_BYTES / 16)), db = db0 + (u64)(s * (B_BYTES / 16));
#pragma unroll
				for (int kk = 0; kk < 128 / WGMMA_KBYTES; kk++) {
					// K-major rows are 128 bytes: a K slice is 32 bytes on; an
					// MN-major B slice (k16) is 16 rows of 128 bytes on.
					const u64 dbk = db + (u64)(B_KMAJOR ? kk * (WGMMA_KBYTES / 16) : kk * 128);
#pragma unroll
					for (int mi = 0; mi < MI; mi++) WGMMA(acc[mi], da + (u64)(mi * 64 * 8 + kk * (WGMMA_KBYTES / 16)), dbk, 1);
				}
				wgmma_commit();
				// The group before this one has finished reading its stage.
				wgmma_wait<1>();
				if (prev >= 0 && lane == 0) release(EMPTY(prev));
				prev = s;
				if (++s == STAGES) {
					s = 0;
					phase ^= 1;
				}
			}
#if PINGPONG
			if (tid == 0) mbar_arrive(TURN);
#endif
			wgmma_wait<0>();
			if (prev >= 0 && lane == 0) release(EMPTY(prev));
#pragma unroll
			for (int mi = 0; mi < MI; mi++) fence_acc(acc[mi], BN / 2);
#if IN_E4M3
			// The scales, before any rounding: every path below stores or
			// reduces scaled partials (a reduce-scatter's peers scale theirs).
			// With row scales, a tile that reads its rows through tma_a_own
			// (reads_own_a) takes their scales from scale_a_own, where
			// the caller holds them (indexed from a_own_lo), when given: no
			// copy into scale_a's array has to come first.
			const bool own_sa = ROW_SCALES && scale_a_own != 0 && reads_own_a(tm, m, a_own_lo, a_own_rows);
			const int sa_lo = own_sa ? a_own_lo : 0;
#pragma unroll
			for (int mi = 0; mi < MI; mi++)
				scale_acc<BN, ROW_SCALES>(acc[mi], sab, (const float*)(own_sa ? scale_a_own : scale_a),
					tm * BM + row0 + mi * 64 + warp * 16 + lane / 4 - sa_lo, own_sa ? a_own_rows : m, (const float*)scale_b,
					tn * BN + 2 * (lane % 4), n);
#endif

			// Epilogue: the m64nN accumulator layout gives each thread two
			// adjacent columns of rows warp*16 + lane/4 and +8 of every
			// 8-column block. Each 16-column block goes through one of the
			// warp's 512-byte staging buffers by one stmatrix (four 8x8
			// matrices, exactly the fragments the thread holds). A register
			// transpose (shuffles and lane-dependent selects) took ~6% of
			// the consumers' cycles (bench/results/2026-11-24-h200-epilogue-ncu.md).
			// A plain product's block then goes to C by one TMA store of
			// the buffer as it is: the warp neither loads it back nor holds
			// registers for its stores. (With 16-byte stores from
			// registers, ncu sampled the epilogue half again as long as
			// cuBLASLt's TMA-store one: bench/results/2026-11-24-h200-tma-store.md.)
			// A matmul + reduce-scatter's rows are bound for their owners'
			// slots (row g to owner q's slot for this rank's partials, row
			// g - q*rpr there), which have no tensor map: one 16-byte
			// shared load leaves lane l with 8 adjacent columns of row l/2,
			// stored as one 16-byte vector (whole 32-byte sectors locally,
			// 16-byte NVLink stores to a peer); own rows reduced here
			// (RSTable.epilogue) go to C once every peer's partial of them
			// has come.
			const RSTable* rs = (const RSTable*)rs_tab;
			if (!rs) {
#pragma unroll
				for (int mi = 0; mi < MI; mi++) {
					const int row = tm * BM + row0 + mi * 64 + warp * 16;
#pragma unroll
					for (int b = 0; b < BN / 16; b++) {
						const u32 buf = stage + (u32)((mi * (BN / 16) + b) % EPI_BUFS) * STAGE_BYTES;
						// The store that last read this buffer is done with it.
						if (lane == 0) bulk_wait_read<EPI_BUFS - 1>();
						__syncwarp();
						stage_write(acc[mi], b, buf, lane);
						fence_async_smem();
						__syncwarp();
						if (lane == 0) {
							tma_store(&tma_c, buf, tn * BN + 16 * b, row);
							bulk_commit();
						}
					}
				}
				continue;
			}
			const int me = RS_EPILOGUE && rs->epilogue ? (int)rs->me : -1;
			const bool own_tile = own_rows(tm, m, me, rows_per_rank);
			if (own_tile) {
				asm volatile("bar.sync %0, %1;" ::"r"(WAIT_BAR(i)), "r"(STORERS + 32) : "memory");
#if RS_SMEM_PEERS
				mbar_wait(PFULL, (u32)(j & 1));
#endif
			}
#pragma unroll
			for (int mi = 0; mi < MI; mi++) {
				const int g = tm * BM + row0 + mi * 64 + warp * 16 + stage_row(lane);
				const int q = g / rows_per_rank;
				const bool own = q == me; // an own row, reduced here into C
				u32* const dst = (u32*)((own ? c_ptr : rs->dst[q < MAX_OWNERS ? q : 0]) + (u64)(g - q * rows_per_rank) * n * 2);
				const int col0 = tn * BN + 8 * (lane & 1);
				u32* const out = dst + col0 / 2; // block b's 8 columns: out + 8 * b
				// The row's columns from col0 on (n is a multiple of 8, so a
				// block is wholly in or out).
				const int cols = g < m ? n - col0 : 0;
				// Two blocks at a time: the second one's stmatrix overlaps the
				// first one's load, and (reducing) each lane has two peers'
				// loads in flight at once.
#pragma unroll
				for (int b = 0; b < BN / 16; b += 2) {
					u32 w[2][4];
					stage_block(acc[mi], b, stage, lane, w[0]);
					stage_block(acc[mi], b + 1, stage, lane, w[1]);
					if (16 * b >= cols) continue;
					const bool second = 16 * (b + 1) < cols;
#if RS_SMEM_PEERS
					if (own) {
						// The buffer holds the tile's rows as C does, BN
						// columns each; a masked second block reads the
						// first one's words again and is not stored.
						const u32 row = pbuf + (u32)(g - tm * BM) * (BN * 2) + (u32)(8 * (lane & 1)) * 2;
						const u32 a[2] = {row + (u32)(16 * b) * 2, row + (u32)(16 * (second ? b + 1 : b)) * 2};
						add_peers_smem<2>(&w[0][0], a);
					}
#elif RS_EPILOGUE
					if (own) {
						// A masked second block reads the first one's words
						// again and is not stored.
						const u32* p[2] = {out + 8 * b, out + 8 * (second ? b + 1 : b)};
						add_peers<2, 4>(rs, &w[0][0], p, c_ptr);
					}
#endif
					st_v4(out + 8 * b, w[0]);
					if (second) st_v4(out + 8 * (b + 1), w[1]);
				}
			}
#if RS_SMEM_PEERS
			if (own_tile) {
				// This warp has read the peers' partials: the waiting warp
				// may copy the next own tile's into the buffer.
				__syncwarp();
				if (lane == 0) mbar_arrive(PEMPTY);
			}
			j += own_tile;
#endif
			// bar.sync, not bar.arrive: a ping-pong consumer that only
			// arrived could run two tiles ahead of the signalling warp and
			// put two tiles' arrivals on one id (the phases mix, the warp's
			// last wait never ends; bench/results/2026-11-23-h200x2-pingpong-hang.md).
			// Waiting costs little: the warp reaches tile i as soon as it
			// has signalled tile i-1.
			asm volatile("bar.sync %0, %1;" ::"r"(SIGNAL_BAR(i)), "r"(STORERS + 32) : "memory");
		}
		// C's last TMA stores have written it.
		if (lane == 0) bulk_wait_all();
	}
#if CLUSTER_M > 1
	// Neither CTA of a cluster may exit while its peer can still write
	// into its shared memory or arrive on its barriers.
	__syncwarp();
	cluster_sync();
#endif
#undef FULL
#undef EMPTY
#undef TURN
#if RS_SMEM_PEERS
#undef PFULL
#undef PEMPTY
#undef PEER_BYTES
#endif
}

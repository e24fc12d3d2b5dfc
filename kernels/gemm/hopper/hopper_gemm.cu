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
//     columns of B in L2; with split-K (SPLIT_K > 1, for small M) the walk
//     is over work units, SPLIT_K k-slices of each tile, whose fp32
//     partials the last slice's warps sum; with stream-K (STREAM_K, for
//     the last wave's tail) the last tiles' k-blocks are cut evenly among
//     the CTAs instead (both in hopper_split.cuh);
//   - the epilogue writes each consumer warp's 16 x 16 blocks of C into
//     shared memory (stmatrix) and stores them by TMA, as cuBLASLt's
//     kernels do, and so a reduce-scatter's rows bound for this GPU's
//     memory; those bound for peers go by the warp's own 16-byte stores.
// The compile-time config is hopper_tile.cuh's; the communication's flags,
// tables and reduce-scatter warps are hopper_comm.cuh's.
// Arguments: the tensor maps of A and B, and of rows [a_own_lo, a_own_lo +
// a_own_rows) of A held elsewhere (the caller's own shard of an all-gather,
// read in place; a_own_rows 0: none; a tile straddling the range's ends
// reads A's map), and of C in 16 x 16 boxes with the 32-byte swizzle
// (unread with a reduce-scatter's table), and of a reduce-scatter's owner
// slots (RSMaps, read where rs_tma says); C, m, n, k; then the tile order
// (0: natural), the all-gather's chunk table (see wait_rows; nchunks 0 for
// none), the flag words' base, a status word and the wait's bound; then the
// reduce-scatter's table, the owners whose slots rs_maps holds (bit q:
// owner q) and rows per rank (see RSTable; 0 for none; C is
// then this rank's rows of the sum when the table's epilogue is set, else
// unused); then the own rows' range; then the start gate (see Wait: this
// rank's start flag of rank 0, and the peers to wait for; 0 for none);
// then the scales (fp32 device pointers, read only with IN_E4M3), and
// the row scales of the own rows' range where the caller holds them
// (0: scale_a has them too); then split-K's workspace (SPLIT_K > 1 only,
// see fixup in hopper_split.cuh: the partials and the counts, which must be
// zero at the first launch; each launch leaves them zero), and with
// STREAM_K the stream-K tiles (see hopper_tile.cuh); last, whether
// the grid lets its programmatic dependents launch from its start (see
// early_dependents below).

extern "C" __global__ void __launch_bounds__(THREADS, 1) CLUSTER_ATTR
	hopper_gemm(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b,
		const __grid_constant__ TensorMap tma_a_own, const __grid_constant__ TensorMap tma_c, const __grid_constant__ RSMaps rs_maps, u64 c_ptr, int m, int n, int k, u64 order_ptr, u64 chunk_tab,
		int nchunks, u64 flags, u64 status, u64 timeout_ns, u64 rs_tab, u32 rs_tma, int rows_per_rank, int a_own_lo, int a_own_rows, u64 start_flags, u32 start_mask,
		u64 scale_a, u64 scale_b, u64 scale_a_own, u64 sk_part, u64 sk_count, int sk_tiles, int early_dependents) {
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
	// The peers' partials of one own tile (RS_SMEM_PEERS), after the
	// staging buffers: PFULL completes when the waiting warp's copies of
	// own tile j have landed (phase j), PEMPTY when every storer warp has
	// read them.
	const u32 pbuf = stages_c + (u32)(CONSUMERS * 4 * EPI_BUFS * STAGE_BYTES);
#define PFULL (bars + 16 * STAGES + 8)
#define PEMPTY (bars + 16 * STAGES + 16)
	// The warpgroup, broadcast from lane 0 so that ptxas knows it is
	// warp-uniform (as CUTLASS's canonical_warp_group_idx does). Then the
	// main loop's stage index and wgmma descriptors live in uniform
	// registers: with threadIdx.x / 128 alone, ptxas built each descriptor
	// in vector registers and moved it over (R2UR), and the kernel ran 1.8x
	// cuBLASLt's instructions, drawing more power at a lower clock
	// (bench/results/2026-11-26-h200x2-fp8-uniform-wg.md).
	int wg = threadIdx.x / 128;
	asm volatile("shfl.sync.idx.b32 %0, %0, 0, 0x1f, 0xffffffff;" : "+r"(wg));
	// early_dependents: a kernel launched as this one's programmatic
	// dependent (the fused call's end barrier) may be scheduled from now
	// on: it waits for this grid's completion itself
	// (griddepcontrol.wait), and its launch then overlaps this grid's tail
	// instead of following it. Otherwise dependents launch as this grid
	// exits: back to back, a product launched as the dependent of one that
	// triggered here ran up to 20% slower at 64-1,024 rows than after one
	// that did not (bench/results/2026-12-02-h200-pdl.md).
	if (early_dependents) asm volatile("griddepcontrol.launch_dependents;");
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
	if (threadIdx.x == 0) {
		tma_prefetch_map(&tma_a);
		tma_prefetch_map(&tma_b);
		if (a_own_rows > 0) tma_prefetch_map(&tma_a_own);
		if (!rs_tab) tma_prefetch_map(&tma_c); // a reduce-scatter's C map is unused
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
	// Launched as the programmatic dependent of the kernel before it
	// (FusedGEMM.Launch), this grid's CTAs start as that kernel's CTAs exit (or
	// earlier, where it lets its dependents launch early): the launch, the
	// barriers' set-up and the maps' prefetch above overlap its tail. From here on every thread reads or writes global
	// memory (the operands, C, the tile order, flags, scales, split-K's
	// workspace), which that kernel may still be writing or reading: every
	// thread waits for it first. Without the dependency this returns at once.
	grid_wait();

	// Tiles are walked in cluster tiles of CLUSTER_M vertically adjacent
	// tiles; this CTA takes row crank of each. With split-K, SPLIT_K work
	// units a tile (unit_at).
	const int tiles_m = (m + BM * CLUSTER_M - 1) / (BM * CLUSTER_M), tiles_n = (n + BN - 1) / BN;
	const int units = tiles_m * tiles_n * SPLIT_K, kblocks = (k + BK - 1) / BK;
	const int first = blockIdx.x / CLUSTER_M, stride = gridDim.x / CLUSTER_M;
	const Walk walk = {first, stride, units, tiles_m, tiles_n, order, crank};

	if (wg == 0) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
		// (Split-K products have no reduce-scatter table: the host refuses it.)
		if (SPLIT_K == 1 && rs_tab && threadIdx.x / 32 == 1) rs_signal_warp((const RSTable*)rs_tab, walk, m);
#if RS_EPILOGUE
		if (rs_tab && ((const RSTable*)rs_tab)->epilogue && threadIdx.x / 32 == 2)
			rs_wait_warp((const RSTable*)rs_tab, Wait{status, timeout_ns, start_flags, start_mask}, walk, m, n, rows_per_rank, pbuf, PFULL, PEMPTY);
#endif
		if (threadIdx.x == 0) {
			int s = 0;
			u32 phase = 0;
			u64 seen = 0;
			Wait w = {status, timeout_ns, start_flags, start_mask};
			bool waiting = nchunks > 0;
#if B_EVICT_FIRST
			const u64 b_policy = evict_first_policy();
#endif
			Sched sc = sched_start(walk, kblocks, sk_tiles);
			for (Unit un; sched_next(walk, sc, kblocks, un);) {
				const int tm = un.tm, tn = un.tn, kb0 = un.kb0, kb1 = un.kb1;
				if (waiting) waiting = wait_rows((const u32*)chunk_tab, nchunks, tm * BM, min(tm * BM + BM, m), flags, w, seen);
				// A tile wholly among the rows tma_a_own holds reads them there.
				const bool own_a = reads_own_a(tm, m, a_own_lo, a_own_rows);
				const TensorMap* map_a = own_a ? &tma_a_own : &tma_a;
				const int row_a = own_a ? tm * BM - a_own_lo : tm * BM;
				for (int kb = kb0; kb < kb1; kb++) {
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
#elif B_KMAJOR && B_EVICT_FIRST
					tma_load_hint(sb + s * B_BYTES, &tma_b, FULL(s), kb * BK, tn * BN, b_policy);
#elif B_KMAJOR
					tma_load(sb + s * B_BYTES, &tma_b, FULL(s), kb * BK, tn * BN);
#else
#pragma unroll
					for (int j = 0; j < BN / 64; j++) {
#if B_EVICT_FIRST
						tma_load_hint(sb + s * B_BYTES + j * B_NBLOCK_BYTES, &tma_b, FULL(s), tn * BN + 64 * j, kb * BK, b_policy);
#else
						tma_load(sb + s * B_BYTES + j * B_NBLOCK_BYTES, &tma_b, FULL(s), tn * BN + 64 * j, kb * BK);
#endif
					}
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
		int i = 0; // this CTA's unit counter
#if RS_SMEM_PEERS
		// Own tiles of this CTA so far, the other consumer's too: the
		// peers' buffer's phase (see the waiting warp).
		int j = 0;
#endif
		// The reduce-scatter's owners whose rows go by TMA stores, and the
		// rank whose rows are reduced here (-1: none), read once: the
		// table is in global memory, and a load of it in each tile's
		// epilogue waits on L2.
		const RSTable* rs = (const RSTable*)rs_tab;
		const u32 rs_tma_mask = SPLIT_K == 1 && rs ? rs_tma : 0;
		const int me = RS_EPILOGUE && rs && rs->epilogue ? (int)rs->me : -1;
		if (tid == 0 && cw == 0)
			for (int q = 0; q < MAX_OWNERS; q++)
				if ((rs_tma_mask >> q) & 1) tma_prefetch_map(&rs_maps.m[q]);
		// The last tile stored by TMA whose signal is still to come (-1:
		// none): see rs_tma_signal_ready.
		int rs_pending = -1;
#if IN_E4M3
		// Where this consumer loads a tile's scales (see TileScales and
		// below): before its main loop, or under its last k-block's MMAs.
		const bool early_scales = EARLY_SCALES && (!ROW_SCALES || nchunks == 0);
#endif
		Sched sc = sched_start(walk, kblocks, sk_tiles);
		for (Unit un; sched_next(walk, sc, kblocks, un); i++) {
#if PINGPONG
			if (i % CONSUMERS != cw) {
				// The other consumer's unit: skip its stages.
				const int adv = s + (un.kb1 - un.kb0);
				phase ^= (u32)((adv / STAGES) & 1);
				s = adv % STAGES;
#if RS_SMEM_PEERS
				j += own_rows(un.tm, m, me, rows_per_rank);
#endif
				continue;
			}
			// A parity wait cannot tell phase p from phase p+2, so a
			// consumer must not wait on a stage more than one phase ahead
			// of it: tile i's main loop starts once tile i-1's consumer has
			// seen its last stage full (CUTLASS orders its ping-pong
			// consumers the same way).
#endif
			const int tm = un.tm, tn = un.tn, kb0 = un.kb0, kb1 = un.kb1;
#if IN_E4M3
			// The scales (TileScales). With row scales, a tile that reads
			// its rows through tma_a_own (reads_own_a) takes their scales
			// from scale_a_own, where the caller holds them (indexed from
			// a_own_lo), when given: no copy into scale_a's array has to
			// come first.
			TileScales<BN, MI, ROW_SCALES> ts;
			const auto load_tile_scales = [&]() {
				const bool own_sa = ROW_SCALES && scale_a_own != 0 && reads_own_a(tm, m, a_own_lo, a_own_rows);
				load_scales(ts, sab, (const float*)(own_sa ? scale_a_own : scale_a),
					tm * BM + row0 + warp * 16 + lane / 4 - (own_sa ? a_own_lo : 0), own_sa ? a_own_rows : m,
					(const float*)scale_b, tn * BN + 2 * (lane % 4), n);
			};
			// A ping-pong consumer loads them before waiting for its turn:
			// they land while the other consumer's main loop runs. Loaded
			// under the last k-block's MMAs instead, their L2 round trip
			// still stalled the epilogue's first multiplies (ncu, 16384 x
			// 8192 x 1024 row scales, warm L2: 5.9% of the samples). Not
			// where an all-gather's rows are waited for (nchunks > 0): a
			// gathered row's scale arrives with the row, announced by its
			// chunk's flag, which only the stages' mbarriers order before
			// this thread's loads.
			if (early_scales) load_tile_scales();
#endif
#if PINGPONG
			if (i > 0) mbar_wait(TURN, (u32)((i - 1) & 1));
#endif
			int prev = -1;
#pragma unroll
			for (int mi = 0; mi < MI; mi++)
#pragma unroll
				for (int j = 0; j < BN / 2; j++) acc[mi][j] = 0.f;
			for (int kb = kb0; kb < kb1; kb++) {
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
#if IN_E4M3
			// Other tiles load the scales while the last k-block's MMAs
			// run; split-K and stream-K tiles after the fixup: held across
			// it, the 256-wide tile's row scales spilled (NVRTC 12.4).
			if (SPLIT_K == 1 && !STREAM_K && !early_scales) load_tile_scales();
#endif
			wgmma_wait<0>();
			if (prev >= 0 && lane == 0) release(EMPTY(prev));
#pragma unroll
			for (int mi = 0; mi < MI; mi++) fence_acc(acc[mi], BN / 2);
#if SPLIT_K > 1 || STREAM_K
			// This warp's rows of a shared tile join its sum (split-K's
			// slices, stream-K's parts); the warp that completes it goes on
			// with the sum, the others to their next unit (the TMA stores
			// below are each warp's own).
			if (unit_shared(un, kblocks) && !fixup_unit(acc, walk, un, sk_part, sk_count, (PINGPONG ? 0 : cw * 4) + warp, lane)) continue;
			// The sums are done before the epilogue scales them: without
			// this, ptxas scaled columns early and spilled them (256-wide
			// tiles with FP8 row scales, NVRTC 12.4).
#pragma unroll
			for (int mi = 0; mi < MI; mi++) fence_acc(acc[mi], BN / 2);
#endif
#if IN_E4M3
			// The scales, before any rounding: every path below stores or
			// reduces scaled partials (a reduce-scatter's peers scale theirs);
			// with split-K, on the slices' sum, once.
			if (SPLIT_K > 1 || STREAM_K) load_tile_scales();
#pragma unroll
			for (int mi = 0; mi < MI; mi++) scale_acc(acc[mi], ts, mi);
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
			// g - q*rpr there). Slots in this GPU's memory have tensor maps
			// (rs_maps, where rs_tma says), and a tile whose rows all go to
			// those (rs_tma_tile) is stored the same way, through its
			// owners' maps. For the others (a peer's slot, rows reduced
			// here) one 16-byte shared load leaves lane l with 8 adjacent
			// columns of row l/2, stored as one 16-byte vector (whole
			// 32-byte sectors locally, 16-byte NVLink stores to a peer); own
			// rows reduced here (RSTable.epilogue) go to C once every peer's
			// partial of them has come.
			if (SPLIT_K > 1 || !rs) {
				store_tile_tma<false>(acc, stage, lane, warp, row0, tm, tn, m, &tma_c, rs_maps, rows_per_rank);
				continue;
			}
			const bool own_tile = own_rows(tm, m, me, rows_per_rank);
			// The tile this warp stored by TMA before is signalled now, its
			// stores long done, rather than right after they were issued,
			// which would wait for them to be written. The signalling warp
			// takes the tiles in order, and so does this warp: the barrier
			// of tile rs_pending comes before this one's.
			if (rs_pending >= 0) {
				rs_tma_signal_ready(rs_pending, lane);
				rs_pending = -1;
			}
			if (!own_tile && rs_tma_tile(rs_tma_mask, tm * BM, min(tm * BM + BM, m), rows_per_rank)) {
				store_tile_tma<true>(acc, stage, lane, warp, row0, tm, tn, m, &tma_c, rs_maps, rows_per_rank);
				rs_pending = i;
				continue;
			}
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
					// An odd count's last pair has one block, whose words
					// stand in for the second's, never stored (BN / 16 is a
					// constant: the unrolled loop keeps no test, and an even
					// count compiles as before).
					const bool pair = b + 1 < BN / 16;
					u32 w[2][4];
					stage_block(acc[mi], b, stage, lane, w[0]);
					if (pair)
						stage_block(acc[mi], b + 1, stage, lane, w[1]);
					else
						for (int q = 0; q < 4; q++) w[1][q] = w[0][q];
					if (16 * b >= cols) continue;
					const bool second = pair && 16 * (b + 1) < cols;
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
		if (rs_pending >= 0) rs_tma_signal_ready(rs_pending, lane);
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
#undef PFULL
#undef PEMPTY
}

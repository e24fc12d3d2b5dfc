// hopper_comm.cuh: what the persistent Hopper GEMM (hopper_gemm.cu) knows of
// the communication around it: the flag words it waits for (all-gather +
// matmul: rows of A arriving) and the reduce-scatter's table, signalling
// and epilogue reduction, and the producer warpgroup's warps that signal
// and wait for them (matmul + reduce-scatter), and the epilogue's TMA
// stores, which a reduce-scatter's rows share (store_tile_tma). Concatenated after
// hopper_tile.cuh and before hopper_gemm.cu (kernels/gemm/hopper.Source);
// the layouts are kernels/gemm/gpu's (layout.go, fusedplan.go).

// Communication (all-gather + matmul): rows of A arrive while the GEMM runs,
// each span of the chunk table announced by a flag word (FLAG_STRIDE bytes
// apart) that a copy engine's stream write (fenced after the copy) or a
// peer sets to nonzero. The producer waits, before loading a tile, for
// every span its rows touch. The wait is bounded: past timeout_ns it sets
// *status to a poison word (cudamem.Poison: kind 3, ranks unknown here;
// for symmtune.torch status is the workspace's poison word, which the end
// barrier spreads) and stops waiting (the output is then wrong and the
// host reports a hang), so a peer that never delivers cannot hold the GPU.
#define FLAG_STRIDE 64
// The start gate's bound: barrier.cuh's, set by the same -D (cudamem:
// TimeoutOptions); past it *status gets kind 4 and the late peer's rank.
#ifndef SYMM_TIMEOUT_NS
#define SYMM_TIMEOUT_NS 10000000000ull
#endif
// Wait is what a waiting thread needs: the status word and the bound, and
// the start gate. A peer's host may reach the call seconds after this one
// (symmtune.torch: a collective called late), so before its first wait for
// a peer's data a thread waits, up to SYMM_TIMEOUT_NS, for the start flag
// of every peer in start_mask (set by the peer's stream just before it
// launches its GEMM; kernels/gemm/gpu: StartFlag); the bound then measures the copies, not the
// peers' hosts. Own tiles come first in every order, so they are computed
// while a late peer is still coming; only then does a CTA spin here (as a
// collective's kernel spins for its peers).
struct Wait {
	u64 status, timeout_ns;
	u64 start;      // this rank's start flag of rank 0 (rank q's FLAG_STRIDE * q on)
	u32 start_mask; // the peers whose start flag this thread has yet to see
};
// wait_flag waits for the flag word at addr to become nonzero, with acquire
// semantics at system scope, past the start gate. Returns false once timed
// out.
__device__ bool wait_flag(u64 addr, Wait& w) {
	for (const u64 t0 = w.start_mask ? globaltimer() : 0; w.start_mask; w.start_mask &= w.start_mask - 1) {
		const u32 q = __ffs(w.start_mask) - 1;
		const u64 f = w.start + (u64)q * FLAG_STRIDE;
		while (ld_acquire_sys(f) == 0) {
			if (globaltimer() - t0 > SYMM_TIMEOUT_NS) {
				asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(w.status), "r"(0x8400ff00u | q) : "memory");
				return false;
			}
			asm volatile("nanosleep.u32 256;");
		}
	}
	const u64 t0 = globaltimer();
	while (ld_acquire_sys(addr) == 0) {
		if (globaltimer() - t0 > w.timeout_ns) {
			// A plain store at system scope: the word may be host memory
			// mapped for the device (symmtune.torch reads it there).
			asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(w.status), "r"(0x8300ffffu) : "memory");
			return false;
		}
		asm volatile("nanosleep.u32 32;");
	}
	return true;
}
// wait_rows waits for the spans of chunk table tab (nchunks spans: bounds
// tab[0..nchunks], flag indices tab[nchunks+1..]) that rows [lo, hi) touch
// and that *seen does not already hold. Returns false once timed out.
__device__ bool wait_rows(const u32* tab, int nchunks, int lo, int hi, u64 flags, Wait& w, u64& seen) {
	for (int i = 0; i < nchunks; i++) {
		if ((seen >> i) & 1) continue;
		if ((int)tab[i] >= hi || (int)tab[i + 1] <= lo) continue;
		seen |= 1ull << i;
		const u32 f = tab[nchunks + 1 + i];
		if (f == 0xFFFFFFFFu) continue;
		if (!wait_flag(flags + (u64)f * FLAG_STRIDE, w)) return false;
	}
	// TMA (the async proxy) reads what the flags announced.
	asm volatile("fence.proxy.async.global;" ::: "memory");
	return true;
}

// Matmul + reduce-scatter: each C row belongs to the rank that owns it
// (rows_per_rank rows each) and goes straight into that rank's slot for
// this rank's partials (NVLink stores for peers). The rows are cut into
// chunks; once every tile touching a chunk has been stored, the last of
// them sets the chunk's flag in its owner's region, whose reduction waits
// for it (kernels/gemm/gpu: matmulrs, PlanFusedRS, which also fills this
// table; the layout is rsTable's there).
//
// With epilogue set, the rows this rank owns are reduced here instead (no
// reduction kernel after the GEMM): their tiles come last in the order, so
// every peer has long been storing its partials of them; the epilogue waits
// for the peers' flags of the chunks a tile touches, adds the peers'
// partials to its own and stores the sum into C (this rank's
// rows_per_rank rows). part[src] says where source src's partials of
// those rows are: this rank's slots, where pushes put them, or (remote)
// the source's own memory, read over NVLink (push=none).
#define MAX_OWNERS 8
#define MAX_RS_CHUNKS 64
// Owner q's slot (dst[q]) as a tensor map (rows_per_rank x n, 16 x 16
// boxes, the 32-byte swizzle, as C's), where the launch's mask rs_tma has
// bit q: a kernel parameter, as C's map is (the same maps in the table, in
// global memory, timed no different: bench/results/2026-12-04-h200-rs-epilogue.md).
struct RSMaps {
	TensorMap m[MAX_OWNERS];
};
struct RSTable {
	u64 dst[MAX_OWNERS];        // owner q's slot for this rank's partials, as mapped here
	u64 flag[MAX_RS_CHUNKS];    // chunk i's flag word, in its owner's region
	u32 bounds[MAX_RS_CHUNKS + 1]; // chunk i is rows [bounds[i], bounds[i+1])
	u32 expect[MAX_RS_CHUNKS];  // CTA tiles that store into chunk i
	u32 count[MAX_RS_CHUNKS];   // of those, stored so far this call
	u32 nchunks;
	// The epilogue's reduction (zero when off):
	u32 me, world, epilogue;    // at byte 1352: this rank, the team's size, 1 when on
	u32 remote;                 // 1: part[] is in the peers' memory (no L2 prefetch of it)
	u64 src_stride;             // distance between consecutive sources' flags of a chunk
	u64 wait[MAX_RS_CHUNKS];    // at byte 1376; own chunk i: source 0's flag of it in this rank's region (0: not own)
	u64 part[MAX_OWNERS];       // at byte 1888; source src's partial of this rank's first row, as mapped here
};
// The Go side writes this layout byte by byte (gpu.FusedRS.Table).
static_assert(sizeof(RSTable) == 1952, "RSTable size: see gpu.RSTableBytes");
static_assert(sizeof(u64) * (MAX_OWNERS + MAX_RS_CHUNKS) + sizeof(u32) * (MAX_RS_CHUNKS + 1 + MAX_RS_CHUNKS) == 1092,
	"RSTable count at 1092: see gpu.RSCountOffset");

// signal_tile: once this tile's rows [lo, hi) are stored (the caller has
// synchronized with every thread that stored them), count the tile against
// every chunk it touched; the count's last tile resets it for the next call
// and sets the chunk's flag. The fence is cumulative: it orders the stores
// the barrier made visible to this thread before the count and the flag.
__device__ __forceinline__ void signal_tile(const RSTable* rs_c, int lo, int hi) {
	RSTable* rs = (RSTable*)rs_c;
	asm volatile("fence.acq_rel.sys;" ::: "memory");
	for (u32 i = 0; i < rs->nchunks; i++) {
		if ((int)rs->bounds[i] >= hi || (int)rs->bounds[i + 1] <= lo) continue;
		u32 old;
		asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(old) : "l"(&rs->count[i]) : "memory");
		if (old + 1 == rs->expect[i]) {
			rs->count[i] = 0;
			asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(rs->flag[i]), "r"(1u) : "memory");
		}
	}
}
// rs_tma_tile: whether the rows [lo, hi) of a tile, none of them reduced
// here, all go to owners whose slots have maps for TMA stores (mask: the
// launch's rs_tma, RSMaps), each 16-row block to one owner (rows per rank
// a multiple of 16): a kernel that stored a block straddling two owners
// into both maps, the second at a negative row, stopped with an illegal
// instruction (rows per rank 12 and 200,
// bench/results/2026-12-04-h200-rs-epilogue.md).
__device__ __forceinline__ bool rs_tma_tile(u32 mask, int lo, int hi, int rows_per_rank) {
	if (rows_per_rank % 16 != 0) return false;
	const int qa = lo / rows_per_rank, qb = (hi - 1) / rows_per_rank;
	if (qb >= MAX_OWNERS) return false;
	const u32 want = ((1u << (qb - qa + 1)) - 1) << qa;
	return (mask & want) == want;
}
// rs_tma_signal_ready: the storers' side of a tile stored by TMA, met one
// tile late (see the epilogue): lane 0's bulk stores have written their
// rows, which the proxy fence orders before the generic-proxy operations
// after it; then the warp meets the signalling warp on the tile's barrier
// as the register path's storers do, so that its release covers the rows.
__device__ __forceinline__ void rs_tma_signal_ready(int i, int lane) {
	if (lane == 0) {
		bulk_wait_all();
		asm volatile("fence.proxy.async.global;" ::: "memory");
	}
	__syncwarp();
	asm volatile("bar.sync %0, %1;" ::"r"(SIGNAL_BAR(i)), "r"(STORERS + 32) : "memory");
}
// rs_wait waits, with acquire semantics, for every peer's flag of the own
// chunks that rows [lo, hi) touch. Returns false once timed out.
__device__ bool rs_wait(const RSTable* rs, int lo, int hi, Wait& w) {
	for (u32 i = 0; i < rs->nchunks; i++) {
		if (!rs->wait[i] || (int)rs->bounds[i] >= hi || (int)rs->bounds[i + 1] <= lo) continue;
		for (u32 src = 0; src < rs->world; src++)
			if (src != rs->me && !wait_flag(rs->wait[i] + src * rs->src_stride, w)) return false;
	}
	return true;
}

// add_peers adds to R rows of V words each (w, row after row: 2V elements
// of this rank's partial per row, row r bound for address p[r] of C) every
// peer's partial of them, in fp32, and rounds the sums back into w. A
// peer's partial holds the own rows as C does, so its elements are at p[r]
// plus the distance from C to part[src]. A peer's R loads are issued
// before any of them is used, so several rows' loads are in flight
// together.
template <int R, int V>
__device__ __forceinline__ void add_peers(const RSTable* rs, u32* w, const u32* const* p, u64 c_ptr) {
	float f[2 * R * V];
#pragma unroll
	for (int t = 0; t < R * V; t++) unpack2(w[t], f[2 * t], f[2 * t + 1]);
	for (u32 src = 0; src < rs->world; src++) {
		if (src == rs->me) continue;
		const long long d = (long long)(rs->part[src] - c_ptr);
		u32 x[R * V];
#pragma unroll
		for (int r = 0; r < R; r++) ld_v<V>((const u32*)((u64)p[r] + d), x + r * V);
#pragma unroll
		for (int t = 0; t < R * V; t++) {
			float lo, hi;
			unpack2(x[t], lo, hi);
			f[2 * t] += lo;
			f[2 * t + 1] += hi;
		}
	}
#pragma unroll
	for (int t = 0; t < R * V; t++) w[t] = pack2(f[2 * t], f[2 * t + 1]);
}

#if RS_SMEM_PEERS
// add_peers_smem is add_peers with the peers' partials in the epilogue's
// shared-memory buffer (RS_SMEM_PEERS): a[r] is row r's four words of the
// first peer there, each further peer PEER_BYTES on, in source order.
template <int R>
__device__ __forceinline__ void add_peers_smem(u32* w, const u32* a) {
	float f[8 * R];
#pragma unroll
	for (int t = 0; t < 4 * R; t++) unpack2(w[t], f[2 * t], f[2 * t + 1]);
#pragma unroll
	for (u32 pi = 0; pi < RS_SMEM_PEERS; pi++) {
		u32 x[4 * R];
#pragma unroll
		for (int r = 0; r < R; r++) lds_v4(a[r] + pi * PEER_BYTES, x + 4 * r);
#pragma unroll
		for (int t = 0; t < 4 * R; t++) {
			float lo, hi;
			unpack2(x[t], lo, hi);
			f[2 * t] += lo;
			f[2 * t + 1] += hi;
		}
	}
#pragma unroll
	for (int t = 0; t < 4 * R; t++) w[t] = pack2(f[2 * t], f[2 * t + 1]);
}
#endif

// rs_signal_warp is the reduce-scatter's signalling warp (a warp of the
// producer warpgroup): for each tile of walk (its units: a reduce-scatter
// runs without split-K, SPLIT_K 1), once the tile's storers have
// met it on SIGNAL_BAR, lane 0 signals the tile (signal_tile).
__device__ __forceinline__ void rs_signal_warp(const RSTable* rs, const Walk& walk, int m) {
	int i = 0;
	for (int t = walk.first; t < walk.units; t += walk.stride, i++) {
		int tm, tn;
		tile_at(walk, t, tm, tn);
		asm volatile("bar.sync %0, %1;" ::"r"(SIGNAL_BAR(i)), "r"(STORERS + 32) : "memory");
		if (threadIdx.x % 32 == 0) signal_tile(rs, tm * BM, min(tm * BM + BM, m));
		__syncwarp();
	}
}

#if RS_EPILOGUE
// rs_wait_warp is the epilogue reduction's waiting warp (another warp of
// the producer warpgroup; see WAIT_BAR): for each tile of walk with own
// rows, lane 0 waits for the peers' flags of its chunks, then the warp
// brings the peers' partials closer while the consumers still multiply the
// tile, and meets the tile's storers on WAIT_BAR:
//   - RS_SMEM_PEERS: into the buffer at pbuf (PEER_BYTES a peer), a bulk
//     copy per row and peer, once the storers have read the last own
//     tile's (pempty) and completing on pfull. Timed out, the phase
//     completes with nothing copied (the status word says the output is
//     wrong);
//   - otherwise into L2 (one bulk prefetch per row and peer): the
//     epilogue's loads then wait on L2, not on HBM. Partials in a peer's
//     memory are not prefetched: that a bulk prefetch of a peer's address
//     helps is not measured.
__device__ __forceinline__ void rs_wait_warp(const RSTable* rs, Wait w, const Walk& walk, int m, int n, int rows_per_rank, u32 pbuf,
	u32 pfull, u32 pempty) {
	const int me = (int)rs->me, lane = (int)(threadIdx.x % 32);
	bool waiting = true;
	int i = 0;
	int j = 0; // own tiles so far: the buffer's phase
	for (int t = walk.first; t < walk.units; t += walk.stride, i++) {
		int tm, tn;
		tile_at(walk, t, tm, tn);
		if (!own_rows(tm, m, me, rows_per_rank)) continue;
		if (waiting && lane == 0) waiting = rs_wait(rs, tm * BM, min(tm * BM + BM, m), w);
		u32 ok = waiting;
		asm volatile("shfl.sync.idx.b32 %0, %0, 0, 0x1f, 0xffffffff;" : "+r"(ok)); // lane 0's verdict
		waiting = ok != 0;
		const int lo = max(tm * BM, me * rows_per_rank), hi = min(min(tm * BM + BM, m), (me + 1) * rows_per_rank);
		const u32 bytes = (u32)min(BN, n - tn * BN) * 2;
#if RS_SMEM_PEERS
		// The bulk copies (the async proxy) read what the flags announced.
		asm volatile("fence.proxy.async.global;" ::: "memory");
		if (j > 0) mbar_wait(pempty, (u32)((j - 1) & 1));
		if (lane == 0) {
			if (waiting)
				mbar_expect_tx(pfull, (u32)(hi - lo) * bytes * RS_SMEM_PEERS);
			else
				mbar_arrive(pfull);
		}
		__syncwarp();
		if (waiting)
			for (int r = lo + lane; r < hi; r += 32)
				for (u32 src = 0, pi = 0; src < rs->world && pi < RS_SMEM_PEERS; src++) {
					if ((int)src == me) continue;
					const u64 p = rs->part[src] + ((u64)(r - me * rows_per_rank) * n + (u64)tn * BN) * 2;
					bulk_load(pbuf + pi * PEER_BYTES + (u32)(r - tm * BM) * (BN * 2), p, bytes, pfull);
					pi++;
				}
#else
		if (waiting && !rs->remote)
			for (int r = lo + lane; r < hi; r += 32)
				for (u32 src = 0; src < rs->world; src++) {
					if ((int)src == me) continue;
					const u64 p = rs->part[src] + ((u64)(r - me * rows_per_rank) * n + (u64)tn * BN) * 2;
					asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
				}
#endif
		j++;
		__syncwarp();
		asm volatile("bar.sync %0, %1;" ::"r"(WAIT_BAR(i)), "r"(STORERS + 32) : "memory");
	}
}
#endif

// store_tile_tma is the epilogue's TMA path for a consumer warp's rows of
// tile (tm, tn) (row0 + warp*16 + 64*mi, accumulators acc): each 16 x 16
// block through one of the warp's staging buffers at stage and one TMA
// store. A plain product's (RS false) go through C's map c (rows past m
// clipped); a reduce-scatter's through their owner's map (rs_tma_tile: one
// owner a block; a block wholly past m has none and is not stored), chosen
// once per 16-row block: chosen again for each store, the ping-pong tile's
// reduce-scatter took 10-13% over its plain product, 6-8% so
// (bench/results/2026-12-04-h200-rs-epilogue.md). Two instantiations, so
// that a plain product's epilogue stays the code it was.
template <bool RS>
__device__ __forceinline__ void store_tile_tma(float (&acc)[MI][BN / 2], u32 stage, int lane, int warp, int row0, int tm, int tn,
	int m, const TensorMap* c, const RSMaps& maps, int rows_per_rank) {
#pragma unroll
	for (int mi = 0; mi < MI; mi++) {
		const int g0 = tm * BM + row0 + mi * 64 + warp * 16;
		const int q = RS ? g0 / rows_per_rank : 0;
		const TensorMap* const map = RS ? &maps.m[q] : c;
		const int row = g0 - q * rows_per_rank;
#pragma unroll
		for (int b = 0; b < BN / 16; b++) {
			const u32 buf = stage + (u32)((mi * (BN / 16) + b) % EPI_BUFS) * STAGE_BYTES;
			// The store that last read this buffer is done with it.
			if (lane == 0) bulk_wait_read<EPI_BUFS - 1>();
			__syncwarp();
			stage_write(acc[mi], b, buf, lane);
			fence_async_smem();
			__syncwarp();
			if (lane == 0 && (!RS || g0 < m)) {
				tma_store(map, buf, tn * BN + 16 * b, row);
				bulk_commit();
			}
		}
	}
}

// symmtune all-reduce (sum) kernels over a cudamem Team: every rank's input
// lives in its symmetric data region, peers' regions are read directly over
// NVLink with 16-byte loads (pull), and the result goes to a local output.
// Preceded by barrier.cuh and common.cuh. Compile-time config:
//   ALGO     1 one-shot, 2 two-shot (pull), 3 two-shot (push),
//            4 the local reduce step of the copy-engine two-shot,
//            5 push two-shot overlapped per tile (two_shot_overlap),
//            6 the reduce-scatter stages of two_shot_ce_ag,
//            7 one-shot Lamport, no barrier (one_shot_lamport),
//            8 two-shot Lamport, no barrier (two_shot_lamport), both in
//              lamport.cu, which follows this file
//            (ALGO 6 takes two more arguments, ALGO 7 and 8 their own: see there)
//   THREADS  threads per block (also __launch_bounds__)
//   UNROLL   16-byte vectors per thread per rank in flight per step
// Arguments (all 8 bytes, see cudamem.Args):
//   ptrs     device table: WORLD data-region pointers, then WORLD pad pointers
//   out      this rank's output (n elements)
//   nvec     message size in 16-byte vectors
//   rank     this rank
//   scratch  byte offset of the two-shot scratch inside each data region
//            (the push two-shot's output region follows at 2*scratch)
// ALGO 3 and 5 have a second entry, allreduce_direct, which reads and
// writes a caller's tensor instead (two more arguments, n and outoff: see
// tensor_t).
//
// Every call starts with a block-wise barrier (peers' inputs are ready) and
// ends with one (nobody's next input or scratch write can overtake a peer
// that is still reading), so back-to-back calls are safe with no host sync.
// Block b's barriers meet block b of every peer; both phases of the two-shot
// walk the same tiles in the same block order, so block b's reduce-scatter
// output is exactly what block b reads in the all-gather, and the per-block
// middle barrier suffices.
#ifndef ALGO
#error ALGO must be defined
#endif
#ifndef THREADS
#error THREADS must be defined
#endif
#ifndef UNROLL
#error UNROLL must be defined
#endif

#define TILE ((u64)THREADS * UNROLL)

// PUSH_OUT: where the push two-shots (ALGO 3 and 5) leave the sum, in units
// of the scratch offset: 2, the plugin's output region past the scratch,
// unless the includer defines 0, the sum in place over the input
// (symmtune.torch, for a tensor that lives in the input region: no copy
// back).
#ifndef PUSH_OUT
#define PUSH_OUT 2
#endif

// push_tile stores the tile at `base` (of `len` vectors) of src[k] into
// dst[k] for k = 1..WORLD-1 (k = 0 is this rank's own), issuing every load
// before the first store.
__device__ __forceinline__ void push_tile(const uint4* const (&src)[WORLD], uint4* const (&dst)[WORLD], u64 base, u64 len) {
	uint4 v[UNROLL][WORLD];
#pragma unroll
	for (int u = 0; u < UNROLL; u++) {
		const u64 i = base + (u64)u * THREADS + threadIdx.x;
		if (i < len) {
#pragma unroll
			for (int k = 1; k < WORLD; k++) v[u][k] = src[k][i];
		}
	}
#pragma unroll
	for (int u = 0; u < UNROLL; u++) {
		const u64 i = base + (u64)u * THREADS + threadIdx.x;
		if (i < len) {
#pragma unroll
			for (int k = 1; k < WORLD; k++) dst[k][i] = v[u][k];
		}
	}
}

// reduce_tile sums the tile at `base` of src[0..WORLD-1] (indexed by rank:
// every rank adds in the same order and gets identical bits) and stores
// the sum into dst[0..ND-1]. Every load (all ranks, all unrolled vectors)
// is issued before the first add: UNROLL*WORLD 16-byte loads in flight per
// thread.
template <int ND>
__device__ __forceinline__ void reduce_tile(const uint4* const (&src)[WORLD], uint4* const (&dst)[ND], u64 base, u64 len) {
	uint4 v[UNROLL][WORLD];
#pragma unroll
	for (int u = 0; u < UNROLL; u++) {
		const u64 i = base + (u64)u * THREADS + threadIdx.x;
		if (i < len) {
#pragma unroll
			for (int q = 0; q < WORLD; q++) v[u][q] = src[q][i];
		}
	}
#pragma unroll
	for (int u = 0; u < UNROLL; u++) {
		const u64 i = base + (u64)u * THREADS + threadIdx.x;
		if (i < len) {
			float a[EPV];
#pragma unroll
			for (int k = 0; k < EPV; k++) a[k] = 0.f;
#pragma unroll
			for (int q = 0; q < WORLD; q++) acc(a, v[u][q]);
			const uint4 res = pack(a);
#pragma unroll
			for (int d = 0; d < ND; d++) dst[d][i] = res;
		}
	}
}

#if ALGO == 3 || ALGO == 5
// The push two-shots' second entry point, allreduce_direct (the Runner's,
// for a caller's tensor outside the symmetric region): the same exchange,
// but the input is read from the tensor and the sum written into it, so
// no copy in or out surrounds the kernel. Its arguments are allreduce's,
// `out` being the tensor, then n, the tensor's elements: any n and any
// alignment (past n the input reads +0.0 and nothing is stored); nvec is
// n padded (Padded), the same on every rank; outoff is the byte offset of
// the output region in every rank's region, where the peers' sums land (a
// runtime argument, not PUSH_OUT, so that the plugin's Verify runs the
// very code the Runner does; each passes its build's PUSH_OUT*scratch,
// since ranks that stage or sum in place push there too). It works because the push
// two-shots read their input only locally: the scatter reads my chunks
// q != r, the reduce my chunk r. The reduce stores my chunk r of the sum
// straight into the tensor (and into the peers' output regions, as in
// place); after the last barrier each block copies its own tiles of the
// other chunks, which the peers pushed into my output region, into the
// tensor (copy_out). The tiles that lie wholly inside the tensor, 16-byte
// aligned (those at base < hi, see tensor_of), run the in-place code on
// pointers into the tensor; the rest (the message's last tile, or all of
// a misaligned tensor) run the _tail helpers, vector by vector with
// load_vec/store_vec, in a loop of their own after the main one, so that
// the main loop's registers are the in-place code's. One module holds both
// entries; the in-place one, which the tuner times, keeps its own code
// (the same SASS as before the direct entry came).
//
// Why the copy-out after the last barrier is safe: block b's last barrier
// returns once block b of every peer has pushed its tiles of its own chunk
// here, the very tiles block b copies out. The next write into my output
// region is a peer's push of its next call, made after that call's middle
// barrier with my block b (ALGO 3) or after its wait for my block b's
// signal of the tile (ALGO 5). Either needs my next kernel to have
// started, so this one, copy-out included, has completed (stream order;
// the pads count signals and every call leaves them balanced, so no wait
// is met by a signal of an older call). The next call's scatter, which
// needs no barrier, writes only the scratch region, which the Runner keeps
// clear of the output region whatever the sizes (regionScratch). So sizes
// and configs may change from call to call.
struct tensor_t {
	u64 t, n;     // n elements at address t
	bool aligned; // t is 16-byte aligned
	u64 hi;       // the tiles at base < hi are full (tensor_of)
};

// tensor_of is the tensor of n elements at t for a message of nvec
// vectors. A tile (at base, vectors [base, base+TILE) of every chunk) is
// full when it lies inside the tensor in every chunk and the tensor is
// 16-byte aligned: min(base+TILE, chunk) <= lim, lim the whole vectors of
// the tensor past the first WORLD-1 chunks. That holds for every base
// below hi and for none above (it only grows with base).
__device__ __forceinline__ tensor_t tensor_of(u64 t, u64 n, u64 nvec) {
	const u64 chunk = nvec / WORLD, whole = n / EPV, before = (u64)(WORLD - 1) * chunk;
	const bool aligned = (t & 15) == 0;
	const u64 lim = aligned && whole > before ? whole - before : 0;
	const u64 hi = chunk <= lim ? chunk : (lim >= TILE ? lim - TILE + 1 : 0);
	return tensor_t{t, n, aligned, hi};
}

// scatter_tail scatters a tile that is not full: my chunks q != r of the
// tensor into my slot of rank q's scratch (slot[k], q = (r+k)%WORLD).
__device__ __forceinline__ void scatter_tail(const tensor_t& x, uint4* const (&slot)[WORLD], int r, u64 chunk, u64 base) {
#pragma unroll 1
	for (int u = 0; u < UNROLL; u++) {
		const u64 i = base + (u64)u * THREADS + threadIdx.x;
		if (i < chunk) {
#pragma unroll
			for (int k = 1; k < WORLD; k++) slot[k][i] = load_vec(x.t, x.n, (u64)((r + k) % WORLD) * chunk + i, x.aligned);
		}
	}
}

// reduce_tail reduces a tile that is not full: my chunk r from the tensor
// and my scratch slots (rank q's at myscr + q*chunk), summed in rank order
// as the in-place code does (the same bits), into the tensor and chunk r
// of every peer's output region (dstk[k], k >= 1).
__device__ __forceinline__ void reduce_tail(const tensor_t& x, const uint4* myscr, uint4* const (&dstk)[WORLD], int r, u64 chunk, u64 base) {
#pragma unroll 1
	for (int u = 0; u < UNROLL; u++) {
		const u64 i = base + (u64)u * THREADS + threadIdx.x;
		if (i < chunk) {
			float a[EPV];
#pragma unroll
			for (int k = 0; k < EPV; k++) a[k] = 0.f;
#pragma unroll
			for (int q = 0; q < WORLD; q++) acc(a, q == r ? load_vec(x.t, x.n, (u64)r * chunk + i, x.aligned) : myscr[(u64)q * chunk + i]);
			const uint4 res = pack(a);
			store_vec(x.t, x.n, (u64)r * chunk + i, res, x.aligned);
#pragma unroll
			for (int k = 1; k < WORLD; k++) dstk[k][i] = res;
		}
	}
}

// copy_out ends a direct call, after its last barrier, for this block's
// tiles: the other ranks' chunks of the sum, which they pushed into my
// output region, into the tensor. Full tiles with push_tile; then the
// rest vector by vector, nothing stored past n.
__device__ __forceinline__ void copy_out(const u64* ptrs, const tensor_t& x, int r, u64 nvec, u64 outoff) {
	const u64 chunk = nvec / WORLD;
	const u64 stride = (u64)gridDim.x * TILE;
	const uint4* mine = (const uint4*)(ptrs[r] + outoff);
	const uint4* src[WORLD]; // src[k]: chunk (r+k)%WORLD of my output region
	uint4* dst[WORLD];       // dst[k]: the same chunk of the tensor (used only where full)
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const u64 q = (u64)((r + k) % WORLD);
		src[k] = mine + q * chunk;
		dst[k] = (uint4*)x.t + q * chunk;
	}
	u64 base = (u64)blockIdx.x * TILE;
	for (; base < x.hi; base += stride) push_tile(src, dst, base, chunk);
	for (; base < chunk; base += stride) {
#pragma unroll 1
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
#pragma unroll
			for (int q = 0; q < WORLD; q++) {
				const u64 j = (u64)q * chunk + i;
				if (q != r && i < chunk && j * EPV < x.n) store_vec(x.t, x.n, j, mine[j], x.aligned);
			}
		}
	}
}
#endif

#if ALGO == 1
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const uint4* src[WORLD];
#pragma unroll
	for (int q = 0; q < WORLD; q++) src[q] = (const uint4*)ptrs[q];
	uint4* const dst[1] = {(uint4*)out};
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	for (u64 base = (u64)blockIdx.x * TILE; base < nvec; base += (u64)gridDim.x * TILE) reduce_tile<1>(src, dst, base, nvec);
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
}
#elif ALGO == 2
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const u64 chunk = nvec / WORLD; // Validate guarantees nvec % WORLD == 0
	// red[k]/outk[k]: rank q = (r+k)%WORLD's reduced chunk in its scratch,
	// and where it goes in the output. Rotating by rank spreads the
	// all-gather's reads over all links at once. part[q]: rank q's input
	// of my chunk.
	const uint4* red[WORLD];
	uint4* outk[WORLD];
	const uint4* part[WORLD];
	uint4* dst = (uint4*)out;
	const u64 lo = (u64)r * chunk;
#pragma unroll
	for (int q = 0; q < WORLD; q++) part[q] = (const uint4*)ptrs[q] + lo;
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const int q = (r + k) % WORLD;
		red[k] = (const uint4*)(ptrs[q] + scratch) + (u64)q * chunk;
		outk[k] = dst + (u64)q * chunk;
	}
	uint4* const sums[2] = {(uint4*)(ptrs[r] + scratch) + lo, dst + lo};

	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	// Reduce-scatter: this rank sums its own chunk from every rank.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) reduce_tile<2>(part, sums, base, chunk);
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	// All-gather: pull every other rank's reduced chunk from its scratch.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) push_tile(red, outk, base, chunk);
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
}
#elif ALGO == 3
// Push two-shot: every remote byte moves as a store, which NVLink carries
// with less overhead than a load's request/response pair.
//   scatter  rank r stores its input's chunk q into slot r of rank q's
//            scratch (q != r);
//   barrier  (per block: block b's tiles of every slot are in place);
//   reduce   rank r sums its own chunk from its input and its scratch slots
//            (local HBM), and stores the result into chunk r of every
//            rank's output region, its own included;
//   barrier  (every rank's chunks have landed in this rank's output).
// No barrier is needed first: nobody reads this rank's input, and the
// scratch slots it writes were released by the previous call's last
// barrier. The output is the symmetric region at PUSH_OUT*scratch, not `out`
// (see PUSH_OUT above). In place (PUSH_OUT 0) is safe: block b writes chunk
// r of rank q's input only after the middle barrier, which block b of rank
// q passes after its scatter read those same tiles of that chunk, and rank
// q reads only its own chunk q after the barrier. allreduce_direct (see
// tensor_t above): my input and my own copy of the sum are the tensor's.
// (Written out rather than with push_tile/reduce_tile: this is the config
// that wins today, and the helpers' code differs; ALGO 5 is it overlapped.)
template <bool DIRECT>
__device__ __forceinline__ void two_shot_push(const u64* ptrs, const tensor_t& x, u64 nvec, int r, u64 scratch, u64 outoff) {
	const u64 chunk = nvec / WORLD;
	const uint4* in = DIRECT ? (const uint4*)x.t : (const uint4*)ptrs[r];
	const uint4* myscr = (const uint4*)(ptrs[r] + scratch);
	uint4* slot[WORLD]; // slot[k]: my slot in rank (r+k)%WORLD's scratch
	uint4* dstk[WORLD]; // dstk[k]: chunk r of rank (r+k)%WORLD's output
	const uint4* srck[WORLD]; // srck[k]: my input's chunk (r+k)%WORLD
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const int q = (r + k) % WORLD;
		slot[k] = (uint4*)(ptrs[q] + scratch) + (u64)r * chunk;
		dstk[k] = DIRECT && k == 0 ? (uint4*)x.t + (u64)r * chunk : (uint4*)(ptrs[q] + outoff) + (u64)r * chunk;
		srck[k] = in + (u64)q * chunk;
	}
	const u64 hi = DIRECT ? x.hi : chunk; // the full tiles' end (tensor_of)
	u64 base = (u64)blockIdx.x * TILE;
	for (; base < hi; base += (u64)gridDim.x * TILE) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int k = 1; k < WORLD; k++) v[u][k] = srck[k][i];
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int k = 1; k < WORLD; k++) slot[k][i] = v[u][k];
			}
		}
	}
	if (DIRECT)
		for (; base < chunk; base += (u64)gridDim.x * TILE) scatter_tail(x, slot, r, chunk, base);
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	for (base = (u64)blockIdx.x * TILE; base < hi; base += (u64)gridDim.x * TILE) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) v[u][q] = q == r ? in[(u64)r * chunk + i] : myscr[(u64)q * chunk + i];
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
				float a[EPV];
#pragma unroll
				for (int k = 0; k < EPV; k++) a[k] = 0.f;
#pragma unroll
				for (int q = 0; q < WORLD; q++) acc(a, v[u][q]); // rank order: identical bits everywhere
				const uint4 res = pack(a);
#pragma unroll
				for (int k = 0; k < WORLD; k++) dstk[k][i] = res;
			}
		}
	}
	if (DIRECT)
		for (; base < chunk; base += (u64)gridDim.x * TILE) reduce_tail(x, myscr, dstk, r, chunk, base);
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
}
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	two_shot_push<false>(ptrs, tensor_t{0, 0, false, 0}, nvec, (int)rank, scratch, PUSH_OUT * scratch);
}
extern "C" __global__ void __launch_bounds__(THREADS) allreduce_direct(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch, u64 n, u64 outoff) {
	const tensor_t x = tensor_of(out, n, nvec);
	two_shot_push<true>(ptrs, x, nvec, (int)rank, scratch, outoff);
	copy_out(ptrs, x, (int)rank, nvec, outoff);
}
#elif ALGO == 4
// Copy-engine two-shot, reduce step (the Go side moves the data with
// cuMemcpyDtoDAsync on one stream per peer and runs the team barrier): sum
// this rank's chunk from its input and its scratch slots, which the peers'
// copy engines filled, into chunk r of its output region. Local memory only,
// no barrier.
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const u64 chunk = nvec / WORLD;
	const uint4* src[WORLD];
#pragma unroll
	for (int q = 0; q < WORLD; q++)
		src[q] = q == r ? (const uint4*)ptrs[r] + (u64)r * chunk : (const uint4*)(ptrs[r] + scratch) + (u64)q * chunk;
	uint4* const dst[1] = {(uint4*)(ptrs[r] + 2 * scratch) + (u64)r * chunk};
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) reduce_tile<1>(src, dst, base, chunk);
}
#elif ALGO == 5
// Push two-shot overlapped per tile: the same traffic as ALGO 3, but the
// reduce of a tile waits only for that tile's scatter from every peer, not
// for the block's whole share. Block b walks its tiles in order; it
// scatters tile j+1 and signals it (symm_block_signal on pad slot b: a
// per-tile "ready" flag, release at system scope), then waits for every
// peer's signal of tile j (acquire) and reduces and pushes tile j. The
// scatter of the next tile is in flight while the block waits, so the
// phase switch costs no idle round trip. Signals and waits on slot b pair
// up in order on every rank (each rank's block b makes the same sequence),
// and the last barrier leaves every pad at 0 as ALGO 3 does. In place
// (PUSH_OUT 0) is safe as in ALGO 3, tile by tile: rank q's reduced tile j
// of chunk q lands in my input only after q has my signal that I scattered
// tile j (of every chunk), and my reduce reads my own chunk r only.
// allreduce_direct (see tensor_t above): my input and my own copy of the
// sum are the tensor's. Its copy-out is safe for the same reason as ALGO
// 3's: a peer's next push into my output region waits for my block b's
// signal of that call's tile, which my next kernel sends.
template <bool DIRECT>
__device__ __forceinline__ void two_shot_overlap(const u64* ptrs, const tensor_t& x, u64 nvec, int r, u64 scratch, u64 outoff) {
	const int b = blockIdx.x;
	const u64 chunk = nvec / WORLD;
	const uint4* in = DIRECT ? (const uint4*)x.t : (const uint4*)ptrs[r];
	const uint4* myscr = (const uint4*)(ptrs[r] + scratch);
	uint4* slot[WORLD];       // slot[k]: my slot in rank (r+k)%WORLD's scratch
	uint4* dstk[WORLD];       // dstk[k]: chunk r of rank (r+k)%WORLD's output
	const uint4* srck[WORLD]; // srck[k]: my input's chunk (r+k)%WORLD
	const uint4* red[WORLD];  // red[q]: rank q's contribution to my chunk
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const int q = (r + k) % WORLD;
		slot[k] = (uint4*)(ptrs[q] + scratch) + (u64)r * chunk;
		dstk[k] = DIRECT && k == 0 ? (uint4*)x.t + (u64)r * chunk : (uint4*)(ptrs[q] + outoff) + (u64)r * chunk;
		srck[k] = in + (u64)q * chunk;
	}
#pragma unroll
	for (int q = 0; q < WORLD; q++) red[q] = q == r ? in + (u64)r * chunk : myscr + (u64)q * chunk;
	const u64 stride = (u64)gridDim.x * TILE;
	u64 base = (u64)b * TILE;
	if (base < chunk) {
		if (DIRECT && base >= x.hi)
			scatter_tail(x, slot, r, chunk, base);
		else
			push_tile(srck, slot, base, chunk);
		symm_block_signal(ptrs, r, WORLD, b);
	}
	for (; base < chunk; base += stride) {
		if (base + stride < chunk) {
			if (DIRECT && base + stride >= x.hi)
				scatter_tail(x, slot, r, chunk, base + stride);
			else
				push_tile(srck, slot, base + stride, chunk);
			symm_block_signal(ptrs, r, WORLD, b);
		}
		symm_block_wait(ptrs, r, WORLD, b); // tile `base` of every peer has landed
		if (DIRECT && base >= x.hi)
			reduce_tail(x, myscr, dstk, r, chunk, base);
		else
			reduce_tile<WORLD>(red, dstk, base, chunk);
	}
	symm_block_barrier(ptrs, r, WORLD, b);
}
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	two_shot_overlap<false>(ptrs, tensor_t{0, 0, false, 0}, nvec, (int)rank, scratch, PUSH_OUT * scratch);
}
extern "C" __global__ void __launch_bounds__(THREADS) allreduce_direct(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch, u64 n, u64 outoff) {
	const tensor_t x = tensor_of(out, n, nvec);
	two_shot_overlap<true>(ptrs, x, nvec, (int)rank, scratch, outoff);
	copy_out(ptrs, x, (int)rank, nvec, outoff);
}
#elif ALGO == 6
// The SM half of two_shot_ce_ag: the reduce-scatter of `stages` pieces of
// the message, one after the other, while the copy engines all-gather the
// pieces already reduced (the Go side: one stream per peer waits for a
// piece's flag with cuStreamWaitValue32, then copies this rank's reduced
// shard of the piece into the peer's output region).
//   piece p: units = nvec/WORLD; its shards are [units*p/stages,
//            units*(p+1)/stages) of every rank's share (L vectors), i.e.
//            vectors [off, off + WORLD*L) of the message, off = WORLD*that
//            start, rank q's shard at off + q*L (stagePlan in Go);
//   scatter  my input's shard q of the piece into slot r of rank q's
//            scratch (at the same offset), then the per-block barrier;
//   reduce   my shard from my input and my scratch slots (local HBM) into
//            my output region (the symmetric region at 2*scratch);
//   flag     each block adds 1 to flags[p] (release at system scope) once
//            its part of the piece is written: the copies of piece p start
//            when flags[p] reaches gridDim.x.
// Extra arguments: flags (this rank's stage counters, zeroed by the Go side
// before the launch) and stages. The host ends the call with the team
// barrier after the copies; no barrier is needed first (as ALGO 3).
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch, u64 flags, u64 stages) {
	const int r = (int)rank;
	const int b = blockIdx.x;
	const u64 units = nvec / WORLD;
	const uint4* in = (const uint4*)ptrs[r];
	const uint4* myscr = (const uint4*)(ptrs[r] + scratch);
	uint4* myout = (uint4*)(ptrs[r] + 2 * scratch);
	for (u64 p = 0; p < stages; p++) {
		const u64 lo = units * p / stages;
		const u64 len = units * (p + 1) / stages - lo;
		const u64 off = (u64)WORLD * lo;
		uint4* slot[WORLD];
		const uint4* srck[WORLD];
		const uint4* red[WORLD];
		uint4* const dst[1] = {myout + off + (u64)r * len};
#pragma unroll
		for (int k = 0; k < WORLD; k++) {
			const int q = (r + k) % WORLD;
			slot[k] = (uint4*)(ptrs[q] + scratch) + off + (u64)r * len;
			srck[k] = in + off + (u64)q * len;
		}
#pragma unroll
		for (int q = 0; q < WORLD; q++) red[q] = q == r ? in + off + (u64)r * len : myscr + off + (u64)q * len;
		for (u64 base = (u64)b * TILE; base < len; base += (u64)gridDim.x * TILE) push_tile(srck, slot, base, len);
		symm_block_barrier(ptrs, r, WORLD, b);
		for (u64 base = (u64)b * TILE; base < len; base += (u64)gridDim.x * TILE) reduce_tile<1>(red, dst, base, len);
		__syncthreads();
		if (threadIdx.x == 0) symm_signal((u32*)flags + p);
	}
}
#elif ALGO != 7 && ALGO != 8 // the Lamport algorithms: lamport.cu, compiled after this file
#error unknown ALGO
#endif

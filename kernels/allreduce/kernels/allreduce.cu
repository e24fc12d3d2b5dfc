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


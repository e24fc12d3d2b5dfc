// symmtune all-reduce (sum) kernels over a cudamem Team: every rank's input
// lives in its symmetric data region, peers' regions are read directly over
// NVLink with 16-byte loads (pull), and the result goes to a local output.
// Preceded by barrier.cuh and common.cuh. Compile-time config:
//   ALGO     1 one-shot, 2 two-shot (pull), 3 two-shot (push),
//            4 the local reduce step of the copy-engine two-shot
//   THREADS  threads per block (also __launch_bounds__)
//   UNROLL   16-byte vectors per thread per rank in flight per step
// Arguments (all 8 bytes, see cudamem.Args):
//   ptrs     device table: WORLD data-region pointers, then WORLD pad pointers
//   out      this rank's output (n elements)
//   nvec     message size in 16-byte vectors
//   rank     this rank
//   scratch  byte offset of the two-shot scratch inside each data region
//            (the push two-shot's output region follows at 2*scratch)
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

#if ALGO == 1
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const uint4* src[WORLD];
#pragma unroll
	for (int q = 0; q < WORLD; q++) src[q] = (const uint4*)ptrs[q];
	uint4* dst = (uint4*)out;
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	for (u64 base = (u64)blockIdx.x * TILE; base < nvec; base += (u64)gridDim.x * TILE) {
		uint4 v[UNROLL][WORLD];
		// Issue every load (all ranks, all unrolled vectors) before the
		// first add, so UNROLL*WORLD 16-byte loads are in flight per thread.
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < nvec) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) v[u][q] = src[q][i];
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < nvec) {
				// Sum in rank order on every rank: all ranks get identical bits.
				float a[EPV];
#pragma unroll
				for (int k = 0; k < EPV; k++) a[k] = 0.f;
#pragma unroll
				for (int q = 0; q < WORLD; q++) acc(a, v[u][q]);
				dst[i] = pack(a);
			}
		}
	}
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
}
#elif ALGO == 2
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const u64 chunk = nvec / WORLD; // Validate guarantees nvec % WORLD == 0
	const uint4* src[WORLD];
	// red[k]/outk[k]: rank q = (r+k)%WORLD's reduced chunk in its scratch,
	// and where it goes in the output. Rotating by rank spreads the
	// all-gather's reads over all links at once.
	const uint4* red[WORLD];
	uint4* outk[WORLD];
	uint4* dst = (uint4*)out;
#pragma unroll
	for (int q = 0; q < WORLD; q++) src[q] = (const uint4*)ptrs[q];
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const int q = (r + k) % WORLD;
		red[k] = (const uint4*)(ptrs[q] + scratch) + (u64)q * chunk;
		outk[k] = dst + (u64)q * chunk;
	}
	uint4* mine = (uint4*)(ptrs[r] + scratch);
	const u64 lo = (u64)r * chunk;

	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	// Reduce-scatter: this rank sums its own chunk from every rank.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) v[u][q] = src[q][lo + i];
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
				for (int q = 0; q < WORLD; q++) acc(a, v[u][q]);
				const uint4 s = pack(a);
				mine[lo + i] = s;
				dst[lo + i] = s;
			}
		}
	}
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	// All-gather: pull every other rank's reduced chunk from its scratch.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int k = 1; k < WORLD; k++) v[u][k] = red[k][i];
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int k = 1; k < WORLD; k++) outk[k][i] = v[u][k];
			}
		}
	}
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
// barrier. The output is the symmetric region at PUSH_OUT*scratch, not `out`:
// 2 (the plugin's layout, past the scratch) unless the includer defines
// PUSH_OUT 0, the sum in place over the input (symmtune.torch, for a tensor
// that lives in the input region: no copy back). In place is safe: block b
// writes chunk r of rank q's input only after the middle barrier, which
// block b of rank q passes after its scatter read those same tiles of that
// chunk, and rank q reads only its own chunk q after the barrier.
#ifndef PUSH_OUT
#define PUSH_OUT 2
#endif
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const u64 chunk = nvec / WORLD;
	const uint4* in = (const uint4*)ptrs[r];
	const uint4* myscr = (const uint4*)(ptrs[r] + scratch);
	uint4* slot[WORLD]; // slot[k]: my slot in rank (r+k)%WORLD's scratch
	uint4* dstk[WORLD]; // dstk[k]: chunk r of rank (r+k)%WORLD's output
	const uint4* srck[WORLD]; // srck[k]: my input's chunk (r+k)%WORLD
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const int q = (r + k) % WORLD;
		slot[k] = (uint4*)(ptrs[q] + scratch) + (u64)r * chunk;
		dstk[k] = (uint4*)(ptrs[q] + PUSH_OUT * scratch) + (u64)r * chunk;
		srck[k] = in + (u64)q * chunk;
	}
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) {
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
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) {
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
	symm_block_barrier(ptrs, r, WORLD, blockIdx.x);
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
	uint4* dst = (uint4*)(ptrs[r] + 2 * scratch) + (u64)r * chunk;
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) v[u][q] = src[q][i];
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
				for (int q = 0; q < WORLD; q++) acc(a, v[u][q]);
				dst[i] = pack(a);
			}
		}
	}
}
#else
#error unknown ALGO
#endif

// symmtune all-reduce (sum) kernels over a cudamem Team: every rank's input
// lives in its symmetric data region, peers' regions are read directly over
// NVLink with 16-byte loads (pull), and the result goes to a local output.
// Preceded by barrier.cuh and common.cuh. Compile-time config:
//   ALGO     1 one-shot, 2 two-shot (pull), 3 two-shot (push),
//            4 the local reduce step of the copy-engine two-shot,
//            5 push two-shot overlapped per tile (two_shot_overlap),
//            6 the reduce-scatter stages of two_shot_ce_ag,
//            7 one-shot Lamport, no barrier (one_shot_lamport)
//            (ALGO 6 takes two more arguments, ALGO 7 its own: see there)
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
// q reads only its own chunk q after the barrier.
// (Written out rather than with push_tile/reduce_tile: this is the config
// that wins today, and the helpers' code differs; ALGO 5 is it overlapped.)
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
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const int b = blockIdx.x;
	const u64 chunk = nvec / WORLD;
	const uint4* in = (const uint4*)ptrs[r];
	const uint4* myscr = (const uint4*)(ptrs[r] + scratch);
	uint4* slot[WORLD];       // slot[k]: my slot in rank (r+k)%WORLD's scratch
	uint4* dstk[WORLD];       // dstk[k]: chunk r of rank (r+k)%WORLD's output
	const uint4* srck[WORLD]; // srck[k]: my input's chunk (r+k)%WORLD
	const uint4* red[WORLD];  // red[q]: rank q's contribution to my chunk
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const int q = (r + k) % WORLD;
		slot[k] = (uint4*)(ptrs[q] + scratch) + (u64)r * chunk;
		dstk[k] = (uint4*)(ptrs[q] + PUSH_OUT * scratch) + (u64)r * chunk;
		srck[k] = in + (u64)q * chunk;
	}
#pragma unroll
	for (int q = 0; q < WORLD; q++) red[q] = q == r ? in + (u64)r * chunk : myscr + (u64)q * chunk;
	const u64 stride = (u64)gridDim.x * TILE;
	u64 base = (u64)b * TILE;
	if (base < chunk) {
		push_tile(srck, slot, base, chunk);
		symm_block_signal(ptrs, r, WORLD, b);
	}
	for (; base < chunk; base += stride) {
		if (base + stride < chunk) {
			push_tile(srck, slot, base + stride, chunk);
			symm_block_signal(ptrs, r, WORLD, b);
		}
		symm_block_wait(ptrs, r, WORLD, b); // tile `base` of every peer has landed
		reduce_tile<WORLD>(red, dstk, base, chunk);
	}
	symm_block_barrier(ptrs, r, WORLD, b);
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
#elif ALGO == 7
// One-shot Lamport all-reduce (one_shot_lamport): no barrier; the data is
// its own flag. Each rank's region holds, at byte offset `area`, a header
// (LAMPORT_HDR bytes: u32 cur, the call counter mod 3; u32 the blocks
// arrived in this call; u64 prev, the previous call's size in vectors)
// and three buffers of WORLD slots of `slot` bytes; slot q of buffer b is
// rank q's input in a call that uses b. Reset (the Go side, on every rank
// before any rank's first call): header zero, buffers all sentinel, -0.0
// in every element (a value the pushed data never holds, see lp_fix).
//   push   read my input `in` (n elements: any size, any alignment), turn
//          -0.0 into +0.0, store it into slot r of buffer cur on every
//          rank, mine included (16-byte stores over NVLink);
//   clear  fill my buffer (cur+2)%3 with the sentinel (prev vectors of
//          every slot: what the previous call used);
//   reduce for each vector of each slot of my buffer cur, poll until no
//          element is the sentinel, sum the slots in rank order (identical
//          bits on every rank) into `out`;
//   count  the last block to finish advances cur and records prev = nvec.
// Arguments: ptrs, in, out (this rank's tensors: out may be in; a thread
// reads in[i] before it writes out[i], and nobody else reads in), n
// elements, rank, area, slot (bytes, a multiple of 16 holding nvec
// vectors).
//
// Why clearing (cur+2)%3, i.e. the previous call's buffer, is safe: call
// k-1 is over here, so every peer's call-(k-1) data reached my buffer
// (k-1)%3 and was read. The next write into it is a peer's call k+2 (the
// same buffer, mod 3), and a peer starts call k+2 only after finishing call
// k+1, which needs my call-(k+1) data, which I store only after this
// kernel (and its clear) has completed. With two buffers the next writer
// would be a peer's call k+1, which may already be running (it needed only
// my call-k data, pushed before this clear): hence three. Symmetrically,
// my call-k stores into a peer's buffer k%3 land after that peer cleared it
// in its call k-2: I need its call-(k-1) data to get here, which it pushed
// only after that kernel completed.
//
// Why every block of a call reads the same cur: thread 0 of each block
// reads the header once, at its start, and arrives (an acq_rel atomic, so
// the read is ordered before it) only when done; the block whose arrival
// completes the count is the last, after every block of the call has read,
// and only it writes the header, for the next kernel (stream order). Every
// rank starts from the same reset and advances once per call, so all
// ranks' calls agree on cur as well.
//
// Memory ordering: within a call, no order between stores is needed,
// because the poll checks every element (a 16-bit or 32-bit word) for the
// sentinel: a 16-byte store that a peer observes torn just reads as not
// yet arrived, and each element is written once per use of the buffer.
// Pushes are st.relaxed.sys and polls ld.relaxed.sys (strong, system scope:
// they pair as morally strong accesses, and a poll is never served from a
// stale L1 line); each push is still one v4 store, one NVLink write. Across
// calls, the order comes from kernel boundaries: my clear completes with
// its kernel, in my own L2 (where peers' stores to my memory land too),
// before my next push, which every peer must see before it can reach the
// call that writes the cleared buffer again (the argument above).
#define LAMPORT_HDR 256
#define LAMPORT_SPIN_CHECK 1023u

#if EPV == 8
#define LAMPORT_SENTINEL 0x80008000u
// lp_sent: does word w hold the sentinel (-0.0) in either half?
__device__ __forceinline__ bool lp_sent(u32 w) { return (w & 0xffffu) == 0x8000u || (w >> 16) == 0x8000u; }
// lp_fix turns -0.0 into +0.0 in both halves (the sum is the same: every
// accumulation starts at +0.0, and -0.0 + x == +0.0 + x for every x but -0.0).
__device__ __forceinline__ u32 lp_fix(u32 w) {
	if ((w & 0xffffu) == 0x8000u) w &= 0xffff0000u;
	if ((w >> 16) == 0x8000u) w &= 0xffffu;
	return w;
}
#else
#define LAMPORT_SENTINEL 0x80000000u
__device__ __forceinline__ bool lp_sent(u32 w) { return w == 0x80000000u; }
__device__ __forceinline__ u32 lp_fix(u32 w) { return w == 0x80000000u ? 0u : w; }
#endif

__device__ __forceinline__ bool lp_arrived(uint4 v) { return !(lp_sent(v.x) || lp_sent(v.y) || lp_sent(v.z) || lp_sent(v.w)); }

__device__ __forceinline__ void lp_push(uint4* p, uint4 v) {
	asm volatile("st.relaxed.sys.global.v4.b32 [%0], {%1, %2, %3, %4};" : : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
__device__ __forceinline__ uint4 lp_poll(const uint4* p) {
	uint4 v;
	asm volatile("ld.relaxed.sys.global.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
	return v;
}

// lp_load_in is vector i of the n elements at in, elements past n +0.0: a
// 16-byte load where the tensor allows one, else element by element.
__device__ __forceinline__ uint4 lp_load_in(u64 in, u64 n, u64 i, bool aligned) {
	const u64 e0 = i * EPV;
	if (aligned && e0 + EPV <= n) return ((const uint4*)in)[i];
	u32 w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
	for (int j = 0; j < EPV; j++) {
		if (e0 + j < n) {
#if EPV == 8
			w[j / 2] |= (u32)((const unsigned short*)in)[e0 + j] << (16 * (j & 1));
#else
			w[j] = ((const u32*)in)[e0 + j];
#endif
		}
	}
	return make_uint4(w[0], w[1], w[2], w[3]);
}

// lp_store_out writes vector i of the sum, never past element n.
__device__ __forceinline__ void lp_store_out(u64 out, u64 n, u64 i, uint4 v, bool aligned) {
	const u64 e0 = i * EPV;
	if (aligned && e0 + EPV <= n) {
		((uint4*)out)[i] = v;
		return;
	}
	const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int j = 0; j < EPV; j++) {
		if (e0 + j < n) {
#if EPV == 8
			((unsigned short*)out)[e0 + j] = (unsigned short)(w[j / 2] >> (16 * (j & 1)));
#else
			((u32*)out)[e0 + j] = w[j];
#endif
		}
	}
}

// lp_wait polls p until v (its last value) has no sentinel. A wait that
// lasts SYMM_TIMEOUT_NS, or finds the timeout flag set by another wait,
// sets the flag (the barrier's: Team.CheckTimeout reads it) and gives up,
// and `dead` makes this thread's later waits give up at once: a dead peer
// cannot hang the GPU forever.
__device__ __forceinline__ uint4 lp_wait(const uint4* p, uint4 v, u32* flag, bool& dead) {
	u64 start = 0;
	for (u32 it = 0; !dead && !lp_arrived(v); it++) {
		if ((it & LAMPORT_SPIN_CHECK) == LAMPORT_SPIN_CHECK) {
			const u64 now = symm_now();
			if (start == 0) {
				start = now;
			} else if (now - start > SYMM_TIMEOUT_NS || symm_load_acquire(flag) != 0) {
				atomicExch(flag, 1u);
				dead = true;
			}
		}
		v = lp_poll(p);
	}
	return v;
}

extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 in, u64 out, u64 n, u64 rank, u64 area, u64 slot) {
	const int r = (int)rank;
	u32* const hdr = (u32*)(ptrs[r] + area);
	__shared__ u32 s_cur;
	__shared__ u64 s_prev;
	if (threadIdx.x == 0) {
		s_cur = *(volatile u32*)hdr;
		s_prev = *(volatile u64*)(hdr + 2);
	}
	__syncthreads();
	const u32 cur = s_cur;
	const u64 prev = s_prev;
	const u64 nvec = (n + EPV - 1) / EPV;
	const u64 svec = slot / 16; // vectors per slot
	const bool aligned = ((in | out) & 15) == 0;
	uint4* dst[WORLD];        // dst[k]: my slot in rank (r+k)%WORLD's buffer cur
	const uint4* mine[WORLD]; // mine[q]: rank q's slot in my buffer cur
#pragma unroll
	for (int k = 0; k < WORLD; k++) {
		const int q = (r + k) % WORLD;
		dst[k] = (uint4*)(ptrs[q] + area + LAMPORT_HDR) + ((u64)cur * WORLD + r) * svec;
		mine[k] = (const uint4*)(ptrs[r] + area + LAMPORT_HDR) + ((u64)cur * WORLD + k) * svec;
	}
	const u64 stride = (u64)gridDim.x * TILE;
	// Push: every load of the tile first, then every store.
	for (u64 base = (u64)blockIdx.x * TILE; base < nvec; base += stride) {
		uint4 v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < nvec) {
				const uint4 x = lp_load_in(in, n, i, aligned);
				v[u] = make_uint4(lp_fix(x.x), lp_fix(x.y), lp_fix(x.z), lp_fix(x.w));
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < nvec) {
#pragma unroll
				for (int k = 0; k < WORLD; k++) lp_push(dst[k] + i, v[u]);
			}
		}
	}
	// Clear the previous call's buffer (see above), while the peers' data
	// is on its way.
	{
		uint4* old = (uint4*)(ptrs[r] + area + LAMPORT_HDR) + (u64)((cur + 2) % 3) * WORLD * svec;
		const uint4 s = make_uint4(LAMPORT_SENTINEL, LAMPORT_SENTINEL, LAMPORT_SENTINEL, LAMPORT_SENTINEL);
		for (int q = 0; q < WORLD; q++)
			for (u64 i = (u64)blockIdx.x * THREADS + threadIdx.x; i < prev; i += (u64)gridDim.x * THREADS) old[q * svec + i] = s;
	}
	// Reduce: every slot's poll of the tile issued first, then the waits.
	u32* const flag = (u32*)ptrs[WORLD + r] + SYMM_PAD_SLOTS * SYMM_MAX_WORLD;
	bool dead = false;
	for (u64 base = (u64)blockIdx.x * TILE; base < nvec; base += stride) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < nvec) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) v[u][q] = lp_poll(mine[q] + i);
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < nvec) {
				float a[EPV];
#pragma unroll
				for (int e = 0; e < EPV; e++) a[e] = 0.f;
#pragma unroll
				for (int q = 0; q < WORLD; q++) acc(a, lp_wait(mine[q] + i, v[u][q], flag, dead)); // rank order
				lp_store_out(out, n, i, pack(a), aligned);
			}
		}
	}
	// Count: thread 0's header read is ordered before its arrival (release);
	// the last arrival (acquire) sees every block's.
	if (threadIdx.x == 0) {
		u32 before;
		asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(hdr + 1) : "memory");
		if (before == gridDim.x - 1) {
			*(volatile u64*)(hdr + 2) = nvec;
			*(volatile u32*)(hdr + 1) = 0u;
			*(volatile u32*)hdr = (cur + 1) % 3;
		}
	}
}
#else
#error unknown ALGO
#endif

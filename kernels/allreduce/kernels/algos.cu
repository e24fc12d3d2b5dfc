#if ALGO == 1
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 out, u64 nvec, u64 rank, u64 scratch) {
	const int r = (int)rank;
	const uint4* src[WORLD];
#pragma unroll
	for (int q = 0; q < WORLD; q++) src[q] = (const uint4*)ptrs[q];
	uint4* const dst[1] = {(uint4*)out};
	if (!symm_block_barrier(ptrs, r, WORLD, blockIdx.x)) return; // poisoned: see barrier.cuh
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

	if (!symm_block_barrier(ptrs, r, WORLD, blockIdx.x)) return;
	// Reduce-scatter: this rank sums its own chunk from every rank.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += (u64)gridDim.x * TILE) reduce_tile<2>(part, sums, base, chunk);
	if (!symm_block_barrier(ptrs, r, WORLD, blockIdx.x)) return;
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
	if (!symm_block_barrier(ptrs, r, WORLD, blockIdx.x)) return;
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
		if (!symm_block_wait(ptrs, r, WORLD, b)) return; // tile `base` of every peer has landed
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
	bool ok = true;
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
		// Poisoned (barrier.cuh): no more work or waits, but the flags
		// still count, or the copy streams would wait for them forever.
		if (ok) {
			for (u64 base = (u64)b * TILE; base < len; base += (u64)gridDim.x * TILE) push_tile(srck, slot, base, len);
			ok = symm_block_barrier(ptrs, r, WORLD, b);
		}
		if (ok)
			for (u64 base = (u64)b * TILE; base < len; base += (u64)gridDim.x * TILE) reduce_tile<1>(red, dst, base, len);
		__syncthreads();
		if (threadIdx.x == 0) symm_signal((u32*)flags + p);
	}
}
#elif ALGO != 7 && ALGO != 8 // the Lamport algorithms: lamport.cu, compiled after this file
#error unknown ALGO
#endif

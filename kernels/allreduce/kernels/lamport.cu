// The Lamport all-reduces of symmtune: one_shot_lamport (ALGO 7) and
// two_shot_lamport (ALGO 8). Compiled after allreduce.cu (its macros,
// u64/u32, EPV, TILE, symm_now, symm_load_acquire, and common.cuh's tensor
// helpers load_vec/store_vec), as one text (allreduce.Allreduce). Empty
// for every other ALGO.
#if ALGO == 7 || ALGO == 8
// What both share. No barrier: the data is its own flag. Each rank's
// region holds, at byte offset `area`, a header (LAMPORT_HDR bytes: u32
// cur, the call counter mod 3; u32 the blocks arrived in this call; u64
// prev, what the previous call used of each slot, in vectors) and three
// buffers of slots of `slot` bytes (their layout: each kernel below).
// Call k uses buffer k%3. Reset (the Go side, on every rank before any
// rank's first call): header zero, buffers all sentinel, -0.0 in every
// element (a value the pushed data never holds, see lp_fix). A value
// pushed into a slot is read, once every element of its 16-byte vector
// is not the sentinel, by the slot's owner; while it waits, each call
// clears buffer (cur+2)%3, the previous call's, back to the sentinel
// (prev vectors of each slot); the last block to finish advances cur and
// records prev. Arguments: ptrs, in, out (this rank's tensors: out may be
// in; a thread reads in[x] before it writes out[x], and nobody else reads
// in), n elements, rank, area, slot (bytes, a multiple of 16).
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
// call that writes the cleared buffer again (each kernel's argument below).
// A clear is safe only once every store into that buffer has landed: so
// each call waits for every vector of every slot it was sent, even those
// past n, whose value it does not need.
//
// Both kernels' block b waits only for block b of every peer, whose
// positions are the same (the same config on every rank): the grid must
// be resident at once, as for the barrier kernels (Validate's bound, and
// the occupancy check at load).
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

__device__ __forceinline__ uint4 lp_fix4(uint4 v) { return make_uint4(lp_fix(v.x), lp_fix(v.y), lp_fix(v.z), lp_fix(v.w)); }

__device__ __forceinline__ bool lp_arrived(uint4 v) { return !(lp_sent(v.x) || lp_sent(v.y) || lp_sent(v.z) || lp_sent(v.w)); }

__device__ __forceinline__ void lp_push(uint4* p, uint4 v) {
	asm volatile("st.relaxed.sys.global.v4.b32 [%0], {%1, %2, %3, %4};" : : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
__device__ __forceinline__ uint4 lp_poll(const uint4* p) {
	uint4 v;
	asm volatile("ld.relaxed.sys.global.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
	return v;
}

// lp_wait polls p, rank q's data, until v (its last value) has no
// sentinel. Every LAMPORT_SPIN_CHECK+1 polls it reads the clock and, from
// the second check on, this rank's poison word: a poisoned workspace
// makes dead 1, a wait that lasts SYMM_TIMEOUT_NS makes it q+2, and
// either makes this thread's later waits give up at once. The kernel's
// end then poisons the workspace (lp_fail). two_shot_lamport's two wait
// loops use it: they hold nothing for fail-stop, no flag loaded up front
// and no call.
__device__ __forceinline__ uint4 lp_wait(const uint4* p, uint4 v, const u64* ptrs, int r, int q, u32& dead) {
	u64 start = 0;
	for (u32 it = 0; dead == 0 && !lp_arrived(v); it++) {
		if ((it & LAMPORT_SPIN_CHECK) == LAMPORT_SPIN_CHECK) {
			const u64 now = symm_now();
			if (start == 0) {
				start = now;
			} else if (*(volatile const u32*)symm_flag(ptrs, WORLD, r) != 0) {
				dead = 1;
			} else if (now - start > SYMM_TIMEOUT_NS) {
				dead = (u32)q + 2u;
			}
		}
		v = lp_poll(p);
	}
	return v;
}

// lp_wait_spread is lp_wait that poisons the workspace, or passes a
// peer's poison on to this rank's host word and peers, in its own slow
// path (barrier.cuh's symm_spread, inline), for one_shot_lamport's one
// wait loop. The two forms are what measured fastest for each kernel
// (decode all-reduces, 1 x H200, 2026-12-02, against the kernels before
// fail-stop: this form 1.4% slower at 16 KiB and 3-4% at 4 MiB in the
// two-shot; lp_wait's 3-4% slower in the one-shot at 16 KiB, 1-1.6% in
// the two-shot).
__device__ __forceinline__ uint4 lp_wait_spread(const uint4* p, uint4 v, const u64* ptrs, const u32* flag, int r, int q, bool& dead) {
	u64 start = 0;
	for (u32 it = 0; !dead && !lp_arrived(v); it++) {
		if ((it & LAMPORT_SPIN_CHECK) == LAMPORT_SPIN_CHECK) {
			const u64 now = symm_now();
			if (start == 0) {
				start = now;
			} else if (*(volatile const u32*)flag != 0 || now - start > SYMM_TIMEOUT_NS) {
				u32 w = symm_poison_word(ptrs, r, WORLD);
				if (w == 0) w = SYMM_POISON(SYMM_KIND_LAMPORT, r, q);
				symm_spread(ptrs, r, WORLD, w);
				dead = true;
			}
		}
		v = lp_poll(p);
	}
	return v;
}

// lp_fail, at a kernel's end, for a thread whose waits gave up (dead, see
// lp_wait): poisons the workspace on every rank, naming the rank it
// waited for, or, when it found the workspace poisoned, passes the poison
// on to this rank's host word and peers (barrier.cuh). Inline, as
// symm_spread is: the kernels make no call at all.
__device__ __forceinline__ void lp_fail(const u64* ptrs, int r, u32 dead) {
	const u32 w = dead >= 2 ? SYMM_POISON(SYMM_KIND_LAMPORT, r, dead - 2u) : symm_poison_word(ptrs, r, WORLD);
	if (w != 0) symm_spread(ptrs, r, WORLD, w);
}

// lp_begin reads the header (cur, prev) once per block, for every thread.
__device__ __forceinline__ void lp_begin(const u32* hdr, u32& cur, u64& prev) {
	__shared__ u32 s_cur;
	__shared__ u64 s_prev;
	if (threadIdx.x == 0) {
		s_cur = *(volatile const u32*)hdr;
		s_prev = *(volatile const u64*)(hdr + 2);
	}
	__syncthreads();
	cur = s_cur;
	prev = s_prev;
}

// lp_clear fills the first prev vectors of `slots` slots of svec vectors
// at old with the sentinel, the grid's threads striding over each.
__device__ __forceinline__ void lp_clear(uint4* old, int slots, u64 svec, u64 prev) {
	const uint4 s = make_uint4(LAMPORT_SENTINEL, LAMPORT_SENTINEL, LAMPORT_SENTINEL, LAMPORT_SENTINEL);
	for (int q = 0; q < slots; q++)
		for (u64 i = (u64)blockIdx.x * THREADS + threadIdx.x; i < prev; i += (u64)gridDim.x * THREADS) old[q * svec + i] = s;
}

// lp_end counts this block done; the last advances cur and records used,
// what this call used of each slot, for the next call's clear. Thread 0's
// header read is ordered before its arrival (release); the last arrival
// (acquire) sees every block's.
__device__ __forceinline__ void lp_end(u32* hdr, u32 cur, u64 used) {
	if (threadIdx.x == 0) {
		u32 before;
		asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(hdr + 1) : "memory");
		if (before == gridDim.x - 1) {
			*(volatile u64*)(hdr + 2) = used;
			*(volatile u32*)(hdr + 1) = 0u;
			*(volatile u32*)hdr = (cur + 1) % 3;
		}
	}
}
#endif

#if ALGO == 7
// One-shot Lamport all-reduce (one_shot_lamport). Buffer b holds WORLD
// slots; slot q is rank q's input in a call that uses b. prev: the
// previous call's message in vectors.
//   push   read my input `in` (n elements: any size, any alignment), turn
//          -0.0 into +0.0, store it into slot r of buffer cur on every
//          rank, mine included (16-byte stores over NVLink);
//   clear  my buffer (cur+2)%3 (prev vectors of every slot);
//   reduce for each vector of each slot of my buffer cur, poll until no
//          element is the sentinel, sum the slots in rank order (identical
//          bits on every rank) into `out`;
//   count  the last block records prev = nvec.
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
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 in, u64 out, u64 n, u64 rank, u64 area, u64 slot) {
	const int r = (int)rank;
	u32* const hdr = (u32*)(ptrs[r] + area);
	u32 cur;
	u64 prev;
	lp_begin(hdr, cur, prev);
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
			if (i < nvec) v[u] = lp_fix4(load_vec(in, n, i, aligned));
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
	lp_clear((uint4*)(ptrs[r] + area + LAMPORT_HDR) + (u64)((cur + 2) % 3) * WORLD * svec, WORLD, svec, prev);
	// Reduce: every slot's poll of the tile issued first, then the waits.
	const u32* const flag = symm_flag(ptrs, WORLD, r);
	bool dead = false; // see lp_wait_spread
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
				for (int q = 0; q < WORLD; q++) acc(a, lp_wait_spread(mine[q] + i, v[u][q], ptrs, flag, r, q, dead)); // rank order
				store_vec(out, n, i, pack(a), aligned);
			}
		}
	}
	lp_end(hdr, cur, nvec);
}
#endif

#if ALGO == 8
// Two-shot Lamport all-reduce (two_shot_lamport): a reduce-scatter and an
// all-gather through Lamport buffers, so each rank sends about twice the
// message over its links instead of WORLD-1 times. The message's nvec
// vectors split into WORLD chunks of C = ceil(nvec/WORLD); chunk q (vectors
// [q*C, (q+1)*C), those past nvec zeros) is rank q's to reduce. Buffer b
// holds 2*WORLD slots: part A, slot q: rank q's copy of my chunk (partial
// inputs); part B, slot WORLD+q: the reduced chunk q, pushed by rank q.
// prev: the previous call's C. Each thread takes positions i in [0, C),
// the same positions in all three phases:
//   phase 1 for each q, load in[q*C+i], turn -0.0 into +0.0, push it into
//           slot r of part A of rank q's buffer cur;
//   clear   part A of my buffer (cur+2)%3 (prev vectors of every slot);
//   phase 2 poll my part A slots at i until arrived, sum them in rank
//           order (f32), pack, turn -0.0 into +0.0 (so the sum is never the
//           sentinel), push it into slot r of part B of every rank's buffer
//           cur, mine included;
//   clear   part B of my buffer (cur+2)%3;
//   phase 3 for each q, poll my part B slot q at i until arrived, store it
//           to out[q*C+i] (never past n);
//   count   the last block records prev = C.
// The same thread reads in[q*C+i] (phase 1) before it writes out[q*C+i]
// (phase 3), so out may be in. No block waits for another block of its own
// rank, so the phases need no sync between them. Every rank's copy of
// chunk q is reduced once, by rank q, so all ranks get the same bits.
//
// Why three buffers remain safe with two phases: call k-1 is over here, so
// every vector sent to my buffer (k-1)%3, in either part, has landed and
// was read (every slot is waited for at every i < C). The next write into
// it is a peer's call k+2; the peer starts call k+2 only after finishing
// call k+1, which needs my call-(k+1) pushes of both phases, made after
// this kernel (and its clear) completed. Symmetrically, my call-k stores
// into a peer's buffer k%3 land after that peer cleared it in its call k-2:
// I got here only after receiving its call-(k-1) phase-2 data, which it
// pushed after its kernel k-2 completed.
extern "C" __global__ void __launch_bounds__(THREADS) allreduce(const u64* ptrs, u64 in, u64 out, u64 n, u64 rank, u64 area, u64 slot) {
	const int r = (int)rank;
	u32* const hdr = (u32*)(ptrs[r] + area);
	u32 cur;
	u64 prev;
	lp_begin(hdr, cur, prev);
	const u64 nvec = (n + EPV - 1) / EPV;
	const u64 chunk = (nvec + WORLD - 1) / WORLD; // C
	const u64 svec = slot / 16;                   // vectors per slot
	const u64 bvec = 2 * WORLD * svec;            // vectors per buffer
	const bool aligned = ((in | out) & 15) == 0;
	// To spread the links' load, rank r sends to r, r+1, ... in turn: k
	// indexes the peer (r+k)%WORLD. dst[k]: my slot in part A of its
	// buffer cur; my slot in part B is WORLD slots on (not kept: registers).
	uint4* dst[WORLD];
#pragma unroll
	for (int k = 0; k < WORLD; k++) dst[k] = (uint4*)(ptrs[(r + k) % WORLD] + area + LAMPORT_HDR) + (u64)cur * bvec + (u64)r * svec;
	const u64 toB = (u64)WORLD * svec;
	uint4* const mine = (uint4*)(ptrs[r] + area + LAMPORT_HDR); // my buffer 0
	const uint4* const myA = mine + (u64)cur * bvec;             // slot q at q*svec
	const uint4* const myB = myA + toB;                          // slot q at q*svec
	uint4* const old = mine + (u64)((cur + 2) % 3) * bvec;
	const u64 stride = (u64)gridDim.x * TILE;
	// Phase 1: every load of the tile first, then every store.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += stride) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int k = 0; k < WORLD; k++) v[u][k] = lp_fix4(load_vec(in, n, (u64)((r + k) % WORLD) * chunk + i, aligned));
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int k = 0; k < WORLD; k++) lp_push(dst[k] + i, v[u][k]);
			}
		}
	}
	// Clear the previous call's part A while the peers' partials come.
	lp_clear(old, WORLD, svec, prev);
	u32 dead = 0; // see lp_wait
	// Phase 2: every slot's poll of the tile issued first, then the waits.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += stride) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) v[u][q] = lp_poll(myA + q * svec + i);
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
				float a[EPV];
#pragma unroll
				for (int e = 0; e < EPV; e++) a[e] = 0.f;
#pragma unroll
				for (int q = 0; q < WORLD; q++) acc(a, lp_wait(myA + q * svec + i, v[u][q], ptrs, r, q, dead)); // rank order
				const uint4 s = lp_fix4(pack(a));
#pragma unroll
				for (int k = 0; k < WORLD; k++) lp_push(dst[k] + toB + i, s);
			}
		}
	}
	// Clear the previous call's part B while the reduced chunks come.
	lp_clear(old + toB, WORLD, svec, prev);
	// Phase 3: every slot's poll of the tile issued first, then the waits;
	// vectors past nvec are waited for too (see the clear), not stored.
	for (u64 base = (u64)blockIdx.x * TILE; base < chunk; base += stride) {
		uint4 v[UNROLL][WORLD];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) v[u][q] = lp_poll(myB + q * svec + i);
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const u64 i = base + (u64)u * THREADS + threadIdx.x;
			if (i < chunk) {
#pragma unroll
				for (int q = 0; q < WORLD; q++) store_vec(out, n, (u64)q * chunk + i, lp_wait(myB + q * svec + i, v[u][q], ptrs, r, q, dead), aligned);
			}
		}
	}
	if (dead) lp_fail(ptrs, r, dead);
	lp_end(hdr, cur, chunk);
}
#endif

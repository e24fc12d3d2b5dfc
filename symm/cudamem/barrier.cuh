// symmtune cudamem: device-side cross-GPU barrier on signal pads.
// Kernels that run over a cudamem Team include this text (Go prepends it).
//
// Each rank owns a pad array pads[SYMM_PAD_SLOTS][SYMM_MAX_WORLD] of u32 in
// its symmetric allocation; ptrs[world + q] is rank q's pad array mapped
// here. Block b of every rank meets block b of every peer on slot b:
// it adds 1 to peer q's pads[b][rank] (a posted reduction with release
// semantics at system scope: no round trip), then waits until its own
// pads[b][q] is at least 1 (acquire, system scope) and takes 1 off it.
// A pad counts the signals not yet consumed, so a fast rank that signals
// the next barrier before its peer has consumed the last one loses nothing,
// and every pad is 0 again once all ranks have passed the same barriers:
// back-to-back launches need no host reset.
// Fail-stop: a wait that lasts SYMM_TIMEOUT_NS (an NVRTC -D sets it; 10 s,
// the tuner's, by default) poisons the workspace: it writes SYMM_POISON
// into the flag word after the pads of this rank and of every peer, and
// mirrors it into the rank's host-mapped status word when the host put its
// address after the flag (cudamem: FlagOffset, HostPtrOffset). Every later
// wait on a poisoned workspace fails at once, and a kernel whose wait
// failed skips the rest of its work: a dead peer cannot hang the GPU, and
// no wait goes on as if it had passed.
typedef unsigned long long u64;
typedef unsigned int u32;
#define SYMM_MAX_WORLD 8
#define SYMM_PAD_SLOTS 1024
#ifndef SYMM_TIMEOUT_NS
#define SYMM_TIMEOUT_NS 10000000000ull
#endif
// The poison word (cudamem.Poison): kind, waiting rank, rank waited for.
#define SYMM_POISON(kind, waiter, peer) (0x80000000u | ((u32)(kind) << 24) | (((u32)(waiter) & 0xffu) << 8) | ((u32)(peer) & 0xffu))
#define SYMM_KIND_BARRIER 1
#define SYMM_KIND_LAMPORT 2

__device__ __forceinline__ void symm_signal(u32* p) {
	asm volatile("red.release.sys.global.add.u32 [%0], 1;" : : "l"(p) : "memory");
}
__device__ __forceinline__ u32 symm_load_acquire(const u32* p) {
	u32 v;
	asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}
__device__ __forceinline__ u64 symm_now() {
	u64 t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
// symm_flag is rank's poison word, as mapped here.
__device__ __forceinline__ u32* symm_flag(const u64* ptrs, int world, int rank) {
	return (u32*)ptrs[world + rank] + SYMM_PAD_SLOTS * SYMM_MAX_WORLD;
}
// symm_spread marks the workspace dead on every rank (the first cause
// stays) and mirrors this rank's word to its host word; system scope, as
// the peers and the host read them. symm_poison is it out of line, for
// waits whose loops must not hold its registers; a kernel that spreads
// the poison only at its end inlines it (no call, no call ABI).
__device__ __forceinline__ void symm_spread(const u64* ptrs, int rank, int world, u32 word) {
	for (int q = 0; q < world; q++) atomicCAS_system(symm_flag(ptrs, world, q), 0u, word);
	u32* flag = symm_flag(ptrs, world, rank);
	const u64 host = *(volatile u64*)(flag + 2);
	if (host) asm volatile("st.relaxed.sys.global.u32 [%0], %1;" : : "l"(host), "r"(symm_load_acquire(flag)) : "memory");
}
__device__ __noinline__ void symm_poison(const u64* ptrs, int rank, int world, u32 word) { symm_spread(ptrs, rank, world, word); }
// symm_poison_word is this rank's poison word, 0 when the workspace is
// healthy; a word whose waiter is unknown (a fused GEMM's, 0xff) names
// this rank.
__device__ __forceinline__ u32 symm_poison_word(const u64* ptrs, int rank, int world) {
	u32* flag = symm_flag(ptrs, world, rank);
	u32 w = *(volatile u32*)flag;
	if (w != 0 && (w & 0xff00u) == 0xff00u) {
		const u32 mine = w ^ ((0xffu ^ (u32)rank) << 8);
		atomicCAS_system(flag, w, mine);
		w = mine;
	}
	return w;
}
// symm_poisoned: whether the workspace is poisoned; if so, this rank's
// peers and host hear of it too (a peer's poison reaches the host here, a
// fused GEMM's reaches the peers, its unknown waiter made this rank).
__device__ __forceinline__ bool symm_poisoned(const u64* ptrs, int rank, int world) {
	const u32 w = symm_poison_word(ptrs, rank, world);
	if (w == 0) return false;
	symm_poison(ptrs, rank, world, w);
	return true;
}
// symm_wait waits for a signal on p from peer and consumes it; false on a
// poisoned workspace or on timeout (which poisons it). The flag's load is
// in flight with the first poll's, so a healthy wait pays no latency.
__device__ __forceinline__ bool symm_wait(const u64* ptrs, int rank, int world, int peer, u32* p) {
	const u32 poisoned = *(volatile u32*)symm_flag(ptrs, world, rank);
	u64 start = 0;
	for (u32 i = 0;; i++) {
		const u32 v = symm_load_acquire(p);
		if (poisoned != 0) break;
		if (v != 0) {
			// System scope, like the peers' increments on the same word:
			// atomics of narrower scope are not atomic against them.
			asm volatile("red.relaxed.sys.global.add.u32 [%0], %1;" : : "l"(p), "r"(0xffffffffu) : "memory");
			return true;
		}
		if ((i & 1023u) == 1023u) {
			u64 now = symm_now();
			if (start == 0) {
				start = now;
			} else if (*(volatile u32*)symm_flag(ptrs, world, rank) != 0) {
				break;
			} else if (now - start > SYMM_TIMEOUT_NS) {
				symm_poison(ptrs, rank, world, SYMM_POISON(SYMM_KIND_BARRIER, rank, peer));
				return false;
			}
		}
	}
	symm_poisoned(ptrs, rank, world); // the host and the peers hear of it
	return false;
}
// symm_block_signal: every thread of the block calls it once the block's
// writes that peers will read are issued; threads 0..world-1 then add one
// to block `slot`'s pad on every peer (release: the writes come first).
__device__ __forceinline__ void symm_block_signal(const u64* ptrs, int rank, int world, int slot) {
	__syncthreads();
	int t = threadIdx.x;
	if (t < world && t != rank) symm_signal((u32*)ptrs[world + t] + slot * SYMM_MAX_WORLD + rank);
}
// symm_block_wait: every thread of the block calls it; it returns once one
// signal from every peer's block `slot` has arrived (and consumes it), with
// the peers' writes before their signals visible to the whole block. It
// returns false, to every thread, when a wait failed (see symm_wait).
__device__ __forceinline__ bool symm_block_wait(const u64* ptrs, int rank, int world, int slot) {
	int t = threadIdx.x;
	bool ok = true;
	if (t < world && t != rank) {
		u32* mine = (u32*)ptrs[world + rank];
		ok = symm_wait(ptrs, rank, world, t, mine + slot * SYMM_MAX_WORLD + t);
	}
	return !__syncthreads_or(!ok);
}
// symm_block_barrier: every thread of the block calls it; the block needs at
// least `world` threads. It is symm_block_signal then symm_block_wait,
// written out as one (its code as tuned, with both pad pointers loaded
// before the signal). Signals and waits on a slot pair up in order, so a
// kernel may mix it with the separate calls (per-tile "ready" flags) as long
// as every rank's block makes the same sequence. False as symm_block_wait.
__device__ __forceinline__ bool symm_block_barrier(const u64* ptrs, int rank, int world, int slot) {
	__syncthreads();
	int t = threadIdx.x;
	bool ok = true;
	if (t < world && t != rank) {
		u32* mine = (u32*)ptrs[world + rank];
		u32* peer = (u32*)ptrs[world + t];
		symm_signal(peer + slot * SYMM_MAX_WORLD + rank);
		ok = symm_wait(ptrs, rank, world, t, mine + slot * SYMM_MAX_WORLD + t);
	}
	return !__syncthreads_or(!ok);
}

// symm_barrier is the Team barrier: one block of 32 threads, last slot.
extern "C" __global__ void symm_barrier(const u64* ptrs, u64 rank, u64 world) {
	symm_block_barrier(ptrs, (int)rank, (int)world, SYMM_PAD_SLOTS - 1);
}

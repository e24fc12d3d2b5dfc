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
// A wait that lasts SYMM_TIMEOUT_NS sets the flag word after the pads and
// gives up, so a dead peer cannot hang the GPU forever.
typedef unsigned long long u64;
typedef unsigned int u32;
#define SYMM_MAX_WORLD 8
#define SYMM_PAD_SLOTS 1024
#define SYMM_TIMEOUT_NS 10000000000ull

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
// symm_wait waits for a signal on p and consumes it; false on timeout.
__device__ __forceinline__ bool symm_wait(u32* p, u32* flag) {
	u64 start = 0;
	for (u32 i = 0;; i++) {
		if (symm_load_acquire(p) != 0) {
			// System scope, like the peers' increments on the same word:
			// atomics of narrower scope are not atomic against them.
			asm volatile("red.relaxed.sys.global.add.u32 [%0], %1;" : : "l"(p), "r"(0xffffffffu) : "memory");
			return true;
		}
		if ((i & 1023u) == 1023u) {
			u64 now = symm_now();
			if (start == 0) {
				start = now;
			} else if (now - start > SYMM_TIMEOUT_NS) {
				atomicExch(flag, 1u);
				return false;
			}
		}
	}
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
// the peers' writes before their signals visible to the whole block.
__device__ __forceinline__ void symm_block_wait(const u64* ptrs, int rank, int world, int slot) {
	int t = threadIdx.x;
	if (t < world && t != rank) {
		u32* mine = (u32*)ptrs[world + rank];
		symm_wait(mine + slot * SYMM_MAX_WORLD + t, mine + SYMM_PAD_SLOTS * SYMM_MAX_WORLD);
	}
	__syncthreads();
}
// symm_block_barrier: every thread of the block calls it; the block needs at
// least `world` threads. It is symm_block_signal then symm_block_wait,
// written out as one (its code as tuned, with both pad pointers loaded
// before the signal). Signals and waits on a slot pair up in order, so a
// kernel may mix it with the separate calls (per-tile "ready" flags) as long
// as every rank's block makes the same sequence.
__device__ __forceinline__ void symm_block_barrier(const u64* ptrs, int rank, int world, int slot) {
	__syncthreads();
	int t = threadIdx.x;
	if (t < world && t != rank) {
		u32* mine = (u32*)ptrs[world + rank];
		u32* peer = (u32*)ptrs[world + t];
		u32* flag = mine + SYMM_PAD_SLOTS * SYMM_MAX_WORLD;
		symm_signal(peer + slot * SYMM_MAX_WORLD + rank);
		symm_wait(mine + slot * SYMM_MAX_WORLD + t, flag);
	}
	__syncthreads();
}

// symm_barrier is the Team barrier: one block of 32 threads, last slot.
extern "C" __global__ void symm_barrier(const u64* ptrs, u64 rank, u64 world) {
	symm_block_barrier(ptrs, (int)rank, (int)world, SYMM_PAD_SLOTS - 1);
}

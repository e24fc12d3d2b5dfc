// symmtune cudamem: device-side cross-GPU barrier on signal pads.
// Kernels that run over a cudamem Team include this text (Go prepends it).
//
// Each rank owns a pad array pads[SYMM_PAD_SLOTS][SYMM_MAX_WORLD] of u32 in
// its symmetric allocation; ptrs[world + q] is rank q's pad array mapped
// here. Block b of every rank meets block b of every peer on slot b:
// it sets peer q's pads[b][rank] from 0 to 1 (release, system scope) and
// then takes its own pads[b][q] from 1 back to 0 (acquire, system scope).
// The compare-and-swap in both directions is what lets slots be reused
// without a host reset: a second signal to a peer waits until that peer has
// consumed the first, and every pad is 0 again once a barrier is done.
// A wait that lasts SYMM_TIMEOUT_NS sets the flag word after the pads and
// gives up, so a dead peer cannot hang the GPU forever.
typedef unsigned long long u64;
typedef unsigned int u32;
#define SYMM_MAX_WORLD 8
#define SYMM_PAD_SLOTS 1024
#define SYMM_TIMEOUT_NS 10000000000ull

__device__ __forceinline__ u32 symm_cas_release(u32* p, u32 cmp, u32 val) {
	u32 old;
	asm volatile("atom.release.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(cmp), "r"(val) : "memory");
	return old;
}
__device__ __forceinline__ u32 symm_cas_acquire(u32* p, u32 cmp, u32 val) {
	u32 old;
	asm volatile("atom.acquire.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(cmp), "r"(val) : "memory");
	return old;
}
__device__ __forceinline__ u64 symm_now() {
	u64 t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
// symm_spin swaps *p from cmp to val, retrying until it succeeds or times out.
__device__ __forceinline__ bool symm_spin(u32* p, u32 cmp, u32 val, bool release, u32* flag) {
	u64 start = 0;
	for (u32 i = 0;; i++) {
		u32 old = release ? symm_cas_release(p, cmp, val) : symm_cas_acquire(p, cmp, val);
		if (old == cmp) return true;
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
// symm_block_barrier: every thread of the block calls it; the block needs at
// least `world` threads.
__device__ __forceinline__ void symm_block_barrier(const u64* ptrs, int rank, int world, int slot) {
	__syncthreads();
	int t = threadIdx.x;
	if (t < world && t != rank) {
		u32* mine = (u32*)ptrs[world + rank];
		u32* peer = (u32*)ptrs[world + t];
		u32* flag = mine + SYMM_PAD_SLOTS * SYMM_MAX_WORLD;
		if (symm_spin(peer + slot * SYMM_MAX_WORLD + rank, 0u, 1u, true, flag))
			symm_spin(mine + slot * SYMM_MAX_WORLD + t, 1u, 0u, false, flag);
	}
	__syncthreads();
}

// symm_barrier is the Team barrier: one block of 32 threads, last slot.
extern "C" __global__ void symm_barrier(const u64* ptrs, u64 rank, u64 world) {
	symm_block_barrier(ptrs, (int)rank, (int)world, SYMM_PAD_SLOTS - 1);
}

// PTX wrappers of the Hopper features hopper_gemm.cu uses (mbarriers,
// clusters, TMA, wgmma fences and shared-memory descriptors, conversions,
// stmatrix and vector loads and stores, acquire loads and the global timer):
// what CUTLASS's cute/arch headers provide, which NVRTC cannot include here;
// and the epilogue's staging and scaling of accumulators.
// kernels/gemm/hopper.Source puts this file between wgmma.cuh and
// hopper_gemm.cu; nothing here depends on the tile's configuration except
// DTYPE_BF16, C's type (from the command line).
typedef unsigned int u32;
typedef unsigned long long u64;

// The CUtensorMap the host encodes (cuTensorMapEncodeTiled): 128 opaque
// bytes, passed by value as a __grid_constant__ parameter so TMA reads it
// from the parameter space.
struct __align__(64) TensorMap {
	u64 opaque[16];
};

__device__ __forceinline__ u32 smem_addr(const void* p) {
	u32 r;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
	return r;
}

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes) {
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(u32 bar) {
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(u32 bar, u32 parity) {
	u32 ok;
	asm volatile(
		"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
		: "=r"(ok)
		: "r"(bar), "r"(parity)
		: "memory");
	return ok != 0;
}
// mbar_wait returns once the phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
	while (!mbar_try_wait(bar, parity)) {
	}
}

// mbar_wait_cluster is mbar_wait with cluster-scope acquire: the producer's
// wait for a stage that consumers of both CTAs of a cluster release.
__device__ __forceinline__ void mbar_wait_cluster(u32 bar, u32 parity) {
	u32 ok = 0;
	while (!ok) {
		asm volatile(
			"{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
			: "=r"(ok)
			: "r"(bar), "r"(parity)
			: "memory");
	}
}
// mbar_arrive_cta arrives on the barrier at the same shared-memory offset
// in cluster CTA rank. With the default semantics, as CUTLASS's
// ClusterBarrier does: CLUSTER_RELEASE 1 (a diagnostic) uses release at
// cluster scope, which measured at half speed (it seems to wait for the
// thread's MMAs still in flight).
#ifndef CLUSTER_RELEASE
#define CLUSTER_RELEASE 0
#endif
__device__ __forceinline__ void mbar_arrive_cta(u32 bar, u32 rank) {
	u32 remote;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(rank));
#if CLUSTER_RELEASE
	asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
#else
	asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
#endif
}
__device__ __forceinline__ u32 cluster_rank() {
	u32 r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}
__device__ __forceinline__ void cluster_sync() {
	asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// tma_load_multicast is tma_load into the same offset of every CTA of the
// cluster in mask, completing on each one's barrier at bar's offset.
__device__ __forceinline__ void tma_load_multicast(u32 dst, const TensorMap* map, u32 bar, int c0, int c1, unsigned short mask) {
	asm volatile(
		"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;"
		::"r"(dst), "l"((u64)map), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
		: "memory");
}

// tma_load copies the box at (c0 innermost, c1) of map into shared memory
// at dst, completing bytes on bar.
__device__ __forceinline__ void tma_load(u32 dst, const TensorMap* map, u32 bar, int c0, int c1) {
	asm volatile(
		"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
		::"r"(dst), "l"((u64)map), "r"(bar), "r"(c0), "r"(c1)
		: "memory");
}

// evict_first_policy is an L2 policy that evicts the lines it loads first
// (B_EVICT_FIRST, hopper_tile.cuh).
__device__ __forceinline__ u64 evict_first_policy() {
	u64 p;
	asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
	return p;
}
// tma_load_hint is tma_load with an L2 cache policy.
__device__ __forceinline__ void tma_load_hint(u32 dst, const TensorMap* map, u32 bar, int c0, int c1, u64 policy) {
	asm volatile(
		"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5;"
		::"r"(dst), "l"((u64)map), "r"(bar), "r"(c0), "r"(c1), "l"(policy)
		: "memory");
}

// tma_prefetch_map fetches map's descriptor into the TMA unit's cache, so
// that the first load or store through it does not wait for it (CUTLASS's
// producers prefetch theirs the same way). The map is a kernel parameter:
// nothing a kernel before this one writes.
__device__ __forceinline__ void tma_prefetch_map(const TensorMap* map) {
	asm volatile("prefetch.tensormap [%0];" ::"l"((u64)map) : "memory");
}

// grid_wait holds the calling thread until the grid this one is a
// programmatic dependent of has completed and its memory operations are
// visible (griddepcontrol.wait); a grid launched without the dependency
// returns at once.
__device__ __forceinline__ void grid_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// tma_store copies the box at (c0 innermost, c1) of map from shared memory
// at src into global memory, in the issuing thread's next bulk group
// (bulk_commit closes it); rows and columns outside the map's matrix are
// not written.
__device__ __forceinline__ void tma_store(const TensorMap* map, u32 src, int c0, int c1) {
	asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
		::"l"((u64)map), "r"(src), "r"(c0), "r"(c1)
		: "memory");
}
// bulk_load copies bytes (a multiple of 16, both addresses 16-byte
// aligned) from global memory into this CTA's shared memory, completing on
// mbarrier bar's transaction count.
__device__ __forceinline__ void bulk_load(u32 dst, u64 src, u32 bytes, u32 bar) {
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src), "r"(bytes),
		"r"(bar)
		: "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// bulk_wait_read: at most N of the thread's bulk groups still read shared
// memory, so the buffers of the older ones may be written again.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
	asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// bulk_wait_all: every bulk group of the thread has written its data.
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
// fence_async_smem makes the thread's shared-memory writes visible to the
// async proxy (a TMA store that reads them).
__device__ __forceinline__ void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
	asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across the
// asynchronous MMAs that own those registers (CUTLASS's
// warpgroup_fence_operand).
__device__ __forceinline__ void fence_acc(float* d, int n) {
#pragma unroll
	for (int i = 0; i < n; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// Shared-memory matrix descriptors for 128-byte-swizzled tiles: start
// address, leading and stride byte offsets (>> 4), swizzle mode 1 (128B).
// K-major (rows of 128 bytes of k-values: 64 two-byte or 128 e4m3, 8-row
// atoms 1024 bytes apart): the leading
// offset is unused by the swizzled layout (1 by convention). MN-major (rows
// of 64 n-values per k): atoms of 8 k-rows 1024 bytes apart, 64-column
// blocks nblock bytes apart.
__device__ __forceinline__ u64 desc_kmajor(u32 addr) {
	return (u64)((addr & 0x3FFFF) >> 4) | ((u64)1 << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}
__device__ __forceinline__ u64 desc_mnmajor(u32 addr, u32 nblock) {
	return (u64)((addr & 0x3FFFF) >> 4) | ((u64)(nblock >> 4) << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}

__device__ __forceinline__ u32 pack2(float lo, float hi) {
	u32 r;
#if DTYPE_BF16
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
	return r;
}

// unpack2 is pack2's inverse: the two elements of x as floats.
__device__ __forceinline__ void unpack2(u32 x, float& lo, float& hi) {
#if DTYPE_BF16
	asm("{.reg .b16 l, h; mov.b32 {l, h}, %2; cvt.f32.bf16 %0, l; cvt.f32.bf16 %1, h;}" : "=f"(lo), "=f"(hi) : "r"(x));
#else
	asm("{.reg .b16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h;}" : "=f"(lo), "=f"(hi) : "r"(x));
#endif
}

// stmatrix_x4 stores four 8x8 matrices of 16-bit elements into shared
// memory: r_i is the thread's fragment of matrix i (row lane/4, columns
// 2*(lane%4) and +1, as an mma accumulator holds them), and lanes 8i to
// 8i+7 give the addresses of matrix i's rows.
__device__ __forceinline__ void stmatrix_x4(u32 addr, u32 r0, u32 r1, u32 r2, u32 r3) {
	asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
		: "memory");
}
__device__ __forceinline__ void lds_v4(u32 addr, u32 w[4]) {
	asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "r"(addr) : "memory");
}
__device__ __forceinline__ void st_v4(u32* p, const u32 w[4]) {
	asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
}

// ld_v: V (1, 2 or 4) words from global memory.
template <int V>
__device__ __forceinline__ void ld_v(const u32* p, u32* w) {
	if (V == 4)
		asm volatile("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p) : "memory");
	else if (V == 2)
		asm volatile("ld.global.v2.b32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p) : "memory");
	else
		asm volatile("ld.global.b32 %0, [%1];" : "=r"(w[0]) : "l"(p) : "memory");
}

// st_f32x4 stores v[0..3] at p (global, 16-byte aligned): a split-K
// partial (hopper_split.cuh's fixup).
__device__ __forceinline__ void st_f32x4(float* p, const float* v) {
	asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]) : "memory");
}
// add_f32x4_cg adds the four floats at p (global, 16-byte aligned) to
// v[0..3]. Cached in L2 only (.cg): another SM wrote them, and this SM's
// L1 never holds a stale copy to read.
__device__ __forceinline__ void add_f32x4_cg(const float* p, float* v) {
	float x0, x1, x2, x3;
	asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x0), "=f"(x1), "=f"(x2), "=f"(x3) : "l"(p) : "memory");
	v[0] += x0;
	v[1] += x1;
	v[2] += x2;
	v[3] += x3;
}

__device__ __forceinline__ u32 ld_acquire_sys(u64 p) {
	u32 v;
	asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}
__device__ __forceinline__ u64 globaltimer() {
	u64 t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// The epilogue's staging of one 16-column block of a warp's 16 rows (a
// 512-byte buffer, hopper_gemm.cu's STAGE_BYTES): 16 rows of 32 bytes, the
// two 16-byte halves of rows 4-7 and 12-15 swapped, so that neither the
// stmatrix nor the loads that read it back have bank conflicts. That is
// also a TMA box of 16 x 16 in the 32-byte swizzle (address bit 4 ^= bit
// 7), so a TMA store writes a buffer to C as it is.
__device__ __forceinline__ u32 stage_off(int row, int half) {
	return (u32)(row * 32 + (half ^ (row >> 2 & 1)) * 16);
}
// stage_row: the row of the warp's 16 that lane holds after stage_block.
__device__ __forceinline__ int stage_row(int lane) { return lane >> 1; }
// stage_write writes 16-column block b of the warp's accumulators (the
// m64nN layout: for each 8-column block, rows lane/4 and +8, two adjacent
// columns each, which is the fragment stmatrix takes) into the staging
// buffer at stage, rounded to the output type.
__device__ __forceinline__ void stage_write(const float* acc, int b, u32 stage, int lane) {
	const int j = 8 * b;
	// Lanes 8i to 8i+7 give the rows of matrix i: rows 8-15 for odd i,
	// the block's second 8 columns for i >= 2.
	const int r = (lane & 7) + 8 * ((lane >> 3) & 1);
	stmatrix_x4(stage + stage_off(r, lane >> 4), pack2(acc[j], acc[j + 1]), pack2(acc[j + 2], acc[j + 3]),
		pack2(acc[j + 4], acc[j + 5]), pack2(acc[j + 6], acc[j + 7]));
}
// stage_block passes block b through the staging buffer at stage:
// afterwards w holds columns 8*(lane%2) to +7 of the block in row
// stage_row(lane).
__device__ __forceinline__ void stage_block(const float* acc, int b, u32 stage, int lane, u32 w[4]) {
	stage_write(acc, b, stage, lane);
	__syncwarp();
	lds_v4(stage + stage_off(stage_row(lane), lane & 1), w);
	// Every lane has read before the next block overwrites the buffer.
	__syncwarp();
}

// TileScales are one consumer thread's operand scales for a tile's
// epilogue, loaded by load_scales before the tile's last wgmmas are waited
// for (their L2 round trip then runs under those MMAs, where loads at the
// epilogue put it between the main loop and the stores: ping-pong FP8 tiles
// ran 11% slower with row scales than with tensor scales at K = 1,024, 1 x
// H200, 2026-12-04) and applied by scale_acc. With ROWS, a[mi][h] is the
// scale of the thread's global row g0 + 64 mi + 8 h, b[2j + e] that of
// its column c0 + 8j + e (c0: the tile's first column plus 2*(lane%4)),
// the same for every mi; else sab, the tensor scales' product. Rows at or
// past m and columns at or past n (never stored; the arrays end there) get
// scale 0; n is a multiple of 8, so a column pair is wholly in or out.
// Two 4-byte loads a pair, not one 8-byte load: a caller's scales need only
// be float-aligned (a view of a torch tensor may start at any element).
// Plain loads: the scales are tiny
// and stay in L2, and an all-gather's scales of A arrive with its rows
// (ordered before every load of a tile's last stage by that stage's
// mbarrier, which its consumer has waited for; so they are loaded before
// the main loop only where no rows are waited for: early_scales).
template <int N, int MI, bool ROWS>
struct TileScales {
	float a[MI][2];
	float b[ROWS ? N / 4 : 1];
	float sab;
};

template <int N, int MI, bool ROWS>
__device__ __forceinline__ void load_scales(TileScales<N, MI, ROWS>& ts, float sab, const float* sa, int g0, int m, const float* sb, int c0, int n) {
	ts.sab = sab;
	if (!ROWS) return;
#pragma unroll
	for (int mi = 0; mi < MI; mi++) {
		const int g = g0 + 64 * mi;
		ts.a[mi][0] = g < m ? sa[g] : 0.f;
		ts.a[mi][1] = g + 8 < m ? sa[g + 8] : 0.f;
	}
#pragma unroll
	for (int j = 0; j < N / 8; j++) {
		const int c = c0 + 8 * j;
		ts.b[2 * j] = c < n ? sb[c] : 0.f;
		ts.b[2 * j + 1] = c < n ? sb[c + 1] : 0.f;
	}
}

// scale_acc multiplies accumulator mi, one m64nN accumulator (N/2 floats in
// wgmma's layout: d[4j + 2h + e] is row lane/4 + 8h of the warp's 16,
// column 8j + 2*(lane%4) + e), by the scales load_scales read.
template <int N, int MI, bool ROWS>
__device__ __forceinline__ void scale_acc(float* d, const TileScales<N, MI, ROWS>& ts, int mi) {
	if (!ROWS) {
#pragma unroll
		for (int i = 0; i < N / 2; i++) d[i] *= ts.sab;
		return;
	}
	const float a0 = ts.a[mi][0], a1 = ts.a[mi][1];
#pragma unroll
	for (int j = 0; j < N / 8; j++) {
		const float b0 = ts.b[2 * j], b1 = ts.b[2 * j + 1];
		d[4 * j] *= a0 * b0;
		d[4 * j + 1] *= a0 * b1;
		d[4 * j + 2] *= a1 * b0;
		d[4 * j + 3] *= a1 * b1;
	}
}

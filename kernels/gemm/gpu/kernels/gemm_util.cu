// Helpers of the GPU GEMM pipelines (kernels/gemm/gpu): input generation,
// the float64 check, the SM copy and the reduce-scatter's reduction; after
// barrier.cuh (SYMM_PAD_SLOTS), a fused call's end barrier and the bounded
// wait for a peer's flag.
// Compile-time config (from the Go side: gpu.UtilOptions):
//   DTYPE_BF16  1 for bf16 elements, 0 for f16
//   IN_E4M3     1: the GEMM's inputs A and B are e4m3 bytes (fill, fill_t,
//               check_rows' reference) with fp32 scales (fill_scales); the
//               outputs stay bf16. 0 (default): inputs are elements too.
// Every parameter is a u64 (pointers too), as the Go launcher packs them.
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short elem_t;

#ifndef DTYPE_BF16
#error DTYPE_BF16 must be defined
#endif
#ifndef IN_E4M3
#define IN_E4M3 0
#endif
#if IN_E4M3 && !DTYPE_BF16
#error IN_E4M3=1 needs DTYPE_BF16=1: FP8 GEMMs write bf16
#endif

// MAX_WORLD is gpu.MaxWorld: the most slots a reduction sums.
#define MAX_WORLD 8

// TENSOR_B is the "rank" B is generated under: every rank holds the same B.
#define TENSOR_B 0x10000ull
// TENSOR_SCALE is the rank of a scale every rank holds the same (agmm's
// tensor-wise scale of the gathered A); B's scales use TENSOR_B.
#define TENSOR_SCALE 0x10001ull
// SCALE_SALT is xored into the seed of scales, so a rank's scales are not
// its own inputs' first values.
#define SCALE_SALT 0x5CA1E5F0F1E5CA1Eull
// check_rows' scale modes, and its A-scale rank meaning "each source rank's
// own" (matmulrs; agmm's row scales).
#define SCALES_NONE 0
#define SCALES_TENSOR 1
#define SCALES_ROWS 2
#define SCALE_RANK_SRC 0xFFFFFFFFFFFFFFFFull

__device__ __forceinline__ u64 splitmix64(u64 x) {
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

// uniform is sdk.Uniform bit for bit: a value in [-1, 1) for element i of
// rank's tensor under seed, so any rank can regenerate any rank's input.
__device__ __forceinline__ double uniform(u64 seed, u64 rank, u64 i) {
	u64 x = seed ^ (rank + 1) * 0x9E3779B97F4A7C15ull ^ i * 0xD1B54A32D192ED03ull;
	x = splitmix64(x);
	return (double)(x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

// to_elem rounds to the element type (nearest even); from_elem widens
// exactly.
__device__ __forceinline__ elem_t to_elem(float f) {
	unsigned short h;
#if DTYPE_BF16
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
#else
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
	return h;
}
__device__ __forceinline__ float from_elem(elem_t e) {
#if DTYPE_BF16
	return __uint_as_float((u32)e << 16);
#else
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(e));
	return f;
#endif
}

// BEGIN e4m3 (fp8gen_test.go compiles this part on the CPU against E4M3Of)
// e4m3_of rounds f to e4m3 (the "fn" kind: no infinities, 0x7f/0xff NaN)
// as cvt.rn.satfinite.e4m3x2.f32 does: to nearest, ties to even,
// saturating at +-448 (infinities too); NaN gives 0x7f. Plain integer code
// rather than that PTX (sm_89+, PTX 7.8): it builds for any arch and NVRTC,
// and gpu.E4M3Of is the same rule in Go, tested on the CPU.
__device__ __forceinline__ unsigned char e4m3_of(float f) {
	const u32 b = __float_as_uint(f);
	if ((b & 0x7fffffffu) > 0x7f800000u) return 0x7f;
	const u32 s = (b >> 24) & 0x80u;
	const float a = fminf(fabsf(f), 448.0f);
	u32 q;
	if (a < 0.015625f) {
		// Below 2^-6 the steps are 2^-9: q = a * 2^9 rounded (exact
		// scaling); 8 carries into the smallest normal, 0x08.
		q = __float2uint_rn(a * 512.0f);
	} else {
		// Keep 3 of f32's 23 mantissa bits, rebias the exponent (127 -> 7);
		// a round-up carries from the mantissa into the exponent.
		const u32 ab = __float_as_uint(a), m = ab & 0x7fffffu, r = m & 0xfffffu;
		q = (((ab >> 23) - 120u) << 3) | (m >> 20);
		q += (r > 0x80000u || (r == 0x80000u && (q & 1u))) ? 1u : 0u;
	}
	return (unsigned char)(s | q);
}

// e4m3_val is q's value, exactly (every e4m3 value is a float).
__device__ __forceinline__ float e4m3_val(unsigned char q) {
	const u32 s = (u32)(q & 0x80u) << 24, e = (q >> 3) & 15u, m = q & 7u;
	if (e == 15u && m == 7u) return __uint_as_float(0x7fc00000u);
	if (e == 0u) return __uint_as_float(__float_as_uint((float)m * 0.001953125f) | s);
	return __uint_as_float(s | (e + 120u) << 23 | m << 20);
}
// END e4m3

// scale_of is scale i of rank's generator: 2^-9 * (1 + (uniform+1)/2), in
// [2^-9, 2^-8), rounded to fp32 as the scale buffers hold it. 2^-9 keeps
// q * scale near 1 for q up to 448.
__device__ __forceinline__ float scale_of(u64 seed, u64 rank, u64 i) {
	return (float)((1.0 + (uniform(seed ^ SCALE_SALT, rank, i) + 1.0) / 2.0) / 512.0);
}

// in_t is an input element (A, B). to_in rounds a uniform value to one:
// the element (nearest even), or e4m3(float(u * 448)), which covers e4m3's
// range, subnormals included; from_in widens exactly.
#if IN_E4M3
typedef unsigned char in_t;
__device__ __forceinline__ in_t to_in(double u) { return e4m3_of((float)(u * 448.0)); }
__device__ __forceinline__ double from_in(in_t q) { return (double)e4m3_val(q); }
#else
typedef elem_t in_t;
__device__ __forceinline__ in_t to_in(double u) { return to_elem((float)u); }
__device__ __forceinline__ double from_in(in_t e) { return (double)from_elem(e); }
#endif

// gen is input element i of rank's tensor under seed, as fill writes it.
__device__ __forceinline__ double gen(u64 seed, u64 rank, u64 i) {
	return from_in(to_in(uniform(seed, rank, i)));
}

// fill writes rows x cols of rank's tensor, starting at logical row row0 of
// a tensor with cols columns, into dst with leading dimension ld.
extern "C" __global__ void fill(u64 dst, u64 rows, u64 cols, u64 ld, u64 row0, u64 seed, u64 rank) {
	in_t* d = (in_t*)dst;
	const u64 n = rows * cols;
	for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (u64)gridDim.x * blockDim.x) {
		const u64 i = e / cols, j = e % cols;
		d[i * ld + j] = to_in(uniform(seed, rank, (row0 + i) * cols + j));
	}
}

// fill_t writes rows x cols of rank's tensor transposed: logical element
// (i, j) at dst[j * ld + i]. The fused GEMM's K-major B ([N, K], as a
// torch.nn.Linear weight) is the same logical B [K, N] stored this way.
extern "C" __global__ void fill_t(u64 dst, u64 rows, u64 cols, u64 ld, u64 seed, u64 rank) {
	in_t* d = (in_t*)dst;
	const u64 n = rows * cols;
	for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (u64)gridDim.x * blockDim.x) {
		// e walks the stored layout, so writes are coalesced.
		const u64 j = e / rows, i = e % rows;
		d[j * ld + i] = to_in(uniform(seed, rank, i * cols + j));
	}
}

// fill_scales writes count fp32 scales of rank's generator, logical
// indices first..first+count, at dst: a tensor scale is index 0, row
// scales of A the row's index in its rank's A, of B the output column.
extern "C" __global__ void fill_scales(u64 dst, u64 count, u64 first, u64 seed, u64 rank) {
	float* d = (float*)dst;
	for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < count; e += (u64)gridDim.x * blockDim.x)
		d[e] = scale_of(seed, rank, first + e);
}

#define CHECK_THREADS 256

// check_rows compares sampled output rows with a float64 reference
// computed from the generators, never from the buffers under test. Sample
// blockIdx.y is 4 u64: the output row, the row of A it comes from, and the
// ranks [lo, lo+cnt) whose A rows are summed (agmm: the row's owner alone;
// matmulrs: every rank). It accumulates into res: [0] sum (out-ref)^2,
// [1] sum ref^2, [2] non-finite outputs. Launch with CHECK_THREADS threads
// and ceil(n / CHECK_THREADS) x samples blocks.
// With IN_E4M3 it takes two more parameters: scale_mode (SCALES_*), and
// arank, the generator rank of A's scales (SCALE_RANK_SRC: each source
// rank's own). The reference is then sum over sources of
// scaleA(src, row) * scaleB(col) * sum_k qa * qb, with A's scale at index 0
// (tensor) or A's row (rows), B's (rank TENSOR_B) at 0 or the column. The
// products qa * scaleA * qb are exact in float64.
#if IN_E4M3
#define CHECK_SCALE_PARAMS , u64 scale_mode, u64 arank
#else
#define CHECK_SCALE_PARAMS
#endif
extern "C" __global__ void check_rows(u64 out, u64 ldo, u64 samples, u64 n, u64 k, u64 seed, u64 res CHECK_SCALE_PARAMS) {
#if !IN_E4M3
	const u64 scale_mode = SCALES_NONE, arank = 0;
#endif
	__shared__ double a[CHECK_THREADS];
	const u64* s = (const u64*)samples + 4 * blockIdx.y;
	const u64 orow = s[0], arow = s[1], lo = s[2], cnt = s[3];
	const u64 j = (u64)blockIdx.x * CHECK_THREADS + threadIdx.x;
	double ref = 0;
	for (u64 src = lo; src < lo + cnt; src++) {
		// Scaling by 1 (SCALES_NONE) leaves every value as it was.
		const double sa = scale_mode == SCALES_NONE ? 1.0
			: (double)scale_of(seed, arank == SCALE_RANK_SRC ? src : arank, scale_mode == SCALES_ROWS ? arow : 0);
		for (u64 k0 = 0; k0 < k; k0 += CHECK_THREADS) {
			const u64 t = k0 + threadIdx.x;
			a[threadIdx.x] = t < k ? gen(seed, src, arow * k + t) * sa : 0.0;
			__syncthreads();
			if (j < n) {
				const u64 kn = k - k0 < CHECK_THREADS ? k - k0 : CHECK_THREADS;
				for (u64 kk = 0; kk < kn; kk++) ref += a[kk] * gen(seed, TENSOR_B, (k0 + kk) * n + j);
			}
			__syncthreads();
		}
	}
	if (scale_mode != SCALES_NONE && j < n) ref *= (double)scale_of(seed, TENSOR_B, scale_mode == SCALES_ROWS ? j : 0);
	double num = 0, den = 0, bad = 0;
	if (j < n) {
		const double g = from_elem(((const elem_t*)out)[orow * ldo + j]);
		if (g - g != 0.0) bad = 1; else num = (g - ref) * (g - ref);
		den = ref * ref;
	}
	for (int off = 16; off > 0; off >>= 1) {
		num += __shfl_down_sync(0xffffffffu, num, off);
		den += __shfl_down_sync(0xffffffffu, den, off);
		bad += __shfl_down_sync(0xffffffffu, bad, off);
	}
	if ((threadIdx.x & 31) == 0) {
		double* r = (double*)res;
		atomicAdd(&r[0], num);
		atomicAdd(&r[1], den);
		atomicAdd(&r[2], bad);
	}
}

// count_bad adds to res[3] the non-finite elements of a rows x cols matrix
// (leading dimension ld): outputs left poisoned anywhere, sampled or not.
extern "C" __global__ void count_bad(u64 out, u64 rows, u64 cols, u64 ld, u64 res) {
	const elem_t* o = (const elem_t*)out;
	double bad = 0;
	for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < rows * cols; e += (u64)gridDim.x * blockDim.x) {
		const float g = from_elem(o[(e / cols) * ld + e % cols]);
		if (g - g != 0.0f) bad += 1;
	}
	for (int off = 16; off > 0; off >>= 1) bad += __shfl_down_sync(0xffffffffu, bad, off);
	if ((threadIdx.x & 31) == 0 && bad > 0) atomicAdd(&((double*)res)[3], bad);
}

// copy_chunk copies bytes (a multiple of 16; both pointers 16-byte
// aligned) as 16-byte vectors, four in flight per thread: an SM copy of
// a chunk from a peer's buffer, the alternative to the copy engines.
extern "C" __global__ void copy_chunk(u64 dst, u64 src, u64 bytes) {
	uint4* d = (uint4*)dst;
	const uint4* s = (const uint4*)src;
	const u64 n = bytes / 16, stride = (u64)gridDim.x * blockDim.x;
	u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	for (; i + 3 * stride < n; i += 4 * stride) {
		uint4 v0 = s[i], v1 = s[i + stride], v2 = s[i + 2 * stride], v3 = s[i + 3 * stride];
		d[i] = v0; d[i + stride] = v1; d[i + 2 * stride] = v2; d[i + 3 * stride] = v3;
	}
	for (; i < n; i += stride) d[i] = s[i];
}

// reduce_chunk sets out[e] = sum over world slots of slot[e], for e in
// [start, start+count), accumulating in float: slot s starts at
// slots + s*stride elements. stride is a multiple of 8 elements and every
// base is 16-byte aligned, so all operands share one alignment: a scalar
// head, 16-byte vectors, a scalar tail.
extern "C" __global__ void reduce_chunk(u64 out, u64 slots, u64 stride, u64 world, u64 start, u64 count) {
	elem_t* o = (elem_t*)out;
	const elem_t* sl = (const elem_t*)slots;
	const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x, nth = (u64)gridDim.x * blockDim.x;
	u64 head = (8 - start % 8) % 8;
	if (head > count) head = count;
	const u64 body = (count - head) / 8, tail0 = start + head + body * 8, end = start + count;
	for (u64 e = start + tid; e < start + head; e += nth) {
		float a = 0;
		for (u64 q = 0; q < world; q++) a += from_elem(sl[q * stride + e]);
		o[e] = to_elem(a);
	}
	for (u64 v = tid; v < body; v += nth) {
		const u64 e = start + head + v * 8;
		// Every slot's vector is loaded before the first is summed: up to
		// MAX_WORLD independent 16-byte loads in flight per thread.
		uint4 x[MAX_WORLD];
#pragma unroll
		for (int q = 0; q < MAX_WORLD; q++)
			if (q < world) x[q] = *(const uint4*)(sl + q * stride + e);
		float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
		for (int q = 0; q < MAX_WORLD; q++) {
			if (q >= world) break;
			const u32 w[4] = {x[q].x, x[q].y, x[q].z, x[q].w};
#pragma unroll
			for (int h = 0; h < 4; h++) {
				a[2 * h] += from_elem((elem_t)(w[h] & 0xffffu));
				a[2 * h + 1] += from_elem((elem_t)(w[h] >> 16));
			}
		}
		uint4 r;
		r.x = (u32)to_elem(a[0]) | (u32)to_elem(a[1]) << 16;
		r.y = (u32)to_elem(a[2]) | (u32)to_elem(a[3]) << 16;
		r.z = (u32)to_elem(a[4]) | (u32)to_elem(a[5]) << 16;
		r.w = (u32)to_elem(a[6]) | (u32)to_elem(a[7]) << 16;
		*(uint4*)(o + e) = r;
	}
	for (u64 e = tail0 + tid; e < end; e += nth) {
		float a = 0;
		for (u64 q = 0; q < world; q++) a += from_elem(sl[q * stride + e]);
		o[e] = to_elem(a);
	}
}

#ifdef SYMM_PAD_SLOTS
// end_barrier ends a fused call in one launch where a memset and the team
// barrier took two (about 4 us less, 2026-11-26): it clears this rank's
// flag region (words [0, words) at flags; every flag of the call is set by
// now, the GEMM having waited for each), then meets every peer at the team
// barrier (barrier.cuh, prepended by the Runner; the Team's slot, so it
// pairs with Team.Barrier). A peer's next call sets flags here only after
// passing this barrier, and the clear is fenced before this rank's signal.
// Launched as the fused GEMM's programmatic dependent (Runner.endBarrier),
// its block may start while the GEMM still runs: griddepcontrol.wait holds
// it until the GEMM has completed and its writes are visible (a no-op
// after a plain launch).
extern "C" __global__ void end_barrier(u64 ptrs, u64 rank, u64 world, u64 flags, u64 words) {
#if __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
	for (u64 i = threadIdx.x; i < words; i += blockDim.x) ((volatile u32*)flags)[i] = 0u;
	__threadfence_system();
	symm_block_barrier((const u64*)ptrs, (int)rank, (int)world, SYMM_PAD_SLOTS - 1);
}

// SYMM_KIND_FLAG is cudamem.KindFlag: a stream's wait for a peer's flag.
#define SYMM_KIND_FLAG 5
// wait_flags is a stream's wait for flags in this rank's region, one per
// source rank of the mask sources, source q's at flags + q*stride (a
// pull's ready flag, a pushed chunk's, every rank's partial of a chunk:
// Runner.consume, gpu.FlagWaits), bounded as barrier.cuh's waits are.
// One warp: lane q (< world) polls source q's flag until it reaches value,
// then clears it and ends; once every lane has, the work after the kernel
// on the stream follows in stream order. It replaces cuStreamWaitValue32,
// which has no bound: a dead or late peer hung the stream, and the call's
// end barrier behind it, for ever. Past SYMM_TIMEOUT_NS (from the first
// clock check, as symm_wait) a lane poisons the workspace naming this
// rank's wait for q (cudamem.KindFlag) and ends without the flag: the rest
// of the call runs on whatever is in the buffers (wrong results, as after
// any timed-out wait) and the next call on the workspace raises. On a
// workspace already poisoned a lane ends at once, spreading the poison to
// the peers and this rank's host word (symm_poisoned). "Reaches" is
// cuStreamWaitValue32's GEQ, the int32 difference, so epochs may wrap. A
// kernel node, it captures into CUDA graphs as any launch does.
extern "C" __global__ void wait_flags(u64 ptrs, u64 rank, u64 world, u64 flags, u64 stride, u64 sources, u64 value) {
	const int q = (int)threadIdx.x, r = (int)rank, w = (int)world;
	if (q >= w || !((sources >> q) & 1u)) return;
	const u64* p = (const u64*)ptrs;
	u32* f = (u32*)(flags + (u64)q * stride);
	// The poison word's load is in flight with the first poll's.
	const u32 poisoned = *(volatile u32*)symm_flag(p, w, r);
	u64 start = 0;
	for (u32 i = 0;; i++) {
		const u32 v = symm_load_acquire(f);
		if (poisoned != 0) break;
		if ((int)(v - (u32)value) >= 0) {
			*(volatile u32*)f = 0u;
			return;
		}
		if ((i & 1023u) == 1023u) {
			const u64 now = symm_now();
			if (start == 0) {
				start = now;
			} else if (*(volatile u32*)symm_flag(p, w, r) != 0) {
				break;
			} else if (now - start > SYMM_TIMEOUT_NS) {
				symm_poison(p, r, w, SYMM_POISON(SYMM_KIND_FLAG, r, q));
				return;
			}
		}
	}
	symm_poisoned(p, r, w);
}
#endif

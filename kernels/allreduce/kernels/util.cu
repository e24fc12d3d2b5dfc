// Input generation and checking for the all-reduce, preceded by barrier.cuh
// and common.cuh. uniform() is sdk.Uniform bit for bit (splitmix64), so any
// rank can regenerate any rank's input from (seed, rank, i) and the check
// needs no data exchange: it recomputes the exact sum of all ranks' rounded
// inputs in double and compares it with this rank's output.

__device__ __forceinline__ u64 splitmix64(u64 x) {
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

// uniform is sdk.Uniform: a value in [-1, 1) for element i of rank's input.
__device__ __forceinline__ double uniform(u64 seed, u64 rank, u64 i) {
	u64 x = seed ^ (rank + 1) * 0x9E3779B97F4A7C15ull ^ i * 0xD1B54A32D192ED03ull;
	x = splitmix64(x);
	return (double)(x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

#if DTYPE_BF16
typedef unsigned short elem_t;
// to_elem rounds to bf16 (nearest even) through float.
__device__ __forceinline__ elem_t to_elem(double d) { return (elem_t)(bf16x2((float)d, 0.f) & 0xffffu); }
__device__ __forceinline__ double from_elem(elem_t e) { return (double)__uint_as_float((u32)e << 16); }
#elif DTYPE_F16
typedef unsigned short elem_t;
__device__ __forceinline__ elem_t to_elem(double d) { return (elem_t)(f16x2((float)d, 0.f) & 0xffffu); }
__device__ __forceinline__ double from_elem(elem_t e) { return (double)h2f(e); }
#else
typedef float elem_t;
__device__ __forceinline__ elem_t to_elem(double d) { return (float)d; }
__device__ __forceinline__ double from_elem(elem_t e) { return (double)e; }
#endif

// fill writes rank's input for seed: dst[i] = round(uniform(seed, rank, i)).
extern "C" __global__ void fill(u64 dst, u64 n, u64 seed, u64 rank) {
	elem_t* d = (elem_t*)dst;
	for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
		d[i] = to_elem(uniform(seed, rank, i));
}

// check accumulates into res[0..2]: sum (out-ref)^2, sum ref^2, and the
// count of NaN/Inf outputs (poisoned elements that were never written).
extern "C" __global__ void check(u64 out, u64 n, u64 seed, u64 res) {
	const elem_t* o = (const elem_t*)out;
	double num = 0, den = 0, bad = 0;
	for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
		double ref = 0;
		for (int q = 0; q < WORLD; q++) ref += from_elem(to_elem(uniform(seed, q, i)));
		const double g = from_elem(o[i]);
		if (g - g != 0.0) { // NaN or Inf
			bad += 1;
		} else {
			num += (g - ref) * (g - ref);
		}
		den += ref * ref;
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

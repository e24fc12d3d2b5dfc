// Shared by allreduce.cu and util.cu. Compile-time config (from the Go side):
//   DTYPE_BF16  1 for bf16 elements
//   DTYPE_F16   1 for f16 elements (both 0: f32)
//   WORLD       ranks (GPUs) in the team
// Data moves as 16-byte vectors (uint4): EPV elements each.
#ifndef DTYPE_BF16
#error DTYPE_BF16 must be defined
#endif
#ifndef WORLD
#error WORLD must be defined
#endif
#ifndef DTYPE_F16
#define DTYPE_F16 0
#endif
#if DTYPE_BF16 || DTYPE_F16
#define EPV 8
#else
#define EPV 4
#endif

#if DTYPE_F16
// h2f widens an f16 exactly; f16x2 packs two floats with round-to-nearest-
// even (lo in the low half).
__device__ __forceinline__ float h2f(unsigned short h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}
__device__ __forceinline__ u32 f16x2(float lo, float hi) {
	u32 r;
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
}
#endif

// acc adds the EPV elements of v to a, in float: bf16 widens exactly by a
// shift, and summing in float keeps the error at the final rounding only.
__device__ __forceinline__ void acc(float (&a)[EPV], uint4 v) {
#if DTYPE_BF16
	const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int k = 0; k < 4; k++) {
		a[2 * k] += __uint_as_float(w[k] << 16);
		a[2 * k + 1] += __uint_as_float(w[k] & 0xffff0000u);
	}
#elif DTYPE_F16
	const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int k = 0; k < 4; k++) {
		a[2 * k] += h2f((unsigned short)(w[k] & 0xffffu));
		a[2 * k + 1] += h2f((unsigned short)(w[k] >> 16));
	}
#else
	a[0] += __uint_as_float(v.x);
	a[1] += __uint_as_float(v.y);
	a[2] += __uint_as_float(v.z);
	a[3] += __uint_as_float(v.w);
#endif
}

#if DTYPE_BF16
// bf16x2 packs two floats with round-to-nearest-even (lo in the low half).
__device__ __forceinline__ u32 bf16x2(float lo, float hi) {
	u32 r;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
}
#endif

__device__ __forceinline__ uint4 pack(const float (&a)[EPV]) {
	uint4 v;
#if DTYPE_BF16
	v.x = bf16x2(a[0], a[1]);
	v.y = bf16x2(a[2], a[3]);
	v.z = bf16x2(a[4], a[5]);
	v.w = bf16x2(a[6], a[7]);
#elif DTYPE_F16
	v.x = f16x2(a[0], a[1]);
	v.y = f16x2(a[2], a[3]);
	v.z = f16x2(a[4], a[5]);
	v.w = f16x2(a[6], a[7]);
#else
	v.x = __float_as_uint(a[0]);
	v.y = __float_as_uint(a[1]);
	v.z = __float_as_uint(a[2]);
	v.w = __float_as_uint(a[3]);
#endif
	return v;
}

// A caller's tensor, for the kernels that read or write one directly (the
// Lamport algorithms, the push two-shots' direct entry): n elements at
// address t, any n and any alignment. aligned: t is 16-byte aligned, so
// whole vectors move as one access.
//
// load_vec is vector i of the tensor, elements past n +0.0: a 16-byte load
// where the tensor allows one, else element by element.
__device__ __forceinline__ uint4 load_vec(u64 t, u64 n, u64 i, bool aligned) {
	const u64 e0 = i * EPV;
	if (aligned && e0 + EPV <= n) return ((const uint4*)t)[i];
	u32 w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
	for (int j = 0; j < EPV; j++) {
		if (e0 + j < n) {
#if EPV == 8
			w[j / 2] |= (u32)((const unsigned short*)t)[e0 + j] << (16 * (j & 1));
#else
			w[j] = ((const u32*)t)[e0 + j];
#endif
		}
	}
	return make_uint4(w[0], w[1], w[2], w[3]);
}

// store_vec writes v as vector i of the tensor, never past element n.
__device__ __forceinline__ void store_vec(u64 t, u64 n, u64 i, uint4 v, bool aligned) {
	const u64 e0 = i * EPV;
	if (aligned && e0 + EPV <= n) {
		((uint4*)t)[i] = v;
		return;
	}
	const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int j = 0; j < EPV; j++) {
		if (e0 + j < n) {
#if EPV == 8
			((unsigned short*)t)[e0 + j] = (unsigned short)(w[j / 2] >> (16 * (j & 1)));
#else
			((u32*)t)[e0 + j] = w[j];
#endif
		}
	}
}

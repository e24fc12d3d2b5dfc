// Package e4m3 owns the one Go codec of OCP FP8 E4M3FN (the e4m3 of
// torch.float8_e4m3fn: no infinities, 0x7f and 0xff are NaN), bit for bit
// the rule of the FP8 generator in kernels/gemm/gpu/kernels/gemm_util.cu, so
// that Go tests and host-side data agree with what the GPU writes. No
// imports beyond math and no cgo: any package may use it, the CUDA
// bindings' tests included.
package e4m3

import "math"

// Max is the largest finite e4m3 value.
const Max = 448

// Encode rounds f to e4m3 ("fn": no infinities, 0x7f and 0xff are NaN) by
// kernels/gemm/gpu/kernels/gemm_util.cu's e4m3_of rule, that of cvt.rn.satfinite.e4m3x2.f32: to
// nearest, ties to even, saturating at ±448 (infinities too); NaN gives
// 0x7f.
func Encode(f float32) uint8 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return 0x7f
	}
	s := uint8(b>>24) & 0x80
	a := min(float32(math.Abs(float64(f))), Max)
	if a < 1.0/64 {
		// Subnormals step by 2^-9; 8 carries into the smallest normal.
		return s | uint8(math.RoundToEven(float64(a*512)))
	}
	ab := math.Float32bits(a)
	m, r := ab&0x7fffff, ab&0xfffff
	q := ((ab>>23)-120)<<3 | m>>20
	if r > 0x80000 || r == 0x80000 && q&1 == 1 {
		q++
	}
	return s | uint8(q)
}

// Value is q's value, exactly (NaN for 0x7f and 0xff).
func Value(q uint8) float32 {
	e, m := q>>3&15, q&7
	var v float32
	switch {
	case e == 15 && m == 7:
		return float32(math.NaN())
	case e == 0:
		v = float32(m) / 512
	default:
		v = math.Float32frombits(uint32(e+120)<<23 | uint32(m)<<20)
	}
	if q&0x80 != 0 {
		return -v
	}
	return v
}

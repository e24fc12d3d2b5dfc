//go:build cuda

package cublaslt

import (
	"math"
	"testing"
)

// The host codecs the GPU test builds its operands and reads D with.

// e4m3Max is the largest finite e4m3 (OCP E4M3FN: no infinities, one NaN
// pattern per sign, S.1111.111).
const e4m3Max = 448

// e4m3Encode rounds x to the nearest e4m3 (ties to even), saturating at
// ±448; NaN encodes as 0x7f.
func e4m3Encode(x float64) byte {
	if math.IsNaN(x) {
		return 0x7f
	}
	var sign byte
	if math.Signbit(x) {
		sign, x = 0x80, -x
	}
	if x >= e4m3Max {
		return sign | 0x7e
	}
	if x < 0x1p-6 { // subnormal: m·2^-9, m in 0..8 (8 is the smallest normal)
		return sign | byte(math.RoundToEven(x*0x1p9))
	}
	_, e := math.Frexp(x) // x = f·2^e, f in [0.5, 1)
	e--                   // x = s·2^e, s in [1, 2)
	mant := math.RoundToEven((math.Ldexp(x, -e) - 1) * 8)
	if mant == 8 {
		mant, e = 0, e+1
	}
	bits := byte(e+7)<<3 | byte(mant)
	if bits > 0x7e {
		bits = 0x7e
	}
	return sign | bits
}

// e4m3Decode is the value of e4m3 bits b.
func e4m3Decode(b byte) float64 {
	exp, mant := int(b>>3&15), float64(b&7)
	var v float64
	switch {
	case exp == 15 && mant == 7:
		v = math.NaN()
	case exp == 0:
		v = math.Ldexp(mant, -9)
	default:
		v = math.Ldexp(1+mant/8, exp-7)
	}
	if b&0x80 != 0 {
		v = -v
	}
	return v
}

// bf16Encode rounds x to the nearest bf16 (ties to even).
func bf16Encode(x float32) uint16 {
	u := math.Float32bits(x)
	if x != x {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u >> 16 & 1)) >> 16)
}

// bf16Decode is the value of bf16 bits h.
func bf16Decode(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

func TestE4M3Decode(t *testing.T) {
	for _, c := range []struct {
		b    byte
		want float64
	}{
		{0x00, 0}, {0x01, 0x1p-9}, {0x07, 7 * 0x1p-9}, {0x08, 0x1p-6}, {0x38, 1}, {0x39, 1.125},
		{0x40, 2}, {0x7e, 448}, {0xfe, -448}, {0xb8, -1}, {0x81, -0x1p-9},
	} {
		if got := e4m3Decode(c.b); got != c.want {
			t.Errorf("decode %#02x = %v, want %v", c.b, got, c.want)
		}
	}
	if !math.IsNaN(e4m3Decode(0x7f)) || !math.IsNaN(e4m3Decode(0xff)) {
		t.Error("0x7f and 0xff must decode to NaN")
	}
}

func TestE4M3Encode(t *testing.T) {
	// Every finite value encodes to itself.
	for b := 0; b < 256; b++ {
		v := e4m3Decode(byte(b))
		if math.IsNaN(v) {
			continue
		}
		got := e4m3Encode(v)
		if v == 0 { // ±0: either sign is right
			if got&0x7f != 0 {
				t.Errorf("encode(%v) = %#02x", v, got)
			}
			continue
		}
		if got != byte(b) {
			t.Errorf("encode(decode(%#02x) = %v) = %#02x", b, v, got)
		}
	}
	for _, c := range []struct {
		x    float64
		want byte
	}{
		{1.0625, 0x38},       // halfway 1 and 1.125: even mantissa 0
		{1.1875, 0x3a},       // halfway 1.125 and 1.25: even mantissa 2
		{1.07, 0x39},         // above halfway
		{0x1.8p-10, 0x01},    // 1.5·2^-10 = 0.75·2^-9: rounds to 2^-9
		{0x1p-10, 0x00},      // halfway 0 and 2^-9: even, 0
		{7.5 * 0x1p-9, 0x08}, // halfway 7·2^-9 and 2^-6 = 8·2^-9: even, 2^-6
		{1.9375, 0x40},       // halfway 1.875 and 2: even, 2 (the exponent carries)
		{432, 0x7e},          // halfway 416 and 448: even, 448
		{460, 0x7e}, {1e9, 0x7e}, {-1e9, 0xfe}, {math.Inf(1), 0x7e},
		{-3, 0xc0 | 0x04}, // -1.5·2^1: sign, exponent 8, mantissa 4
	} {
		if got := e4m3Encode(c.x); got != c.want {
			t.Errorf("encode(%v) = %#02x (%v), want %#02x (%v)", c.x, got, e4m3Decode(got), c.want, e4m3Decode(c.want))
		}
	}
	if e4m3Encode(math.NaN()) != 0x7f {
		t.Error("NaN must encode as 0x7f")
	}
}

func TestBF16(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want uint16
		val  float64
	}{
		{1, 0x3f80, 1}, {-2, 0xc000, -2}, {0, 0, 0},
		{1 + 0x1p-8, 0x3f80, 1}, // halfway: even
		{1 + 0x1p-7 + 0x1p-8, 0x3f82, 1 + 0x1p-6},
		{1 + 0x1p-8 + 0x1p-12, 0x3f81, 1 + 0x1p-7},
	} {
		if got := bf16Encode(c.x); got != c.want {
			t.Errorf("bf16Encode(%v) = %#04x, want %#04x", c.x, got, c.want)
		}
		if got := bf16Decode(c.want); got != c.val {
			t.Errorf("bf16Decode(%#04x) = %v, want %v", c.want, got, c.val)
		}
	}
	if !math.IsNaN(bf16Decode(bf16Encode(float32(math.NaN())))) {
		t.Error("NaN must stay NaN")
	}
}

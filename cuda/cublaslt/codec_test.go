//go:build cuda

package cublaslt

import (
	"math"
	"testing"
)

// The host codec the GPU test reads D with (e4m3: cuda/e4m3).

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

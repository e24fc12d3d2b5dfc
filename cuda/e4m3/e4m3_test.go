package e4m3

import (
	"math"
	"testing"
)

func TestEncode(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint8
	}{
		{0, 0x00},
		{float32(math.Copysign(0, -1)), 0x80},
		{1, 0x38},
		{-1, 0xb8},
		{0.5, 0x30},
		{240, 0x77},
		{448, 0x7e},
		{-448, 0xfe},
		{440, 0x7e},
		{432, 0x7e},    // tie of 416 (odd mantissa) and 448: the even one
		{400, 0x7c},    // tie of 384 (even) and 416
		{1.0625, 0x38}, // tie of 1 (even) and 1.125
		{1.1875, 0x3a}, // tie of 1.125 (odd) and 1.25
		{math.Nextafter32(1.0625, 2), 0x39},
		{math.Nextafter32(1.0625, 0), 0x38},
		{1.0 / 512, 0x01},   // smallest subnormal
		{-1.0 / 512, 0x81},  //
		{3.0 / 512, 0x03},   //
		{1.0 / 1024, 0x00},  // tie of 0 and 2^-9: 0
		{3.0 / 1024, 0x02},  // tie of 2^-9 and 2^-8: the even one
		{1.0 / 2048, 0x00},  //
		{15.0 / 1024, 0x08}, // tie of 7 * 2^-9 and the smallest normal 2^-6
		{1.0 / 64, 0x08},    // smallest normal
		{7.0 / 512, 0x07},   // largest subnormal
		{1e-30, 0x00},       //
		{464, 0x7e},         // saturates
		{500, 0x7e},         //
		{-1e30, 0xfe},       //
		{float32(math.Inf(1)), 0x7e},
		{float32(math.Inf(-1)), 0xfe},
		{float32(math.NaN()), 0x7f},
		{-float32(math.NaN()), 0x7f},
	} {
		if got := Encode(c.f); got != c.want {
			t.Errorf("Encode(%g) = %#02x, want %#02x", c.f, got, c.want)
		}
	}
}

func TestValue(t *testing.T) {
	for _, c := range []struct {
		q    uint8
		want float32
	}{
		{0x00, 0}, {0x38, 1}, {0xb8, -1}, {0x7e, 448}, {0xfe, -448}, {0x01, 1.0 / 512},
		{0x07, 7.0 / 512}, {0x08, 1.0 / 64}, {0x77, 240}, {0x3f, 1.875},
	} {
		if got := Value(c.q); got != c.want {
			t.Errorf("Value(%#02x) = %g, want %g", c.q, got, c.want)
		}
	}
	if v := Value(0x80); v != 0 || !math.Signbit(float64(v)) {
		t.Errorf("Value(0x80) = %g, want -0", v)
	}
	for _, q := range []uint8{0x7f, 0xff} {
		if v := Value(q); !math.IsNaN(float64(v)) {
			t.Errorf("Value(%#02x) = %g, want NaN", q, v)
		}
	}
}

// TestEncodeIsNearest checks Encode against a search over the finite
// magnitudes: the nearest, on a tie the even code, saturating at 448, with
// the input's sign.
func TestEncodeIsNearest(t *testing.T) {
	var inputs []float32
	for q := 0; q <= 0x7e; q++ {
		// Each value, its neighbours, and the midpoints to the next ones.
		v := float64(Value(uint8(q)))
		for _, w := range []float64{v, v + 0.5*(float64(Value(uint8(min(q+1, 0x7e))))-v)} {
			f := float32(w)
			inputs = append(inputs, f, -f, math.Nextafter32(f, 1e9), math.Nextafter32(f, -1e9))
		}
	}
	for i := 0; i < 20000; i++ {
		inputs = append(inputs, float32(-500+float64(i)/20), float32(math.Ldexp(float64(i), -20)))
	}
	for _, f := range inputs {
		c := min(math.Abs(float64(f)), Max)
		best := 0
		for q := 1; q <= 0x7e; q++ {
			d, bd := math.Abs(float64(Value(uint8(q)))-c), math.Abs(float64(Value(uint8(best)))-c)
			if d < bd || d == bd && q&1 == 0 {
				best = q
			}
		}
		want := uint8(best)
		if math.Signbit(float64(f)) {
			want |= 0x80
		}
		if got := Encode(f); got != want {
			t.Fatalf("Encode(%g) = %#02x (%g), nearest is %#02x (%g)", f, got, Value(got), want, Value(want))
		}
	}
}

func TestE4M3RoundTrip(t *testing.T) {
	for q := 0; q < 256; q++ {
		v := Value(uint8(q))
		if math.IsNaN(float64(v)) {
			continue
		}
		if got := Encode(v); got != uint8(q) {
			t.Errorf("Encode(Value(%#02x) = %g) = %#02x", q, v, got)
		}
	}
}

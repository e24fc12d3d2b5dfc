package allreduce

import (
	"math"
	"testing"
)

// TestDirectCaseFor: Verify's direct call is the same on every rank (a
// function of the shared seed), at most a padding unit short of n and
// never empty, needs padding for most seeds, and is misaligned by one
// element on odd seeds (bit 32).
func TestDirectCaseFor(t *testing.T) {
	cases := []struct {
		n         int64
		elt       int
		world     int
		seed      uint64
		wantN     int64
		wantOff   int64
		wantPadTo int64 // Padded(wantN): more than wantN where a tail is left
	}{
		{1 << 20, 2, 4, 0, 1 << 20, 0, 1 << 20},
		{1 << 20, 2, 4, 5, 1<<20 - 5, 0, 1 << 20},
		{1 << 20, 2, 4, 1<<32 | 31, 1<<20 - 31, 2, 1 << 20}, // unit 32: 31 short, offset one bf16
		{1 << 20, 4, 8, 1<<32 | 33, 1<<20 - 1, 4, 1 << 20},  // unit 32 f32 elements: 33 % 32 = 1
		{3, 2, 2, 7, 1, 0, 16},                              // never below one element
		{1000, 2, 2, 1<<33 | 3, 997, 0, 1008},               // bit 33 is not the offset's
	}
	for _, c := range cases {
		got := directCaseFor(c.n, c.elt, c.world, c.seed)
		if got.n != c.wantN || got.off != c.wantOff {
			t.Errorf("directCaseFor(%d, %d, %d, %#x) = n %d off %d, want n %d off %d", c.n, c.elt, c.world, c.seed, got.n, got.off, c.wantN, c.wantOff)
		}
		if p := Padded(got.n, c.elt, c.world); p != c.wantPadTo {
			t.Errorf("n %d pads to %d, want %d", got.n, p, c.wantPadTo)
		}
		if got.seed == c.seed {
			t.Errorf("seed %#x: the direct call's inputs must differ from the in-place call's", c.seed)
		}
		if again := directCaseFor(c.n, c.elt, c.world, c.seed); again != got {
			t.Errorf("seed %#x: %+v then %+v", c.seed, got, again)
		}
	}
}

// TestChecked: the check kernel's sums to a verdict, NaN/Inf outputs and
// an empty reference failing whatever the error.
func TestChecked(t *testing.T) {
	for _, c := range []struct {
		num, den, bad float64
		rel           float64
		ok            bool
	}{
		{0, 4, 0, 0, true},
		{1e-6, 1, 0, 1e-3, true},
		{1e-2, 1, 0, 0.1, false},
		{0, 4, 1, math.Inf(1), false},
		{0, 0, 0, math.Inf(1), false},
	} {
		rel, ok := checked(c.num, c.den, c.bad, 1e-2)
		if ok != c.ok || math.Abs(rel-c.rel) > 1e-12 && !(math.IsInf(rel, 1) && math.IsInf(c.rel, 1)) {
			t.Errorf("checked(%g, %g, %g) = %g %v, want %g %v", c.num, c.den, c.bad, rel, ok, c.rel, c.ok)
		}
	}
}

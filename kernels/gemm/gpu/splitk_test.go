package gpu

import (
	"strings"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

// TestValidateSplitK: split-K tiles run plain products only (agmm on one
// rank), of at most SplitKMaxRows rows and SplitKMinK of K per slice, and
// a k-block per slice whatever the space allows.
func TestValidateSplitK(t *testing.T) {
	sk4 := ImplFused + ":64x128:s6:c2:g8:pp:sk4"
	one := func(impl string) map[string]space.Value {
		return map[string]space.Value{ParamImpl: space.Str(impl), ParamChunks: space.Int(1)}
	}
	for _, c := range []struct {
		name    string
		kernel  Variant
		set     map[string]space.Value
		m, n, k int
		world   int
		wantErr string
	}{
		{"a plain product of 64 rows", VariantAGMM, one(sk4), 64, 1280, 8192, 1, ""},
		{"the most rows", VariantAGMM, one(sk4), SplitKMaxRows, 1280, 8192, 1, ""},
		{"too many rows", VariantAGMM, one(sk4), SplitKMaxRows + 64, 1280, 8192, 1, "at most 256 rows"},
		{"the least K per slice", VariantAGMM, one(sk4), 64, 1280, 4 * SplitKMinK, 1, ""},
		{"too little K per slice", VariantAGMM, one(sk4), 64, 1280, 4*SplitKMinK - 8, 1, "under 512"},
		{"an all-gather", VariantAGMM, one(sk4), 128, 1280, 8192, 2, "only plain products"},
		{"a reduce-scatter", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(sk4), ParamChunks: space.Int(1)}, 128, 1280, 8192, 2, "only plain products"},
		{"a reduce-scatter's epilogue", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(sk4), ParamReduce: space.Str(ReduceEpilogue)}, 128, 1280, 8192, 2, "only plain products"},
		{"a reduce-scatter of one rank (its product)", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(sk4), ParamChunks: space.Int(1)}, 64, 1280, 8192, 1, ""},
		{"a reduce-scatter of one rank, too many rows", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(sk4), ParamChunks: space.Int(1)}, SplitKMaxRows + 64, 1280, 8192, 1, "at most 256 rows"},
		{"the unsplit tile anywhere", VariantAGMM, one(ImplFused + ":128x256:s4:c2:g8"), 8192, 1280, 8192, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.kernel.Validate(with(c.kernel, c.set), problem(t, c.m, c.n, c.k, c.world))
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one saying %q", err, c.wantErr)
			}
		})
	}
}

// TestValidateStreamK: stream-K tiles run plain products of any size
// (a call of one rank), never a reduce-scatter or an all-gather.
func TestValidateStreamK(t *testing.T) {
	st, err := hopper.ParseTile("128x256:s4:c2:g8:st")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		kernel  Variant
		m       int
		world   int
		wantErr string
	}{
		{"an agmm of one rank", VariantAGMM, 8192, 1, ""},
		{"a matmulrs of one rank", VariantMatmulRS, 64, 1, ""},
		{"an all-gather", VariantAGMM, 8192, 2, "only plain products"},
		{"a reduce-scatter", VariantMatmulRS, 8192, 4, "only plain products"},
	} {
		err := validateSplitK(c.kernel, st, problem(t, c.m, 3584, 8192, c.world))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: rejected: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.wantErr)
		}
	}
}

// TestSearchedSplitKReachable: every searched split-K tile runs on some
// issue 56 shape at 64 rows on one rank, so a search of such a product
// measures it; and none runs where it may not.
func TestSearchedSplitKReachable(t *testing.T) {
	n := 0
	for _, name := range hopper.Searched {
		tl, err := hopper.ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		if tl.KSplits() < 2 {
			continue
		}
		n++
		impl := map[string]space.Value{ParamImpl: space.Str(ImplFused + ":" + name), ParamChunks: space.Int(1)}
		if err := VariantAGMM.Validate(with(VariantAGMM, impl), problem(t, 64, 1280, 8192, 1)); err != nil {
			t.Errorf("%s at 64x1280x8192: %v", name, err)
		}
		if err := VariantAGMM.Validate(with(VariantAGMM, impl), problem(t, 1024, 1280, 8192, 1)); err == nil {
			t.Errorf("%s valid at 1024 rows", name)
		}
	}
	if n == 0 {
		t.Error("no split-K tile is searched")
	}
}

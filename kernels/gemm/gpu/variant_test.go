package gpu

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm"
)

// TestVariant: names parse to their variant and back, in text and JSON;
// any other name is an error naming it and the two kernels.
func TestVariant(t *testing.T) {
	for _, v := range Variants {
		p, err := ParseVariant(v.String())
		if err != nil || p != v {
			t.Errorf("ParseVariant(%q) = %v, %v", v, p, err)
		}
		b, err := json.Marshal(map[string]Variant{"kernel": v})
		if err != nil || string(b) != `{"kernel":"`+v.String()+`"}` {
			t.Errorf("marshal %s: %s, %v", v, b, err)
		}
		var back struct{ Kernel Variant }
		if err := json.Unmarshal(b, &back); err != nil || back.Kernel != v {
			t.Errorf("unmarshal %s: %v, %v", b, back.Kernel, err)
		}
	}
	if VariantAGMM.String() != AGMM || VariantMatmulRS.String() != MatmulRS {
		t.Errorf("names %s, %s", VariantAGMM, VariantMatmulRS)
	}
	for _, name := range []string{"", "gemm", "AGMM"} {
		if _, err := ParseVariant(name); err == nil || !strings.Contains(err.Error(), `want "agmm" or "matmulrs"`) {
			t.Errorf("ParseVariant(%q): %v", name, err)
		}
	}
	if _, err := json.Marshal(Variant(0)); err == nil {
		t.Error("marshal of the zero Variant: no error")
	}
}

func TestBarrierFirst(t *testing.T) {
	for _, c := range []struct {
		v      Variant
		impl   string
		reduce string
		want   bool
	}{
		{VariantAGMM, ImplFused, "", true},
		{VariantAGMM, ImplPipeline, "", false},
		{VariantMatmulRS, ImplFused, ReduceEpilogue, true},
		{VariantMatmulRS, ImplFused, ReduceKernel, false},
		{VariantMatmulRS, ImplPipeline, ReduceEpilogue, false},
		{VariantMatmulRS, ImplPipeline, ReduceKernel, false},
	} {
		if got := BarrierFirst(c.v, Config{Impl: c.impl, Reduce: c.reduce}); got != c.want {
			t.Errorf("BarrierFirst(%s, impl=%s reduce=%s) = %v, want %v", c.v, c.impl, c.reduce, got, c.want)
		}
	}
}

// TestFusedEndBarrier: a fused call of one rank (either kernel: a plain
// product, FusedPlain) ends without the end barrier, every larger team
// with it; an agmm plan of one rank flags nothing, which the runner's
// world-1 agmm tables still upload.
func TestFusedEndBarrier(t *testing.T) {
	for _, c := range []struct {
		v     Variant
		world int
		want  bool
	}{
		{VariantAGMM, 1, false},
		{VariantAGMM, 2, true},
		{VariantAGMM, 8, true},
		{VariantMatmulRS, 1, false},
		{VariantMatmulRS, 2, true},
		{VariantMatmulRS, 4, true},
	} {
		p := Problem{Dims: gemm.Dims{M: 64 * c.world, N: 8192, K: 8192}, World: c.world}
		if got := FusedEndBarrier(c.v, p); got != c.want {
			t.Errorf("FusedEndBarrier(%s, world %d) = %v, want %v", c.v, c.world, got, c.want)
		}
		if got := FusedPlain(c.v, p); got == c.want {
			t.Errorf("FusedPlain(%s, world %d) = %v, want %v", c.v, c.world, got, !c.want)
		}
	}
	for _, m := range []int{64, 100, 4096} {
		for _, push := range []bool{true, false} {
			for i, f := range PlanFusedAG(m, 1, 0, 1, 128, push).Flag {
				if f != NoFlag {
					t.Errorf("PlanFusedAG(m %d, world 1, push %v): span %d flagged %d; the end barrier would have a flag to clear", m, push, i, f)
				}
			}
		}
	}
}

package gpu

import (
	"encoding/json"
	"strings"
	"testing"
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

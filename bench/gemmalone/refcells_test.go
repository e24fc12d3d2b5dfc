package main

import "testing"

func TestCellsOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refs   []refInfo
		around [][2]float64
		want   refCells
	}{
		{"bf16 alone", []refInfo{{algo: 2}}, [][2]float64{{10, 12}},
			refCells{ratio: "1.100", name: "cublaslt", algo: 2, before: 10, after: 12, fp8Us: "-", fp8Ratio: "-"}},
		{"bf16 and FP8", []refInfo{{algo: 1}, {fp8: true, algo: 3}}, [][2]float64{{10, 10}, {6, 4}},
			refCells{ratio: "1.000", name: "cublaslt", algo: 1, before: 10, after: 10, fp8Us: "5.0", fp8Ratio: "0.500"}},
		{"FP8 alone (-fp8-ref-only)", []refInfo{{fp8: true, algo: 0}}, [][2]float64{{9, 11}},
			refCells{ratio: "-", name: "cublaslt-fp8", algo: 0, before: 9, after: 11, fp8Us: "10.0", fp8Ratio: "1.000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cellsOf(tc.refs, tc.around, 10); got != tc.want {
				t.Errorf("cellsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

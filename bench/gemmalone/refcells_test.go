package main

import (
	"reflect"
	"testing"
)

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

func TestBracketSteps(t *testing.T) {
	for _, tc := range []struct {
		name          string
		nrefs         int
		kernelOutside bool
		times         []float64
		wantSteps     []int
		wantUs        float64
		wantKernel    [2]float64
		wantAround    [][2]float64
	}{
		{"one reference around the kernel", 1, false, []float64{9, 10, 11},
			[]int{0, -1, 0}, 10, [2]float64{10, 10}, [][2]float64{{9, 11}}},
		{"two references around the kernel, mirrored", 2, false, []float64{20, 9, 10, 11, 22},
			[]int{0, 1, -1, 1, 0}, 10, [2]float64{10, 10}, [][2]float64{{20, 22}, {9, 11}}},
		{"the kernel around one reference", 1, true, []float64{10, 9, 12},
			[]int{-1, 0, -1}, 11, [2]float64{10, 12}, [][2]float64{{9, 9}}},
		{"the kernel around two references", 2, true, []float64{10, 20, 9, 14},
			[]int{-1, 0, 1, -1}, 12, [2]float64{10, 14}, [][2]float64{{20, 20}, {9, 9}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := bracketSteps(tc.nrefs, tc.kernelOutside)
			if !reflect.DeepEqual(steps, tc.wantSteps) {
				t.Fatalf("steps %v, want %v", steps, tc.wantSteps)
			}
			us, kernel, around := bracketTimes(steps, tc.times, tc.nrefs)
			if us != tc.wantUs || kernel != tc.wantKernel || !reflect.DeepEqual(around, tc.wantAround) {
				t.Fatalf("got %v %v %v, want %v %v %v", us, kernel, around, tc.wantUs, tc.wantKernel, tc.wantAround)
			}
		})
	}
}

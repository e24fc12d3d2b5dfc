package gpu

import (
	"fmt"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// Dtype is a GPU GEMM problem's number format, parsed once from its name
// (ParseDtype) where a problem comes in. Everything that differs by dtype
// asks it: element sizes, scales, the fused GEMM's format (Format), and
// (dtype_cuda.go) cuBLASLt's types; gemm_util.cu's options and check
// arguments are fp8gen.go's, by the dtype's name. The zero Dtype is bf16,
// the dtype a caller that names none gets.
type Dtype uint8

const (
	DtypeBF16 Dtype = iota
	DtypeF16
	// DtypeE4M3: A and B float8_e4m3fn, one fp32 scale per tensor, C bf16.
	DtypeE4M3
	// DtypeE4M3Row: the same with row-wise scales, one fp32 per row of A
	// ([M]) and one per row of B stored [N, K] (one per output column).
	DtypeE4M3Row
)

var dtypeNames = [...]string{DtypeBF16: "bf16", DtypeF16: "f16", DtypeE4M3: "e4m3", DtypeE4M3Row: "e4m3_row"}

// DtypeNames lists the dtypes the GPU GEMM kernels take, as plugins declare them.
func DtypeNames() []string { return append([]string(nil), dtypeNames[:]...) }

// ParseDtype reads a dtype's name.
func ParseDtype(name string) (Dtype, error) {
	for d, n := range dtypeNames {
		if n == name {
			return Dtype(d), nil
		}
	}
	return 0, fmt.Errorf("dtype %q: the GPU GEMM kernels take bf16 or f16 (fp32 accumulation), or e4m3 / e4m3_row (float8_e4m3fn with fp32 tensor or row scales, bf16 output)", name)
}

func (d Dtype) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("Dtype(%d)", uint8(d))
}

// FP8 is whether A and B are float8 (e4m3) with scales.
func (d Dtype) FP8() bool { return d == DtypeE4M3 || d == DtypeE4M3Row }

// RowScales is whether the scales are one per row of A and of B [N, K]
// (else one per tensor, where FP8).
func (d Dtype) RowScales() bool { return d == DtypeE4M3Row }

// InBytes is the size of one element of A and B.
func (d Dtype) InBytes() int {
	if d.FP8() {
		return 1
	}
	return 2
}

// OutBytes is the size of one element of C, and of matmulrs's partials and
// staging rows: bf16 or f16, never FP8 (FP8 products write bf16).
const OutBytes = 2

// ScaleBytes is the size of one scale (fp32).
const ScaleBytes = 4

// OutBF16 is whether C is bf16 (else f16).
func (d Dtype) OutBF16() bool { return d != DtypeF16 }

// ScaleCount is how many scales an operand of rows rows holds: rows with
// row scales, one with tensor scales, none unscaled.
func (d Dtype) ScaleCount(rows int) int {
	switch {
	case d.RowScales():
		return rows
	case d.FP8():
		return 1
	}
	return 0
}

// Format is the fused Hopper GEMM's number format for d.
func (d Dtype) Format() hopper.Format {
	switch d {
	case DtypeF16:
		return hopper.Format{Elem: hopper.ElemF16}
	case DtypeE4M3, DtypeE4M3Row:
		return hopper.Format{Elem: hopper.ElemE4M3, RowScales: d.RowScales()}
	}
	return hopper.Format{Elem: hopper.ElemBF16}
}

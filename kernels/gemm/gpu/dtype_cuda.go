//go:build cuda

package gpu

import (
	"fmt"

	"github.com/symmtune/symmtune/cuda/cublaslt"
)

// lt sets m's element types and scaling for d's products (cuBLASLt's side
// of Dtype), with fast accumulation unless slow (fast_accum=0, FP8 only).
func (d Dtype) lt(m cublaslt.Matmul, slow bool) (cublaslt.Matmul, error) {
	switch d {
	case DtypeBF16:
		m.DType = cublaslt.BF16
	case DtypeF16:
		m.DType = cublaslt.F16
	case DtypeE4M3, DtypeE4M3Row:
		m.DType, m.Out, m.Scaling = cublaslt.E4M3, cublaslt.BF16, cublaslt.TensorScales
		if d.RowScales() {
			m.Scaling = cublaslt.RowScales
		}
		m.FastAccum = !slow
	default:
		return m, fmt.Errorf("cuBLASLt products of %s", d)
	}
	return m, nil
}

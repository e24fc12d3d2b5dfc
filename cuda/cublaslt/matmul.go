//go:build cuda

package cublaslt

import (
	"errors"
	"fmt"
)

// DTypeOf maps a symmtune dtype name to a DType.
func DTypeOf(name string) (DType, error) {
	switch name {
	case "bf16":
		return BF16, nil
	case "f16":
		return F16, nil
	case "e4m3":
		return E4M3, nil
	}
	return 0, fmt.Errorf("dtype %q: cuBLASLt products here take bf16, f16 or e4m3", name)
}

func (t DType) String() string {
	switch t {
	case BF16:
		return "bf16"
	case F16:
		return "f16"
	case E4M3:
		return "e4m3"
	}
	return fmt.Sprintf("dtype(%d)", int(t))
}

// Scaling is how an FP8 product's operands are dequantized: the fp32
// accumulator of D[i,j] is multiplied by scaleA·scaleB (TensorScales) or
// by scaleA[i]·scaleB[j] (RowScales) before rounding to Out.
type Scaling int

const (
	// Unscaled is the only choice for bf16 and f16 products.
	Unscaled Scaling = iota
	// TensorScales: one fp32 scale for all of A, one for all of B.
	TensorScales
	// RowScales: one fp32 scale per row of A (M floats) and one per
	// column of D, i.e. per row of B stored [N,K] (N floats). cuBLASLt
	// calls it outer-vector scaling; it needs cuBLASLt 12.9 or newer.
	RowScales
)

func (s Scaling) String() string {
	switch s {
	case Unscaled:
		return "unscaled"
	case TensorScales:
		return "tensor scales"
	case RowScales:
		return "row scales"
	}
	return fmt.Sprintf("scaling(%d)", int(s))
}

// Matmul is a row-major product D[M,N] = A[M,K]·B[K,N]. Leading dimensions
// are in elements; zero means packed (K for A and for B stored [N,K], N
// for B stored [K,N] and for D).
type Matmul struct {
	M, N, K       int
	LDA, LDB, LDD int
	// DType is A's and B's element type.
	DType DType
	// Out is C's and D's element type; zero means DType. E4M3 inputs
	// need Out BF16.
	Out DType
	// Scaling: E4M3 inputs need TensorScales or RowScales (see
	// RunScaled), bf16 and f16 need Unscaled.
	Scaling Scaling
	// FastAccum lets an FP8 product accumulate in the tensor cores'
	// reduced-precision accumulator without periodic promotion to fp32
	// (CUBLASLT_MATMUL_DESC_FAST_ACCUM): faster, less accurate. It
	// changes nothing for bf16 and f16, which always accumulate in fp32.
	FastAccum bool
	// BT: B is stored [N,K] (the layout of a torch.nn.Linear weight, and
	// of the fused GEMM's B), not [K,N]. cuBLASLt's FP8 kernels on sm_89
	// and sm_90 take only this layout.
	BT bool
	// Batch > 1 computes Batch products at once: A and D of product i
	// start StrideA and StrideD elements after product i-1's, B is shared.
	Batch            int
	StrideA, StrideD int64
	// SMCountTarget asks cuBLASLt to plan for this many SMs (0: all), so
	// kernels running beside the product keep the rest.
	SMCountTarget int
	// Workspace is the most scratch memory an algorithm may use.
	Workspace int64
}

func (m Matmul) String() string {
	b := ""
	if m.Batch > 1 {
		b = fmt.Sprintf(" x%d (strides %d,%d)", m.Batch, m.StrideA, m.StrideD)
	}
	bl := "[K,N]"
	if m.BT {
		bl = "[N,K]"
	}
	t := m.DType.String()
	if m.Out != 0 && m.Out != m.DType {
		t += "->" + m.Out.String()
	}
	if m.Scaling != Unscaled {
		t += ", " + m.Scaling.String()
	}
	if m.FastAccum && m.DType == E4M3 {
		t += ", fast accum"
	}
	return fmt.Sprintf("%dx%dx%d%s %s (B %s, ld %d,%d,%d, sm target %d)", m.M, m.N, m.K, b, t, bl, m.LDA, m.LDB, m.LDD, m.SMCountTarget)
}

// errInvalid marks the combinations Plan refuses before it calls cuBLASLt.
var errInvalid = errors.New("invalid matmul")

// normalize fills m's defaults (packed leading dimensions, Out, Batch 1)
// and refuses what this package does not offer, without the library.
func (m Matmul) normalize() (Matmul, error) {
	bad := func(format string, args ...any) (Matmul, error) {
		return m, fmt.Errorf("%w %s: %s", errInvalid, m, fmt.Sprintf(format, args...))
	}
	if m.M < 1 || m.N < 1 || m.K < 1 {
		return bad("every dimension must be positive")
	}
	switch m.DType {
	case BF16, F16:
		if m.Out == 0 {
			m.Out = m.DType
		}
		if m.Out != m.DType {
			return bad("%s inputs write %s, not %s", m.DType, m.DType, m.Out)
		}
		if m.Scaling != Unscaled {
			return bad("%s products are unscaled", m.DType)
		}
	case E4M3:
		if m.Out != BF16 {
			return bad("e4m3 inputs need Out: BF16")
		}
		if m.Scaling != TensorScales && m.Scaling != RowScales {
			return bad("e4m3 inputs need TensorScales or RowScales")
		}
	default:
		return bad("element type must be BF16, F16 or E4M3")
	}
	if m.LDA == 0 {
		m.LDA = m.K
	}
	bRow := m.N // B's stored row length
	if m.BT {
		bRow = m.K
	}
	if m.LDB == 0 {
		m.LDB = bRow
	}
	if m.LDD == 0 {
		m.LDD = m.N
	}
	if m.LDA < m.K || m.LDB < bRow || m.LDD < m.N {
		return bad("a leading dimension is below its row length")
	}
	if m.Batch < 1 {
		m.Batch = 1
	}
	if m.Batch == 1 {
		m.StrideA, m.StrideD = 0, 0 // unused: equal products plan alike
	}
	if m.Batch > 1 && (m.StrideA < int64(m.M)*int64(m.LDA) || m.StrideD < int64(m.M)*int64(m.LDD)) {
		return bad("batch strides overlap the products")
	}
	// Untested: whether cuBLASLt applies one scale vector to every product
	// of a strided batch or expects Batch of them.
	if m.Scaling == RowScales && m.Batch > 1 {
		return bad("row scales with Batch > 1 are not offered (unproven)")
	}
	if m.SMCountTarget < 0 || m.Workspace < 0 {
		return bad("SMCountTarget and Workspace cannot be negative")
	}
	return m, nil
}

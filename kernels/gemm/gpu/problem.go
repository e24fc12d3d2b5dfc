package gpu

import (
	"fmt"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
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

// Problem is a GEMM problem on a team: M rows in all (agmm: of the gathered
// A and of C; matmulrs: of each rank's A and partial product), split evenly
// over World ranks.
type Problem struct {
	gemm.Dims
	World int
	// Dtype is the number format (zero: bf16).
	Dtype Dtype
	// ElemSize is the bytes per element of A and B: Dtype.InBytes() (1 for
	// FP8, else 2). C is always OutBytes per element.
	ElemSize int
}

// ParseProblem checks the parts of a problem that do not depend on the
// config.
func ParseProblem(p space.Problem, world int) (Problem, error) {
	dt, err := ParseDtype(p.Dtype)
	if err != nil {
		return Problem{}, err
	}
	if world < 1 || world > MaxWorld {
		return Problem{}, fmt.Errorf("world %d outside 1..%d", world, MaxWorld)
	}
	d, err := gemm.ParseDims(p.Shape)
	if err != nil {
		return Problem{}, err
	}
	if d.M%world != 0 {
		return Problem{}, fmt.Errorf("m=%d is not divisible by world %d: every rank holds the same number of rows", d.M, world)
	}
	// cuBLASLt's FP8 products and the FP8 wgmma both read 16-byte rows of
	// A and B (k bytes each); torch._scaled_mm asks the same of k and n.
	if dt.FP8() && (d.K%16 != 0 || d.N%16 != 0) {
		return Problem{}, fmt.Errorf("dtype %s: k=%d and n=%d must be multiples of 16 (FP8 operands are read in 16-byte rows)", dt, d.K, d.N)
	}
	return Problem{Dims: d, World: world, Dtype: dt, ElemSize: dt.InBytes()}, nil
}

// Rows is how many rows each rank holds.
func (p Problem) Rows() int { return p.M / p.World }

// validateDtype applies the rules that depend on the problem's dtype.
func validateDtype(c Config, p Problem) error {
	if c.NoFastAccum && !p.Dtype.FP8() {
		return fmt.Errorf("fast_accum 0 with dtype %s: only FP8 products have a fast accumulation mode to turn off (only fast_accum=1 is measured)", p.Dtype)
	}
	// Batched products scale by one vector per batch in cuBLASLt's terms
	// (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F), which is not proven to
	// step with the batch's rows.
	if c.Batch && p.Dtype.RowScales() {
		return fmt.Errorf("batch 1 with dtype %s: cuBLASLt's row-scaled products are not proven batched", p.Dtype)
	}
	// cuBLASLt 13.1 ranks a single algorithm for row-scaled FP8 products
	// on sm_90: every config with algo 1-3 failed its prepare on 2 x H200
	// (2026-11-25, 54 trials), so only algo 0 is measured.
	if p.Dtype.RowScales() && c.Impl == ImplPipeline && c.Algo != 0 {
		return fmt.Errorf("algo %d with dtype %s: cuBLASLt ranks one algorithm for row-scaled FP8 products (only algo=0 is measured)", c.Algo, p.Dtype)
	}
	// A product's row scales start at its first row's, and cuBLASLt refuses
	// a scale vector that is not 16-byte aligned (CUBLAS_STATUS_NOT_SUPPORTED
	// for a 4-byte aligned one: cuBLASLt 13.1 on an H100, 2026-11-25). Every
	// product starts at a chunk's first row.
	if p.Dtype.RowScales() && c.Impl == ImplPipeline {
		for _, shard := range Shards(p.M, p.World, c.Chunks) {
			for _, s := range shard {
				if s.Start%4 != 0 {
					return fmt.Errorf("chunks %d with dtype %s: chunk %d of rank %d starts at row %d, and cuBLASLt takes row scales only from a 16-byte aligned start (a row multiple of 4)",
						c.Chunks, p.Dtype, s.Index, s.Owner, s.Start)
				}
			}
		}
	}
	return nil
}

// MinBucketRows is the top of the smallest row bucket (BucketRows).
const MinBucketRows = 64

// BucketRows is the row bucket of m rows on world ranks, (lo, top]: top
// the least power of two at least m and MinBucketRows, rounded up to a
// multiple of world; lo the top of the bucket below (0 for the first).
// symmtune.torch agrees one config per bucket, chosen and laid out for
// top, and runs any m of the bucket with it: a serving engine's token
// counts change at nearly every step, and a config per exact m would
// cost a choice, an agreement and a workspace each.
func BucketRows(m, world int) (lo, top int) {
	up := func(x int) int { return (x + world - 1) / world * world }
	p := MinBucketRows
	for p < m {
		p *= 2
	}
	top = up(p)
	if p > MinBucketRows {
		lo = up(p / 2)
	}
	return lo, top
}

package gpu

import (
	"fmt"
	"math"

	"github.com/symmtune/symmtune/cuda/e4m3"
	"github.com/symmtune/symmtune/sdk"
)

// The generator and float64 check of FP8 (e4m3) inputs, as gemm_util.cu
// builds them with IN_E4M3=1 (docs/fp8.md): the names its launchers use,
// the order of its kernels' parameters, and the generator's rule in Go, so
// the rule is written down and tested on the CPU. No cgo: the launchers
// (cuda build tag) pass these values to cudamem.Args.

// Generator ranks and constants of gemm_util.cu (TestUtilDefines keeps
// them equal to its #defines).
const (
	// TensorB is the rank B and B's scales are generated under (TENSOR_B):
	// every rank holds the same B.
	TensorB = 0x10000
	// TensorScale is the rank of a scale every rank holds the same
	// (TENSOR_SCALE): agmm's tensor-wise scale of the gathered A.
	TensorScale = 0x10001
	// ScaleSalt is xored into the seed of scales (SCALE_SALT), so a rank's
	// scales are not its own inputs' first values.
	ScaleSalt = 0x5CA1E5F0F1E5CA1E
	// ScaleRankSource, as check_rows' A-scale rank, takes each source
	// rank's own scales (SCALE_RANK_SRC): matmulrs, and agmm's row scales.
	ScaleRankSource = math.MaxUint64
	// E4M3Max is e4m3's largest finite value; inputs are e4m3(u * 448).
	E4M3Max = e4m3.Max
)

// ScaleMode is check_rows' scale_mode (SCALES_*).
type ScaleMode uint64

const (
	ScalesNone   ScaleMode = 0 // unscaled (bf16, f16)
	ScalesTensor ScaleMode = 1 // one scale per tensor, index 0 (dtype e4m3)
	ScalesRows   ScaleMode = 2 // A's per row, B's per output column (dtype e4m3_row)
)

// ScaleModeOf is the scale mode of a problem dtype: bf16, f16, e4m3 or
// e4m3_row.
func ScaleModeOf(dtype string) (ScaleMode, error) {
	switch dtype {
	case "bf16", "f16":
		return ScalesNone, nil
	case "e4m3":
		return ScalesTensor, nil
	case "e4m3_row":
		return ScalesRows, nil
	}
	return 0, fmt.Errorf("dtype %q: bf16, f16, e4m3 or e4m3_row", dtype)
}

// UtilOptions are the NVRTC options gemm_util.cu is compiled with for a
// problem dtype. The FP8 dtypes read e4m3 inputs and write bf16, and the
// two share one module: the scale mode is check_rows' parameter.
func UtilOptions(dtype string) ([]string, error) {
	switch dtype {
	case "bf16":
		return []string{"-DDTYPE_BF16=1"}, nil
	case "f16":
		return []string{"-DDTYPE_BF16=0"}, nil
	case "e4m3", "e4m3_row":
		return []string{"-DDTYPE_BF16=1", "-DIN_E4M3=1"}, nil
	}
	return nil, fmt.Errorf("gemm_util for dtype %q: bf16, f16, e4m3 or e4m3_row", dtype)
}

// FillScalesArgs are fill_scales' parameters: count fp32 scales of rank's
// generator under seed, logical indices first..first+count, written at dst.
// Any grid covers them (a grid-stride loop): gridFor(count, 256) blocks of
// 256 threads. Which rank and indices each scale uses:
//   - B (every dtype, every variant): rank TensorB; tensor: count 1, first
//     0; rows: count N, first 0 (one per output column).
//   - A of agmm, tensor: rank TensorScale, count 1 (every rank the same).
//   - A of agmm, rows: the own rank, count M/W, first 0 (the shard's rows,
//     as fill writes the shard's A with row0 0).
//   - A of matmulrs: the own rank; tensor count 1, rows count M.
//
// check_rows' aScaleRank is then TensorScale for agmm's tensor scale and
// ScaleRankSource for every other A.
func FillScalesArgs(dst uint64, count, first int, seed, rank uint64) []uint64 {
	return []uint64{dst, uint64(count), uint64(first), seed, rank}
}

// CheckRowsArgs are check_rows' parameters for a module compiled with
// UtilOptions(dtype): out with leading dimension ldo, the samples' device
// array, n columns, depth k, the seed the inputs were filled with, the
// result array, and for the FP8 dtypes (only: the other modules' kernel
// has no such parameters) the scale mode and aScaleRank, the generator
// rank of A's scales (TensorScale or ScaleRankSource, see FillScalesArgs).
func CheckRowsArgs(dtype string, out uint64, ldo int, samples uint64, n, k int, seed, res, aScaleRank uint64) ([]uint64, error) {
	mode, err := ScaleModeOf(dtype)
	if err != nil {
		return nil, err
	}
	args := []uint64{out, uint64(ldo), samples, uint64(n), uint64(k), seed, res}
	if mode == ScalesNone {
		return args, nil
	}
	return append(args, uint64(mode), aScaleRank), nil
}

// GenE4M3 is element i of rank's e4m3 input under seed, as fill writes it
// and check_rows reads it: e4m3(float32(Uniform * 448)).
func GenE4M3(seed, rank uint64, i int64) uint8 {
	return e4m3.Encode(float32(sdk.Uniform(seed, int(rank), i) * E4M3Max))
}

// GenScale is scale i of rank's generator under seed, as fill_scales
// writes it: 2^-9 * (1 + (Uniform+1)/2) rounded to fp32, in [2^-9, 2^-8),
// so q * scale stays near 1 for q up to 448.
func GenScale(seed, rank uint64, i int64) float32 {
	return float32((1 + (sdk.Uniform(seed^ScaleSalt, int(rank), i)+1)/2) / 512)
}

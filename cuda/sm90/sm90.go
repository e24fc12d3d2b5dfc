//go:build cuda

// Package sm90 owns what Hopper (sm_90) kernels need from the CUDA driver
// beyond plain launches: TMA tensor maps (cuTensorMapEncodeTiled, CUDA 12),
// functions that take more than 48 KiB of dynamic shared memory, the
// persistent grid's size (cuOccupancyMaxActiveClusters), and launches whose
// parameters are not all 8 bytes (a tensor map is a 128-byte by-value
// parameter). The driver calls themselves are cuda/cu's.
package sm90

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/symmtune/symmtune/cuda/cu"
)

// TensorMap is an encoded CUtensorMap: 128 bytes the kernel takes by
// value.
type TensorMap = cu.TensorMap

// Element types of a tensor map (CUtensorMapDataType). TMA only moves the
// bytes, so one-byte types (e4m3) travel as UInt8.
const (
	UInt8    = 0
	Float16  = 6
	BFloat16 = 9
)

// Swizzle128B is CU_TENSOR_MAP_SWIZZLE_128B, Swizzle32B CU_TENSOR_MAP_SWIZZLE_32B.
const (
	Swizzle128B = 3
	Swizzle32B  = 1
)

// Tensor-map options Encode2D uses (cuda.h's values).
const (
	interleaveNone  = 0
	l2PromotionNone = 0
	l2Promotion64   = 1
	l2Promotion128  = 2
	l2Promotion256  = 3
	oobFillZero     = 0 // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds reads are zero
)

// l2Promotion is the L2 promotion of a matrix whose rows are rowBytes
// apart: 256 bytes, except where rows start off the 32-byte sectors
// (e4m3 with K = 3696: 16 bytes off on every other row). There 256-byte
// promotion fetched the most: on 1 x H200 (2026-12-03, one pass each,
// bench/results/2026-12-03-h200-wave-tiles.md, call X) the fused FP8 GEMM
// took 25.3 and 268 µs at 256 and 4096 x 8192 x 3696 with it, 22.0 and
// 239 with 128-byte promotion (none: 21.8 and 249), and the same at
// K = 3584 either way.
func l2Promotion(rowBytes uint64) int {
	if rowBytes%32 != 0 {
		return l2Promotion128
	}
	return l2Promotion256
}

// l2PromotionEnv names a diagnostic: the promotion of rows on 32-byte
// sectors but off 128-byte lines (bf16 with K = 3696 or 7392), where the
// rule's 256 bytes may cost: 128 bytes ran +5.4% on five such shapes on
// 1 x H200 (2026-12-05, bench/results/2026-12-05-h200-l2-promotion.md),
// but not on six held-out shapes on 1 x H100 (+0.6% geometric mean, one
// 1.7% behind: bench/results/2026-12-06-h100-l2-promotion-heldout.md), so
// the rule stays. It lives here, not on a branch (branches do not reach
// later checkouts), for a check at the first run's rows on an H200.
// Unset, the rule's.
const l2PromotionEnv = "SYMMTUNE_DIAG_L2_PROMOTION"

// l2PromotionFor is l2Promotion under l2PromotionEnv's value: "none",
// "64", "128" or "256" for rows off 128-byte lines but on 32-byte
// sectors; empty: the rule's.
func l2PromotionFor(rowBytes uint64, diag string) (int, error) {
	if diag == "" {
		return l2Promotion(rowBytes), nil
	}
	set, ok := map[string]int{"none": l2PromotionNone, "64": l2Promotion64, "128": l2Promotion128, "256": l2Promotion256}[diag]
	if !ok {
		return 0, fmt.Errorf("%s=%q: want none, 64, 128 or 256 (or unset)", l2PromotionEnv, diag)
	}
	if rowBytes%32 != 0 || rowBytes%128 == 0 {
		return l2Promotion(rowBytes), nil
	}
	return set, nil
}

// l2PromotionDiag is l2PromotionEnv's value, read once per process.
var l2PromotionDiag = sync.OnceValue(func() string { return os.Getenv(l2PromotionEnv) })

// Encode2D describes a row-major matrix at addr of rows x cols elements of
// dtype with rowBytes between rows, read in boxes of
// boxRows x boxCols with the given swizzle. Elements outside the matrix
// read as zero.
func Encode2D(dtype int, addr cu.DevicePtr, rows, cols, rowBytes uint64, boxRows, boxCols uint32, swizzle int) (TensorMap, error) {
	promotion, err := l2PromotionFor(rowBytes, l2PromotionDiag())
	if err != nil {
		return TensorMap{}, err
	}
	m, err := cu.TensorMapEncodeTiled(dtype, addr, []uint64{cols, rows}, []uint64{rowBytes},
		[]uint32{boxCols, boxRows}, []uint32{1, 1}, interleaveNone, swizzle, promotion, oobFillZero)
	if err != nil {
		return TensorMap{}, fmt.Errorf("tensor map of %dx%d (row %d bytes, box %dx%d): %w", rows, cols, rowBytes, boxRows, boxCols, err)
	}
	return m, nil
}

// Module is a loaded cubin.
type Module struct{ mod cu.Module }

// Load loads a cubin into the current context.
func Load(cubin []byte) (*Module, error) {
	if len(cubin) == 0 {
		return nil, errors.New("load module: empty image")
	}
	mod, err := cu.LoadData(string(cubin))
	if err != nil {
		return nil, err
	}
	return &Module{mod: mod}, nil
}

// Unload frees the module.
func (m *Module) Unload() error {
	if m == nil || m.mod == (cu.Module{}) {
		return nil
	}
	err := m.mod.Unload()
	m.mod = cu.Module{}
	return err
}

// Function is a kernel of a Module.
type Function struct{ fn cu.Function }

// Function looks up an extern "C" kernel.
func (m *Module) Function(name string) (Function, error) {
	fn, err := m.mod.Function(name)
	return Function{fn}, err
}

// SetDynamicSmem raises the function's dynamic shared-memory limit (past
// the default 48 KiB).
func (f Function) SetDynamicSmem(bytes int) error {
	return f.fn.SetAttribute(cu.MaxDynamicSharedSizeBytes, bytes)
}

// Registers is the registers per thread the function was compiled to.
func (f Function) Registers() (int, error) { return f.fn.Attribute(cu.NumRegs) }

// LocalBytes is the function's local memory per thread (register spills).
func (f Function) LocalBytes() (int, error) { return f.fn.Attribute(cu.LocalSizeBytes) }

// MaxActiveClusters is how many clusters of f (compiled with
// __cluster_dims__ of clusterSize CTAs) can be resident at once with this
// block size and dynamic shared memory: the persistent grid's size.
func (f Function) MaxActiveClusters(clusterSize, block, smem int) (int, error) {
	return f.fn.MaxActiveClusters(clusterSize*64, block, smem)
}

// Params builds a kernel's parameter block: each argument at its natural
// alignment (TensorMap 64 bytes, 8-byte and 4-byte integers).
type Params struct {
	blob    []byte
	offsets []int
}

func (p *Params) add(b []byte, align int) {
	off := (len(p.blob) + align - 1) / align * align
	p.blob = append(p.blob, make([]byte, off-len(p.blob))...)
	p.offsets = append(p.offsets, off)
	p.blob = append(p.blob, b...)
}

// Layout is the block's bytes and each parameter's offset in them, in the
// order they were appended.
func (p *Params) Layout() ([]byte, []int) { return p.blob, p.offsets }

// Map appends a tensor map.
func (p *Params) Map(m TensorMap) *Params { p.add(m[:], 64); return p }

// Maps appends tensor maps as one parameter, a struct of them.
func (p *Params) Maps(ms []TensorMap) *Params {
	b := make([]byte, 0, len(ms)*len(TensorMap{}))
	for _, m := range ms {
		b = append(b, m[:]...)
	}
	p.add(b, 64)
	return p
}

// U64 appends an 8-byte integer (or pointer).
func (p *Params) U64(v uint64) *Params {
	p.add(binary.LittleEndian.AppendUint64(nil, v), 8)
	return p
}

// I32 appends a 4-byte integer.
func (p *Params) I32(v int32) *Params {
	p.add(binary.LittleEndian.AppendUint32(nil, uint32(v)), 4)
	return p
}

// Launch enqueues f on stream with a 1-D grid and block.
func (f Function) Launch(grid, block, smem int, stream cu.Stream, p *Params) error {
	if len(p.offsets) > 32 {
		return fmt.Errorf("launch: %d parameters, at most 32", len(p.offsets))
	}
	return f.fn.LaunchBlob(grid, block, smem, stream, p.blob, p.offsets)
}

// LaunchDependent is Launch as the programmatic dependent of the kernel
// before it on stream (cu.Function.LaunchBlobDependent): f must run
// griddepcontrol.wait before it touches memory that kernel may use.
func (f Function) LaunchDependent(grid, block, smem int, stream cu.Stream, p *Params) error {
	if len(p.offsets) > 32 {
		return fmt.Errorf("launch: %d parameters, at most 32", len(p.offsets))
	}
	return f.fn.LaunchBlobDependent(grid, block, smem, stream, p.blob, p.offsets)
}

package matmulrs

import (
	"context"
	_ "embed"
	"fmt"
	"sync/atomic"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/shm"
)

// cpuKernel is matmul + reduce-scatter over shared memory. Each rank's
// symmetric region holds the flags (gemm layout) and its partial product
// A_r·B [M, N]; the owner of a block of rows sums that block from every
// rank's region into its private output.
var cpuKernel = gemm.CPUKernel{
	Name:    "matmulrs",
	Summary: "fused matmul + reduce-scatter: rank r gets rows r*M/W.. of sum_r A_r*B (impl fused or sequential)",
	Source:  cpuSource,
	// Each rank's region holds the partial product [M, N].
	PayloadElems: func(d gemm.Dims) int64 { return int64(d.M) * int64(d.N) },
	NewInstance:  newCPUInstance,
}

// cpuSource is this file: with the shared GEMM sources it makes the kernel
// version, so cache entries made by an older kernel go stale.
//
//go:embed cpu.go
var cpuSource []byte

func newCPUInstance(t *shm.Team, d gemm.Dims) (sdk.Instance, error) {
	in := &cpuInstance{CPUInstance: gemm.NewCPUInstance[task](t, d, d.M*d.K, d.M/t.World()*d.N),
		done: make([]atomic.Int32, gemm.FlagSlots(d.M))}
	in.Tasks = in
	in.part = make([][]float32, in.World)
	for r := range in.part {
		in.part[r] = in.Rank.Payload(r, d.M*d.N)
	}
	in.Shared = in.part[in.Me]
	return in, nil
}

// cpuInstance holds, besides the shared state, every rank's partial
// product: A is this rank's A_r [M, K], Out its output rows [Rows, N].
type cpuInstance struct {
	gemm.CPUInstance[task]
	part [][]float32 // part[r]: rank r's partial product in its region
	// done counts the finished tiles of each block in the current call
	// (indexed by block); the worker finishing the last one signals it.
	done []atomic.Int32
}

// task is a tile of the partial product or, in the fused kernel, the
// reduction of one of this rank's output blocks.
type task struct {
	gemm.Tile
	reduce bool // reduce the block whose first global row is Row
}

// schedule returns the task list of cfg. Fused: blocks by owner in
// ownerOrder, tiles of a block in group_m order; the reduction of own
// block j follows the tiles of own block j+1, so the worker that claims it
// usually finds the block complete (every peer computed it earlier, and
// the tiles of block j were claimed a block ago). Sequential: tiles in row
// order; its reductions are a separate phase after a barrier.
func (in *cpuInstance) Schedule(c gemm.Config) []task {
	var tiles []gemm.Tile
	var out []task
	add := func(row0 int) {
		tiles = gemm.BlockTiles(tiles[:0], row0, in.D.N, c)
		for _, t := range tiles {
			out = append(out, task{Tile: t})
		}
	}
	blocks := in.Rows / c.CommBlockM
	if c.Impl == gemm.Fused {
		for _, owner := range ownerOrder(in.Me, in.World) {
			for j := 0; j < blocks; j++ {
				row0 := owner*in.Rows + j*c.CommBlockM
				add(row0)
				if owner == in.Me && j > 0 {
					out = append(out, task{Tile: gemm.Tile{Row: row0 - c.CommBlockM}, reduce: true})
				}
			}
		}
		out = append(out, task{Tile: gemm.Tile{Row: in.Me*in.Rows + (blocks-1)*c.CommBlockM}, reduce: true})
	} else {
		for row0 := 0; row0 < in.D.M; row0 += c.CommBlockM {
			add(row0)
		}
	}
	return out
}

func (in *cpuInstance) Fused(ctx context.Context, c gemm.Config, tasks []task) error {
	for i := range in.done {
		in.done[i].Store(0)
	}
	perBlock := int32(gemm.TilesPerBlock(in.D.N, c))
	return in.Rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		t := tasks[i]
		if t.reduce {
			return in.reduce(ctx, t.Row, c.CommBlockM, true)
		}
		in.tile(w, t.Tile, c)
		row0 := t.Row - t.Row%c.CommBlockM
		if in.done[row0/c.CommBlockM].Add(1) == perBlock {
			in.Rank.Signal(row0)
		}
		return nil
	})
}

func (in *cpuInstance) Sequential(ctx context.Context, c gemm.Config, tasks []task) error {
	if err := in.Rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		in.tile(w, tasks[i].Tile, c)
		return nil
	}); err != nil {
		return err
	}
	if err := in.Rank.Barrier(ctx); err != nil {
		return err
	}
	return in.Rank.Pool.Run(c.Threads, in.Rows/c.CommBlockM, func(_, i int) error {
		return in.reduce(ctx, in.Me*in.Rows+i*c.CommBlockM, c.CommBlockM, false)
	})
}

// tile computes one tile of this rank's partial product into its region.
func (in *cpuInstance) tile(w int, t gemm.Tile, c gemm.Config) {
	d := in.D
	width := min(c.BlockN, d.N-t.Col)
	dst := gemm.NewMat(in.part[in.Me], d.M, d.N).Sub(t.Row, t.Col, c.BlockM, width)
	a := gemm.NewMat(in.A, d.M, d.K).Sub(t.Row, 0, c.BlockM, d.K)
	b := gemm.NewMat(in.B, d.K, d.N).Sub(0, t.Col, d.K, width)
	gemm.MulTile(dst, a, b, c.BlockK, in.Rank.Pool.Scratch(w, c.BlockM*c.BlockN))
}

// reduce sums the block of rows [row0, row0+rows) from every rank's
// partial product into this rank's output, in rank order so the result
// does not depend on timing. When wait is set it first waits for every
// rank's flag of the block (the fused kernel); the sequential kernel
// reduces after a barrier instead.
func (in *cpuInstance) reduce(ctx context.Context, row0, rows int, wait bool) error {
	if wait {
		for r := 0; r < in.World; r++ {
			if err := in.Rank.Wait(ctx, r, row0); err != nil {
				return err
			}
		}
	}
	n := in.D.N
	lo, hi := row0*n, (row0+rows)*n
	dst := in.Out[(row0-in.Me*in.Rows)*n : (row0-in.Me*in.Rows+rows)*n]
	copy(dst, in.part[0][lo:hi])
	for r := 1; r < in.World; r++ {
		src := in.part[r][lo:hi]
		src = src[:len(dst)]
		for i := range dst {
			dst[i] += src[i]
		}
	}
	return nil
}

// Reference is this rank's rows of the sum of the partial products of
// the inputs of seed.
func (in *cpuInstance) Reference(seed uint64) []float64 {
	return gemm.RefMatmulRS(seed, in.D, in.World, in.Me)
}

func (in *cpuInstance) Output() string {
	return fmt.Sprintf("rows [%d,%d)", in.Me*in.Rows, (in.Me+1)*in.Rows)
}

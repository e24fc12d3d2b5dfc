package matmulrs

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
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
	world := t.World()
	in := &cpuInstance{
		rank: gemm.Rank{Team: t, M: d.M},
		d:    d, world: world, me: t.Rank(), rows: d.M / world,
		a:    make([]float32, d.M*d.K),
		b:    make([]float32, d.K*d.N),
		out:  make([]float32, d.M/world*d.N),
		done: make([]atomic.Int32, gemm.FlagSlots(d.M)),
	}
	in.part = make([][]float32, world)
	for r := range in.part {
		in.part[r] = in.rank.Payload(r, d.M*d.N)
	}
	return in, nil
}

type cpuInstance struct {
	rank      gemm.Rank
	d         gemm.Dims
	world, me int
	rows      int         // output rows each rank owns, M/world
	a, b      []float32   // this rank's A_r [M, K] and B [K, N]
	out       []float32   // this rank's output rows [rows, N]
	part      [][]float32 // part[r]: rank r's partial product in its region
	// done counts the finished tiles of each block in the current call
	// (indexed by block); the worker finishing the last one signals it.
	done []atomic.Int32

	sched     []task // schedule of schedFor, rebuilt when the config changes
	schedFor  string
	benchSeed uint64
}

// task is a tile of the partial product or, in the fused kernel, the
// reduction of one of this rank's output blocks.
type task struct {
	gemm.Tile
	reduce bool // reduce the block whose first global row is Row
}

func (in *cpuInstance) Prepare(_ context.Context, c space.Config) error {
	cfg, err := gemm.Checked(c, in.d, in.world)
	if err != nil {
		return err
	}
	in.schedule(cfg)
	return nil
}

func (in *cpuInstance) Close() error { return nil }

// schedule returns the task list of cfg. Fused: blocks by owner in
// ownerOrder, tiles of a block in group_m order; the reduction of own
// block j follows the tiles of own block j+1, so the worker that claims it
// usually finds the block complete (every peer computed it earlier, and
// the tiles of block j were claimed a block ago). Sequential: tiles in row
// order; its reductions are a separate phase after a barrier.
func (in *cpuInstance) schedule(c gemm.Config) []task {
	key := fmt.Sprint(c)
	if key == in.schedFor {
		return in.sched
	}
	var tiles []gemm.Tile
	var out []task
	add := func(row0 int) {
		tiles = gemm.BlockTiles(tiles[:0], row0, in.d.N, c)
		for _, t := range tiles {
			out = append(out, task{Tile: t})
		}
	}
	blocks := in.rows / c.CommBlockM
	if c.Impl == gemm.Fused {
		for _, owner := range ownerOrder(in.me, in.world) {
			for j := 0; j < blocks; j++ {
				row0 := owner*in.rows + j*c.CommBlockM
				add(row0)
				if owner == in.me && j > 0 {
					out = append(out, task{Tile: gemm.Tile{Row: row0 - c.CommBlockM}, reduce: true})
				}
			}
		}
		out = append(out, task{Tile: gemm.Tile{Row: in.me*in.rows + (blocks-1)*c.CommBlockM}, reduce: true})
	} else {
		for row0 := 0; row0 < in.d.M; row0 += c.CommBlockM {
			add(row0)
		}
	}
	in.sched, in.schedFor = out, key
	return out
}

// run is one matmul + reduce-scatter call.
func (in *cpuInstance) run(ctx context.Context, c gemm.Config) error {
	tasks := in.schedule(c)
	return in.rank.Call(ctx, func() error {
		if c.Impl == gemm.Fused {
			return in.fused(ctx, c, tasks)
		}
		return in.sequential(ctx, c, tasks)
	})
}

func (in *cpuInstance) fused(ctx context.Context, c gemm.Config, tasks []task) error {
	for i := range in.done {
		in.done[i].Store(0)
	}
	perBlock := int32(gemm.TilesPerBlock(in.d.N, c))
	return in.rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		t := tasks[i]
		if t.reduce {
			return in.reduce(ctx, t.Row, c.CommBlockM, true)
		}
		in.tile(w, t.Tile, c)
		row0 := t.Row - t.Row%c.CommBlockM
		if in.done[row0/c.CommBlockM].Add(1) == perBlock {
			in.rank.Signal(row0)
		}
		return nil
	})
}

func (in *cpuInstance) sequential(ctx context.Context, c gemm.Config, tasks []task) error {
	if err := in.rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		in.tile(w, tasks[i].Tile, c)
		return nil
	}); err != nil {
		return err
	}
	if err := in.rank.Barrier(ctx); err != nil {
		return err
	}
	return in.rank.Pool.Run(c.Threads, in.rows/c.CommBlockM, func(_, i int) error {
		return in.reduce(ctx, in.me*in.rows+i*c.CommBlockM, c.CommBlockM, false)
	})
}

// tile computes one tile of this rank's partial product into its region.
func (in *cpuInstance) tile(w int, t gemm.Tile, c gemm.Config) {
	d := in.d
	width := min(c.BlockN, d.N-t.Col)
	dst := gemm.NewMat(in.part[in.me], d.M, d.N).Sub(t.Row, t.Col, c.BlockM, width)
	a := gemm.NewMat(in.a, d.M, d.K).Sub(t.Row, 0, c.BlockM, d.K)
	b := gemm.NewMat(in.b, d.K, d.N).Sub(0, t.Col, d.K, width)
	gemm.MulTile(dst, a, b, c.BlockK, in.rank.Pool.Scratch(w, c.BlockM*c.BlockN))
}

// reduce sums the block of rows [row0, row0+rows) from every rank's
// partial product into this rank's output, in rank order so the result
// does not depend on timing. When wait is set it first waits for every
// rank's flag of the block (the fused kernel); the sequential kernel
// reduces after a barrier instead.
func (in *cpuInstance) reduce(ctx context.Context, row0, rows int, wait bool) error {
	if wait {
		for r := 0; r < in.world; r++ {
			if err := in.rank.Wait(ctx, r, row0); err != nil {
				return err
			}
		}
	}
	n := in.d.N
	lo, hi := row0*n, (row0+rows)*n
	dst := in.out[(row0-in.me*in.rows)*n : (row0-in.me*in.rows+rows)*n]
	copy(dst, in.part[0][lo:hi])
	for r := 1; r < in.world; r++ {
		src := in.part[r][lo:hi]
		src = src[:len(dst)]
		for i := range dst {
			dst[i] += src[i]
		}
	}
	return nil
}

func (in *cpuInstance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	cfg, err := gemm.Checked(c, in.d, in.world)
	if err != nil {
		return sdk.VerifyResult{}, err
	}
	gemm.Fill(in.a, seed, in.me)
	gemm.Fill(in.b, seed, gemm.StreamB)
	in.benchSeed = 0
	// Poison both the output and this rank's partial product, so a tile
	// or block a config skips shows up as NaN rather than as a stale value
	// from an earlier call. The previous call ended with a barrier, so no
	// peer is reading the partial product now.
	gemm.Poison(in.out)
	gemm.Poison(in.part[in.me])
	if err := in.run(ctx, cfg); err != nil {
		return sdk.VerifyResult{}, err
	}
	rel := gemm.RelErr(in.out, gemm.RefMatmulRS(seed, in.d, in.world, in.me))
	res := sdk.VerifyResult{OK: rel < gemm.Tolerance, RelErr: rel}
	if !res.OK {
		res.Detail = fmt.Sprintf("rank %d: relative error %.3g of rows [%d,%d) is not below %g",
			in.me, rel, in.me*in.rows, (in.me+1)*in.rows, gemm.Tolerance)
	}
	return res, nil
}

func (in *cpuInstance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	cfg, err := gemm.Checked(c, in.d, in.world)
	if err != nil {
		return nil, err
	}
	// Any nonzero input times the same; fill once per instance rather
	// than per config, unless a Verify has overwritten it since.
	if seed := uint64(os.Getpid()) | 1<<63; in.benchSeed != seed {
		gemm.Fill(in.a, seed, in.me)
		gemm.Fill(in.b, seed, gemm.StreamB)
		in.benchSeed = seed
	}
	return in.rank.Bench(ctx, warmup, iters, func() error { return in.run(ctx, cfg) })
}

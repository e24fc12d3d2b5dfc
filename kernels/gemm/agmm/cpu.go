package agmm

import (
	"context"
	_ "embed"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/shm"
)

// cpuKernel is all-gather + matmul over shared memory. Each rank's
// symmetric region holds the flags (gemm layout) and an [M, K] buffer for
// A: the rank publishes its shard at its own rows, chunk by chunk. The
// fused kernel reads peers' chunks in place as their flags come up; the
// sequential one gathers every shard into its own buffer first.
var cpuKernel = gemm.CPUKernel{
	Name:    "agmm",
	Summary: "fused all-gather + matmul: every rank gets C = A*B from row shards of A (impl fused or sequential)",
	Source:  cpuSource,
	// Each rank's region holds the gathered A [M, K].
	PayloadElems: func(d gemm.Dims) int64 { return int64(d.M) * int64(d.K) },
	NewInstance:  newCPUInstance,
}

// cpuSource is this file: with the shared GEMM sources it makes the kernel
// version, so cache entries made by an older kernel go stale.
//
//go:embed cpu.go
var cpuSource []byte

func newCPUInstance(t *shm.Team, d gemm.Dims) (sdk.Instance, error) {
	in := &cpuInstance{CPUInstance: gemm.NewCPUInstance[task](t, d, d.M/t.World()*d.K, d.M*d.N)}
	in.Tasks = in
	in.gath = make([][]float32, in.World)
	for r := range in.gath {
		in.gath[r] = in.Rank.Payload(r, d.M*d.K)
	}
	in.Shared = in.gath[in.Me]
	return in, nil
}

// cpuInstance holds, besides the shared state, every rank's A buffer: A
// is this rank's shard [Rows, K], Out the full C [M, N].
type cpuInstance struct {
	gemm.CPUInstance[task]
	gath [][]float32 // gath[r]: rank r's A buffer [M, K] in its region
}

// task publishes one chunk of this rank's shard or computes one tile of C.
type task struct {
	gemm.Tile
	publish bool // copy the chunk at global row Row into this rank's region
	src     int  // tile: the rank whose shard holds the tile's rows of A
}

// schedule returns the task list of cfg. Fused: publish every chunk of the
// own shard first (a copy, far cheaper than the GEMM, and what peers wait
// on), then the tiles chunk by chunk in shardOrder, group_m order within a
// chunk. Sequential: the tiles in row order, all reading the local buffer
// after the publish, barrier and gather phases.
func (in *cpuInstance) Schedule(c gemm.Config) []task {
	var tiles []gemm.Tile
	var out []task
	add := func(row0, src int) {
		tiles = gemm.BlockTiles(tiles[:0], row0, in.D.N, c)
		for _, t := range tiles {
			out = append(out, task{Tile: t, src: src})
		}
	}
	if c.Impl == gemm.Fused {
		for j := 0; j < in.Rows; j += c.CommBlockM {
			out = append(out, task{Tile: gemm.Tile{Row: in.Me*in.Rows + j}, publish: true})
		}
		for _, src := range shardOrder(in.Me, in.World) {
			for j := 0; j < in.Rows; j += c.CommBlockM {
				add(src*in.Rows+j, src)
			}
		}
	} else {
		for row0 := 0; row0 < in.D.M; row0 += c.CommBlockM {
			add(row0, in.Me)
		}
	}
	return out
}

func (in *cpuInstance) Fused(ctx context.Context, c gemm.Config, tasks []task) error {
	d := in.D
	own := gemm.NewMat(in.A, in.Rows, d.K)
	return in.Rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		t := tasks[i]
		if t.publish {
			in.publish(t.Row, c.CommBlockM)
			in.Rank.Signal(t.Row)
			return nil
		}
		// The own shard is read from private memory: it needs no flag.
		// A peer's chunk is read in place once its flag shows it whole.
		var a gemm.Mat
		if t.src == in.Me {
			a = own.Sub(t.Row-in.Me*in.Rows, 0, c.BlockM, d.K)
		} else {
			row0 := t.Row - t.Row%c.CommBlockM
			if !in.Rank.Ready(t.src, row0) {
				if err := in.Rank.Wait(ctx, t.src, row0); err != nil {
					return err
				}
			}
			a = gemm.NewMat(in.gath[t.src], d.M, d.K).Sub(t.Row, 0, c.BlockM, d.K)
		}
		in.tile(w, t.Tile, a, c)
		return nil
	})
}

func (in *cpuInstance) Sequential(ctx context.Context, c gemm.Config, tasks []task) error {
	chunks := in.Rows / c.CommBlockM
	if err := in.Rank.Pool.Run(c.Threads, chunks, func(_, i int) error {
		in.publish(in.Me*in.Rows+i*c.CommBlockM, c.CommBlockM)
		return nil
	}); err != nil {
		return err
	}
	if err := in.Rank.Barrier(ctx); err != nil {
		return err
	}
	// All-gather: pull every peer's chunks into the own buffer.
	k := in.D.K
	if err := in.Rank.Pool.Run(c.Threads, (in.World-1)*chunks, func(_, i int) error {
		src := (in.Me + 1 + i/chunks) % in.World
		lo := (src*in.Rows + i%chunks*c.CommBlockM) * k
		hi := lo + c.CommBlockM*k
		copy(in.gath[in.Me][lo:hi], in.gath[src][lo:hi])
		return nil
	}); err != nil {
		return err
	}
	a := gemm.NewMat(in.gath[in.Me], in.D.M, k)
	return in.Rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		t := tasks[i]
		in.tile(w, t.Tile, a.Sub(t.Row, 0, c.BlockM, k), c)
		return nil
	})
}

// publish copies rows [row0, row0+rows) of A (global numbering, inside
// this rank's shard) from the private input into this rank's region.
func (in *cpuInstance) publish(row0, rows int) {
	k := in.D.K
	local := row0 - in.Me*in.Rows
	copy(in.gath[in.Me][row0*k:(row0+rows)*k], in.A[local*k:(local+rows)*k])
}

// tile computes one tile of C from a, the tile's block_m rows of A.
func (in *cpuInstance) tile(w int, t gemm.Tile, a gemm.Mat, c gemm.Config) {
	d := in.D
	width := min(c.BlockN, d.N-t.Col)
	dst := gemm.NewMat(in.Out, d.M, d.N).Sub(t.Row, t.Col, c.BlockM, width)
	b := gemm.NewMat(in.B, d.K, d.N).Sub(0, t.Col, d.K, width)
	gemm.MulTile(dst, a, b, c.BlockK, in.Rank.Pool.Scratch(w, c.BlockM*c.BlockN))
}

// Reference is the full C of the inputs of seed.
func (in *cpuInstance) Reference(seed uint64) []float64 {
	return gemm.RefAllGatherMatmul(seed, in.D, in.World)
}

func (in *cpuInstance) Output() string { return "C" }

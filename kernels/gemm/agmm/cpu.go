package agmm

import (
	"context"
	_ "embed"
	"fmt"
	"os"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
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
	world := t.World()
	in := &cpuInstance{
		rank: gemm.Rank{Team: t, M: d.M},
		d:    d, world: world, me: t.Rank(), rows: d.M / world,
		a:   make([]float32, d.M/world*d.K),
		b:   make([]float32, d.K*d.N),
		out: make([]float32, d.M*d.N),
	}
	in.gath = make([][]float32, world)
	for r := range in.gath {
		in.gath[r] = in.rank.Payload(r, d.M*d.K)
	}
	return in, nil
}

type cpuInstance struct {
	rank      gemm.Rank
	d         gemm.Dims
	world, me int
	rows      int         // rows of A each rank holds, M/world
	a, b      []float32   // this rank's shard of A [rows, K] and B [K, N]
	out       []float32   // the full C [M, N]
	gath      [][]float32 // gath[r]: rank r's A buffer [M, K] in its region

	sched     []task
	schedFor  string
	benchSeed uint64
}

// task publishes one chunk of this rank's shard or computes one tile of C.
type task struct {
	gemm.Tile
	publish bool // copy the chunk at global row Row into this rank's region
	src     int  // tile: the rank whose shard holds the tile's rows of A
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

// schedule returns the task list of cfg. Fused: publish every chunk of the
// own shard first (a copy, far cheaper than the GEMM, and what peers wait
// on), then the tiles chunk by chunk in shardOrder, group_m order within a
// chunk. Sequential: the tiles in row order, all reading the local buffer
// after the publish, barrier and gather phases.
func (in *cpuInstance) schedule(c gemm.Config) []task {
	key := fmt.Sprint(c)
	if key == in.schedFor {
		return in.sched
	}
	var tiles []gemm.Tile
	var out []task
	add := func(row0, src int) {
		tiles = gemm.BlockTiles(tiles[:0], row0, in.d.N, c)
		for _, t := range tiles {
			out = append(out, task{Tile: t, src: src})
		}
	}
	if c.Impl == gemm.Fused {
		for j := 0; j < in.rows; j += c.CommBlockM {
			out = append(out, task{Tile: gemm.Tile{Row: in.me*in.rows + j}, publish: true})
		}
		for _, src := range shardOrder(in.me, in.world) {
			for j := 0; j < in.rows; j += c.CommBlockM {
				add(src*in.rows+j, src)
			}
		}
	} else {
		for row0 := 0; row0 < in.d.M; row0 += c.CommBlockM {
			add(row0, in.me)
		}
	}
	in.sched, in.schedFor = out, key
	return out
}

// run is one all-gather + matmul call.
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
	d := in.d
	own := gemm.NewMat(in.a, in.rows, d.K)
	return in.rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		t := tasks[i]
		if t.publish {
			in.publish(t.Row, c.CommBlockM)
			in.rank.Signal(t.Row)
			return nil
		}
		// The own shard is read from private memory: it needs no flag.
		// A peer's chunk is read in place once its flag shows it whole.
		var a gemm.Mat
		if t.src == in.me {
			a = own.Sub(t.Row-in.me*in.rows, 0, c.BlockM, d.K)
		} else {
			row0 := t.Row - t.Row%c.CommBlockM
			if !in.rank.Ready(t.src, row0) {
				if err := in.rank.Wait(ctx, t.src, row0); err != nil {
					return err
				}
			}
			a = gemm.NewMat(in.gath[t.src], d.M, d.K).Sub(t.Row, 0, c.BlockM, d.K)
		}
		in.tile(w, t.Tile, a, c)
		return nil
	})
}

func (in *cpuInstance) sequential(ctx context.Context, c gemm.Config, tasks []task) error {
	chunks := in.rows / c.CommBlockM
	if err := in.rank.Pool.Run(c.Threads, chunks, func(_, i int) error {
		in.publish(in.me*in.rows+i*c.CommBlockM, c.CommBlockM)
		return nil
	}); err != nil {
		return err
	}
	if err := in.rank.Barrier(ctx); err != nil {
		return err
	}
	// All-gather: pull every peer's chunks into the own buffer.
	k := in.d.K
	if err := in.rank.Pool.Run(c.Threads, (in.world-1)*chunks, func(_, i int) error {
		src := (in.me + 1 + i/chunks) % in.world
		lo := (src*in.rows + i%chunks*c.CommBlockM) * k
		hi := lo + c.CommBlockM*k
		copy(in.gath[in.me][lo:hi], in.gath[src][lo:hi])
		return nil
	}); err != nil {
		return err
	}
	a := gemm.NewMat(in.gath[in.me], in.d.M, k)
	return in.rank.Pool.Run(c.Threads, len(tasks), func(w, i int) error {
		t := tasks[i]
		in.tile(w, t.Tile, a.Sub(t.Row, 0, c.BlockM, k), c)
		return nil
	})
}

// publish copies rows [row0, row0+rows) of A (global numbering, inside
// this rank's shard) from the private input into this rank's region.
func (in *cpuInstance) publish(row0, rows int) {
	k := in.d.K
	local := row0 - in.me*in.rows
	copy(in.gath[in.me][row0*k:(row0+rows)*k], in.a[local*k:(local+rows)*k])
}

// tile computes one tile of C from a, the tile's block_m rows of A.
func (in *cpuInstance) tile(w int, t gemm.Tile, a gemm.Mat, c gemm.Config) {
	d := in.d
	width := min(c.BlockN, d.N-t.Col)
	dst := gemm.NewMat(in.out, d.M, d.N).Sub(t.Row, t.Col, c.BlockM, width)
	b := gemm.NewMat(in.b, d.K, d.N).Sub(0, t.Col, d.K, width)
	gemm.MulTile(dst, a, b, c.BlockK, in.rank.Pool.Scratch(w, c.BlockM*c.BlockN))
}

func (in *cpuInstance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	cfg, err := gemm.Checked(c, in.d, in.world)
	if err != nil {
		return sdk.VerifyResult{}, err
	}
	gemm.Fill(in.a, seed, in.me)
	gemm.Fill(in.b, seed, gemm.StreamB)
	in.benchSeed = 0
	// Poison the output and this rank's whole A buffer, so a tile the
	// config skips, or a gather that misses a chunk, shows up as NaN
	// rather than as a stale value from an earlier call. The previous
	// call ended with a barrier, so no peer is reading the buffer now.
	gemm.Poison(in.out)
	gemm.Poison(in.gath[in.me])
	if err := in.run(ctx, cfg); err != nil {
		return sdk.VerifyResult{}, err
	}
	rel := gemm.RelErr(in.out, gemm.RefAllGatherMatmul(seed, in.d, in.world))
	res := sdk.VerifyResult{OK: rel < gemm.Tolerance, RelErr: rel}
	if !res.OK {
		res.Detail = fmt.Sprintf("rank %d: relative error %.3g of C is not below %g", in.me, rel, gemm.Tolerance)
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

package allreduce

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/shm"
)

// cpuKernel is all-reduce over shared memory. Each rank's symmetric region
// holds its input copy (n floats) followed by a flag word per rank, and the
// kernel follows the GPU kernels' structure: copy in, signal, read peers.
type cpuKernel struct{}

// cpuSource is this file: the kernel version hashes the kernel's own
// source, so cache entries made by an older CPU kernel go stale.
//
//go:embed cpu.go
var cpuSource []byte

func (cpuKernel) Describe() sdk.Description {
	return sdk.Description{
		Name:          "allreduce",
		KernelVersion: sdk.SourceHash(cpuSource),
		Dims:          []string{"n"},
		Dtypes:        []string{"f32"},
		Summary:       "all-reduce (sum) over symmetric memory: one_shot or two_shot",
		Space: space.Space{Params: []space.Param{
			{Name: "algorithm", Values: []space.Value{space.Str(oneShot), space.Str(twoShot)}},
			{Name: "chunk", Values: ints(1024, 4096, 16384, 65536)},
			{Name: "threads", Values: ints(1, 2, 4)},
		}},
		Default: space.Config{"algorithm": space.Str(oneShot), "chunk": space.Int(4096), "threads": space.Int(1)},
	}
}

func ints(vs ...int64) []space.Value {
	out := make([]space.Value, len(vs))
	for i, v := range vs {
		out[i] = space.Int(v)
	}
	return out
}

func (cpuKernel) Validate(c space.Config, p space.Problem, world int, backend string) error {
	if backend != "cpu" {
		return fmt.Errorf("this build runs the cpu backend, not %q", backend)
	}
	if p.Dtype != "f32" {
		return fmt.Errorf("dtype %s: the cpu backend supports f32", p.Dtype)
	}
	n, ok := p.Shape["n"]
	if !ok || len(p.Shape) != 1 {
		return fmt.Errorf("shape %s: want n=<elements>", p.Shape)
	}
	if world < 1 {
		return fmt.Errorf("world %d", world)
	}
	if c["algorithm"].Str == twoShot && n < int64(world) {
		return fmt.Errorf("two_shot needs at least one element per rank (n=%d, world=%d)", n, world)
	}
	// A chunk larger than the part one rank reduces leaves workers idle and
	// duplicates smaller-chunk configs; only the smallest chunk is kept then.
	part := n
	if c["algorithm"].Str == twoShot {
		part = (n + int64(world) - 1) / int64(world)
	}
	if chunk := c["chunk"].Int; chunk > part && chunk != 1024 {
		return fmt.Errorf("chunk %d exceeds the %d elements one rank reduces", chunk, part)
	}
	if threads := c["threads"].Int; threads > 1 && c["chunk"].Int*threads > part*2 {
		return fmt.Errorf("%d threads for %d elements in chunks of %d: most threads would idle", threads, part, c["chunk"].Int)
	}
	return nil
}

func (cpuKernel) SymmetricBytes(p space.Problem, world int, _ string) (int64, error) {
	n := p.Shape["n"]
	if n <= 0 || n > math.MaxInt64/8 {
		return 0, fmt.Errorf("n=%d out of range", n)
	}
	return n * 4, nil
}

func (cpuKernel) Open(_ context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, ok := team.(*shm.Team)
	if !ok {
		return nil, fmt.Errorf("cpu all-reduce needs a shared-memory team, got %T", team)
	}
	n := p.Shape["n"]
	return &cpuInstance{
		team: t, n: n,
		input: make([]float32, n),
		out:   make([]float32, n),
	}, nil
}

type cpuInstance struct {
	team  *shm.Team
	n     int64
	input []float32 // this rank's private input
	out   []float32 // this rank's private output
}

func floats(b []byte, n int64) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

func (in *cpuInstance) Prepare(context.Context, space.Config) error { return nil }

func (in *cpuInstance) Close() error { return nil }

// run is one all-reduce call: the input is copied into the symmetric
// buffer, ranks synchronize, reduce, and synchronize again so that nobody
// overwrites its buffer while a peer still reads it.
func (in *cpuInstance) run(ctx context.Context, c space.Config) error {
	t := in.team
	world, rank := t.World(), t.Rank()
	sym := make([][]float32, world)
	for r := range sym {
		sym[r] = floats(t.Data(r), in.n)
	}
	copy(sym[rank], in.input)
	if err := t.Barrier(ctx); err != nil {
		return err
	}
	chunk, threads := c["chunk"].Int, int(c["threads"].Int)
	switch c["algorithm"].Str {
	case oneShot:
		parallelChunks(0, in.n, chunk, threads, func(lo, hi int64) {
			reduceInto(in.out[lo:hi], sym, lo, hi)
		})
	case twoShot:
		lo, hi := shardBounds(in.n, world, rank, 1)
		parallelChunks(lo, hi, chunk, threads, func(a, b int64) {
			reduceInto(sym[rank][a:b], sym, a, b)
		})
		if err := t.Barrier(ctx); err != nil {
			return err
		}
		for r := 0; r < world; r++ {
			a, b := shardBounds(in.n, world, r, 1)
			parallelChunks(a, b, chunk, threads, func(x, y int64) {
				copy(in.out[x:y], sym[r][x:y])
			})
		}
	default:
		return fmt.Errorf("unknown algorithm %q", c["algorithm"].Str)
	}
	return t.Barrier(ctx)
}

// reduceInto sums elements [lo, hi) of every rank's buffer into dst. dst
// may alias one of the sources at the same offsets.
func reduceInto(dst []float32, src [][]float32, lo, hi int64) {
	first := src[0][lo:hi]
	acc := make([]float32, hi-lo)
	copy(acc, first)
	for _, s := range src[1:] {
		s = s[lo:hi]
		for i := range acc {
			acc[i] += s[i]
		}
	}
	copy(dst, acc)
}

// parallelChunks splits [lo, hi) into chunks and hands them round-robin
// to threads workers (the CPU stand-in for thread blocks).
func parallelChunks(lo, hi, chunk int64, threads int, f func(a, b int64)) {
	if threads <= 1 {
		for a := lo; a < hi; a += chunk {
			f(a, min(a+chunk, hi))
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for a := lo + int64(w)*chunk; a < hi; a += int64(threads) * chunk {
				f(a, min(a+chunk, hi))
			}
		}(w)
	}
	wg.Wait()
}

func (in *cpuInstance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	world, rank := in.team.World(), in.team.Rank()
	for i := range in.input {
		in.input[i] = float32(sdk.Uniform(seed, rank, int64(i)))
	}
	nan := float32(math.NaN())
	for i := range in.out {
		in.out[i] = nan
	}
	if err := in.run(ctx, c); err != nil {
		return sdk.VerifyResult{}, err
	}
	return sdk.CheckUniformSum(in.out, seed, world, rank), nil
}

func (in *cpuInstance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	rank := in.team.Rank()
	for i := range in.input {
		in.input[i] = float32(sdk.Uniform(uint64(os.Getpid()), rank, int64(i)))
	}
	times := make([]float64, 0, iters)
	for i := 0; i < warmup+iters; i++ {
		if err := in.team.Barrier(ctx); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := in.run(ctx, c); err != nil {
			return nil, err
		}
		if i >= warmup {
			times = append(times, float64(time.Since(start).Nanoseconds())/1e3)
		}
	}
	return times, nil
}

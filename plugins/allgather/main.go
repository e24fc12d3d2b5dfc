// Command symmtune-plugin-allgather is the example of docs/plugins.md ("Write
// a kernel plugin"): a whole kernel in one file. It gathers n float32 values
// from each of world ranks into every rank's output (world*n values, rank r's
// at offset r*n) over the CPU shared-memory backend, and tunes the order in
// which a rank reads its peers, the chunk it copies at a time and how many
// threads copy. The host starts one process per rank.
package main

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

// source is this file: the kernel version hashes it, so the cache's entries
// for an older version of this kernel go stale when it changes.
//
//go:embed main.go
var source []byte

func main() { sdk.Serve(allGather{}, shm.Backend{}) }

type allGather struct{}

func (allGather) Describe() sdk.Description {
	return sdk.Description{
		Name:          "allgather", // the file name's suffix: symmtune-plugin-allgather
		KernelVersion: sdk.SourceHash(source),
		Dims:          []string{"n"}, // elements per rank
		Dtypes:        []string{"f32"},
		Summary:       "all-gather over shared memory: peers read in rank or staggered order, chunk by chunk",
		Space: space.Space{Params: []space.Param{
			{Name: "order", Values: []space.Value{space.Str("rank"), space.Str("staggered")}},
			{Name: "chunk", Values: []space.Value{space.Int(1024), space.Int(8192), space.Int(65536)}},
			{Name: "threads", Values: []space.Value{space.Int(1), space.Int(2), space.Int(4)}},
		}},
		// Valid for every shape: Validate never rejects the smallest chunk
		// or one thread. (A kernel whose best untuned config depends on the
		// shape implements sdk.Defaulter instead.)
		Default: space.Config{"order": space.Str("rank"), "chunk": space.Int(1024), "threads": space.Int(1)},
	}
}

// Validate rejects what cannot run, and configs that would only repeat
// another's measurement, so the search does not time them.
func (allGather) Validate(c space.Config, p space.Problem, world int, _ string) error {
	n, ok := p.Shape["n"]
	if !ok || len(p.Shape) != 1 || n < 1 {
		return fmt.Errorf("shape %s: want n=<elements per rank>", p.Shape)
	}
	if p.Dtype != "f32" {
		return fmt.Errorf("dtype %s: this kernel gathers f32", p.Dtype)
	}
	if chunk := c["chunk"].Int; chunk > n && chunk != 1024 {
		return fmt.Errorf("chunk %d exceeds the %d elements of a rank", chunk, n)
	}
	if threads := c["threads"].Int; threads > 1 && threads*c["chunk"].Int > n {
		return fmt.Errorf("%d threads for %d elements in chunks of %d: some would idle", threads, n, c["chunk"].Int)
	}
	return nil
}

// SymmetricBytes is each rank's shared region: its own n inputs.
func (allGather) SymmetricBytes(p space.Problem, _ int, _ string) (int64, error) {
	n := p.Shape["n"]
	if n < 1 || n > math.MaxInt64/4 {
		return 0, fmt.Errorf("n=%d out of range", n)
	}
	return n * 4, nil
}

func (allGather) Open(_ context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, err := sdk.TeamAs[*shm.Team](team)
	if err != nil {
		return nil, err
	}
	n := p.Shape["n"]
	return &instance{team: t, n: n, input: make([]float32, n), out: make([]float32, n*int64(t.World()))}, nil
}

// instance is one rank of the kernel for one shape.
type instance struct {
	team  *shm.Team
	n     int64
	input []float32 // this rank's n values
	out   []float32 // world*n values: rank r's at r*n
}

func (in *instance) Prepare(context.Context, space.Config) error { return nil } // nothing to compile
func (in *instance) Close() error                                { return nil }

// run is one all-gather: publish the input in the own region, wait for
// every rank, copy each peer's region into the output, and wait again so
// that no rank overwrites its region while a peer still reads it.
func (in *instance) run(ctx context.Context, c space.Config) error {
	t := in.team
	world, rank := t.World(), t.Rank()
	copy(floats(t.Local(), in.n), in.input)
	if err := t.Barrier(ctx); err != nil {
		return err
	}
	chunk, threads := c["chunk"].Int, int(c["threads"].Int)
	for i := range world {
		r := i
		if c["order"].Str == "staggered" { // rank k starts at peer k+1: peers' regions are read evenly
			r = (rank + 1 + i) % world
		}
		src, dst := floats(t.Data(r), in.n), in.out[int64(r)*in.n:int64(r+1)*in.n]
		var wg sync.WaitGroup
		for w := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for a := int64(w) * chunk; a < in.n; a += int64(threads) * chunk {
					b := min(a+chunk, in.n)
					copy(dst[a:b], src[a:b])
				}
			}()
		}
		wg.Wait()
	}
	return t.Barrier(ctx)
}

func floats(b []byte, n int64) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n) }

// Verify runs c once on fresh input from seed and compares this rank's
// output with the float64 reference: every rank's input, which any rank can
// derive from (seed, rank, i), as float32. A copy is exact, so any error
// fails. The host reads OK; it never sees the data.
func (in *instance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	rank, world := in.team.Rank(), in.team.World()
	for i := range in.input {
		in.input[i] = float32(sdk.Uniform(seed, rank, int64(i)))
	}
	for i := range in.out {
		in.out[i] = float32(math.NaN()) // poisoned: an element never written fails
	}
	if err := in.run(ctx, c); err != nil {
		return sdk.VerifyResult{}, err
	}
	got, ref := make([]float64, len(in.out)), make([]float64, len(in.out))
	for r := range world {
		for i := range in.n {
			k := int64(r)*in.n + i
			got[k], ref[k] = float64(in.out[k]), float64(float32(sdk.Uniform(seed, r, i)))
		}
	}
	rel := sdk.RelErr(got, ref)
	if rel != 0 {
		return sdk.VerifyResult{RelErr: rel, Detail: fmt.Sprintf("rank %d: relative error %.3g, want 0", rank, rel)}, nil
	}
	return sdk.VerifyResult{OK: true}, nil
}

// Bench times iters runs after warmup untimed ones, each after a barrier
// so that ranks start together; the host scores the slowest rank.
func (in *instance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	for i := range in.input {
		in.input[i] = float32(sdk.Uniform(uint64(os.Getpid()), in.team.Rank(), int64(i)))
	}
	times := make([]float64, 0, iters)
	for i := range warmup + iters {
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

package gemm

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/shm"
)

// Rank is the per-rank state both CPU plugins share: the team, the region
// layout, the worker pool and the epoch that makes flags reusable.
type Rank struct {
	Team *shm.Team
	M    int // global rows, which size the flag area
	Pool Pool

	epoch uint32
	// broken is set when a call fails part-way: ranks may then disagree
	// on the epoch or hold half-written flags, so this instance refuses
	// further calls instead of deadlocking or passing stale data.
	broken error
}

// Payload is rank r's payload (elems f32 values past the flags).
func (k *Rank) Payload(r, elems int) []float32 {
	b := k.Team.Data(r)[PayloadOffset(k.M):]
	if len(b) < elems*4 {
		panic(fmt.Sprintf("gemm: rank %d region holds %d bytes of payload, want %d", r, len(b), elems*4))
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), elems)
}

// Flag is the flag word, in rank r's region, of the block starting at
// global row row0.
func (k *Rank) Flag(r, row0 int) *uint32 { return shm.Uint32(k.Team.Data(r), FlagOffset(row0)) }

// Epoch is the current call's epoch (valid inside Call).
func (k *Rank) Epoch() uint32 { return k.epoch }

// Signal marks the block at row0 done on this rank for the current call.
func (k *Rank) Signal(row0 int) { shm.Store(k.Flag(k.Team.Rank(), row0), k.epoch) }

// Ready reports without blocking whether rank r has signalled the block at
// row0 in the current call.
func (k *Rank) Ready(r, row0 int) bool { return reached(loadFlag(k.Flag(r, row0)), k.epoch) }

// Wait blocks until rank r has signalled the block at row0 in the current
// call.
func (k *Rank) Wait(ctx context.Context, r, row0 int) error {
	e := k.epoch
	if err := shm.WaitUntil(ctx, k.Flag(r, row0), func(v uint32) bool { return reached(v, e) }); err != nil {
		return fmt.Errorf("rank %d: wait for rank %d's block at row %d (epoch %d): %w", k.Team.Rank(), r, row0, e, err)
	}
	return nil
}

func loadFlag(w *uint32) uint32 { return atomic.LoadUint32(w) }

// reached compares epochs modulo 2^32, so wrap-around is harmless.
func reached(v, e uint32) bool { return int32(v-e) >= 0 }

// Call runs one kernel call under a fresh epoch. Every call ends with a
// team barrier, so a fast rank's next call cannot overwrite its buffer (or
// reuse a flag) while a slow peer still reads it.
func (k *Rank) Call(ctx context.Context, run func() error) error {
	if k.broken != nil {
		return fmt.Errorf("instance unusable after an earlier failure: %w", k.broken)
	}
	k.epoch++
	err := run()
	if err == nil {
		err = k.Team.Barrier(ctx)
	}
	if err != nil {
		k.broken = err
	}
	return err
}

// Barrier is a team barrier that marks the instance broken when it fails.
func (k *Rank) Barrier(ctx context.Context) error {
	if err := k.Team.Barrier(ctx); err != nil {
		k.broken = err
		return fmt.Errorf("rank %d: barrier: %w", k.Team.Rank(), err)
	}
	return nil
}

// Bench runs warmup untimed calls and iters timed ones, each after a
// team barrier so every rank starts together, and returns the timed calls'
// durations in microseconds.
func (k *Rank) Bench(ctx context.Context, warmup, iters int, call func() error) ([]float64, error) {
	times := make([]float64, 0, iters)
	for i := 0; i < warmup+iters; i++ {
		if err := k.Barrier(ctx); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := call(); err != nil {
			return nil, err
		}
		if i >= warmup {
			times = append(times, float64(time.Since(start).Nanoseconds())/1e3)
		}
	}
	return times, nil
}

// ValidateCPU is the whole of Validate for the CPU builds of both plugins:
// the cpu backend, f32 data and the shared shape rules.
func ValidateCPU(c space.Config, p space.Problem, world int, backend string) error {
	if backend != "cpu" {
		return fmt.Errorf("this build runs the cpu backend, not %q", backend)
	}
	switch p.Dtype {
	case "f32":
	case "bf16":
		return fmt.Errorf("dtype bf16 is reserved for the cuda backend; the cpu backend computes in f32")
	default:
		return fmt.Errorf("dtype %q: the cpu backend supports f32", p.Dtype)
	}
	d, err := ParseDims(p.Shape)
	if err != nil {
		return err
	}
	cfg, err := ParseConfig(c)
	if err != nil {
		return err
	}
	return Validate(cfg, d, world)
}

// CPUInstance is the sdk.Instance of both CPU GEMM kernels, less what
// differs between them (CPUTasks): it checks each config, keeps the
// schedule of the last one, fills and poisons the buffers around Verify
// and times Bench.
type CPUInstance[T any] struct {
	Rank  Rank
	D     Dims
	World int
	Me    int
	Rows  int       // rows each rank holds or owns, M/world
	A, B  []float32 // this rank's A (its shard or its A_r) and B [K, N]
	Out   []float32 // this rank's output
	// Shared is this rank's buffer in its region; Verify poisons it with
	// Out, so a chunk or tile a config skips shows up as NaN rather than as
	// a stale value from an earlier call.
	Shared []float32
	Tasks  CPUTasks[T]

	sched     []T // schedule of schedFor, rebuilt when the config changes
	schedFor  string
	benchSeed uint64
}

// CPUTasks is what a CPU GEMM kernel does itself, on tasks of type T.
type CPUTasks[T any] interface {
	// Schedule is the task list of c.
	Schedule(c Config) []T
	// Fused and Sequential run one call's tasks (inside Rank.Call).
	Fused(ctx context.Context, c Config, tasks []T) error
	Sequential(ctx context.Context, c Config, tasks []T) error
	// Reference is what Out must hold for the inputs of seed, and Output
	// names it in a failed check's detail ("C", "rows [a,b)").
	Reference(seed uint64) []float64
	Output() string
}

// NewCPUInstance is rank t.Rank()'s instance for d, with an A of aElems
// and an Out of outElems; Shared and Tasks are the caller's to set.
func NewCPUInstance[T any](t *shm.Team, d Dims, aElems, outElems int) CPUInstance[T] {
	return CPUInstance[T]{
		Rank: Rank{Team: t, M: d.M}, D: d, World: t.World(), Me: t.Rank(), Rows: d.M / t.World(),
		A: make([]float32, aElems), B: make([]float32, d.K*d.N), Out: make([]float32, outElems),
	}
}

func (in *CPUInstance[T]) Prepare(_ context.Context, c space.Config) error {
	cfg, err := Checked(c, in.D, in.World)
	if err != nil {
		return err
	}
	in.schedule(cfg)
	return nil
}

func (in *CPUInstance[T]) Close() error { return nil }

// schedule is Tasks.Schedule of c, kept until the config changes.
func (in *CPUInstance[T]) schedule(c Config) []T {
	if key := fmt.Sprint(c); key != in.schedFor {
		in.sched, in.schedFor = in.Tasks.Schedule(c), key
	}
	return in.sched
}

// run is one call of the kernel.
func (in *CPUInstance[T]) run(ctx context.Context, c Config) error {
	tasks := in.schedule(c)
	return in.Rank.Call(ctx, func() error {
		if c.Impl == Fused {
			return in.Tasks.Fused(ctx, c, tasks)
		}
		return in.Tasks.Sequential(ctx, c, tasks)
	})
}

func (in *CPUInstance[T]) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	cfg, err := Checked(c, in.D, in.World)
	if err != nil {
		return sdk.VerifyResult{}, err
	}
	Fill(in.A, seed, in.Me)
	Fill(in.B, seed, StreamB)
	in.benchSeed = 0
	// The previous call ended with a barrier, so no peer is reading
	// Shared now.
	Poison(in.Out)
	Poison(in.Shared)
	if err := in.run(ctx, cfg); err != nil {
		return sdk.VerifyResult{}, err
	}
	rel := RelErr(in.Out, in.Tasks.Reference(seed))
	res := sdk.VerifyResult{OK: rel < Tolerance, RelErr: rel}
	if !res.OK {
		res.Detail = fmt.Sprintf("rank %d: relative error %.3g of %s is not below %g", in.Me, rel, in.Tasks.Output(), Tolerance)
	}
	return res, nil
}

func (in *CPUInstance[T]) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	cfg, err := Checked(c, in.D, in.World)
	if err != nil {
		return nil, err
	}
	// Any nonzero input times the same; fill once per instance rather
	// than per config, unless a Verify has overwritten it since.
	if seed := uint64(os.Getpid()) | 1<<63; in.benchSeed != seed {
		Fill(in.A, seed, in.Me)
		Fill(in.B, seed, StreamB)
		in.benchSeed = seed
	}
	return in.Rank.Bench(ctx, warmup, iters, func() error { return in.run(ctx, cfg) })
}

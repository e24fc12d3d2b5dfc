// Command symmtune-plugin-faulty is a test-only kernel plugin whose search
// space is a catalogue of the ways a multi-rank kernel fails: a config that
// deadlocks (one rank skips the barrier), one that spins without ever
// returning, one that crashes mid-bench, one that panics mid-verify, one
// whose result is wrong on one rank, one that fails to prepare, and healthy
// ones whose speeds differ by 10x or more, so the fastest valid config is
// known in advance and noise cannot change it.
//
// Tests build it into a temporary plugin directory as
// symmtune-plugin-faulty (see tuner/robust_test.go); it is not shipped in
// the plugin directory and the Makefile does not build it.
//
// Every config runs the same kernel, a one-shot all-reduce of n floats over
// the shared-memory backend; the mode parameter only decides how it
// misbehaves.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/shm"
)

// Modes of the space. Healthy ones are valid and differ in speed; the rest
// each exercise one failure path of the host.
const (
	Fast         = "fast"          // healthy, the fastest: nothing but the all-reduce
	Medium       = "medium"        // healthy, sleeps MediumSleep per iteration (the default config)
	Slow         = "slow"          // healthy but slow: sleeps SlowSleep per iteration
	Deadlock     = "deadlock"      // the last rank skips every barrier in Bench: the others wait forever (hang)
	Stuck        = "stuck"         // rank 0 never returns from Verify and ignores cancellation, like a spinning GPU kernel (hang)
	CrashBench   = "crash_bench"   // the last rank exits mid-bench (crash)
	PanicVerify  = "panic_verify"  // rank 0 panics mid-verify (crash)
	Wrong        = "wrong"         // the last rank's output is off by WrongOffset (wrong)
	PrepareError = "prepare_error" // the last rank's Prepare fails (failed)
)

// Modes lists the space's values in order: faults interleaved with healthy
// configs, so an exhaustive search must restart its ranks and carry on
// several times before it has seen them all.
var Modes = []string{Medium, Deadlock, Fast, CrashBench, Wrong, Stuck, Slow, PanicVerify, PrepareError}

const (
	MediumSleep = 20 * time.Millisecond
	SlowSleep   = 60 * time.Millisecond
	WrongOffset = 1000
	// MaxN bounds the problem so a test cannot ask for gigabytes by mistake.
	MaxN = 1 << 22
)

type kernel struct{}

func (kernel) Describe() sdk.Description {
	vals := make([]space.Value, len(Modes))
	for i, m := range Modes {
		vals[i] = space.Str(m)
	}
	summary := "test-only fault injection: configs that hang, crash, compute wrong results or are slow"
	if env, ok := envSummary(); ok {
		summary = env
	}
	return sdk.Description{
		Name:          "faulty",
		KernelVersion: "faulty-1",
		Dims:          []string{"n"},
		Dtypes:        []string{"f32"},
		Summary:       summary,
		Space:         space.Space{Params: describeKnobs([]space.Param{{Name: "mode", Values: vals}})},
		Default:       defaultKnobs(space.Config{"mode": space.Str(Medium)}),
	}
}

func (kernel) Validate(c space.Config, p space.Problem, world int, _ string) error {
	n, ok := p.Shape["n"]
	if !ok || len(p.Shape) != 1 {
		return fmt.Errorf("shape %s: want n=<elements>", p.Shape)
	}
	if n > MaxN {
		return fmt.Errorf("n=%d exceeds the faulty plugin's limit of %d", n, MaxN)
	}
	// Like a reduce-scatter, the kernel claims to need equal shards, so
	// tests have a shape that is bad input only for some world sizes.
	if n%int64(world) != 0 {
		return fmt.Errorf("n=%d is not divisible by the world size %d", n, world)
	}
	if why := sparseReason(c); why != "" {
		return errors.New(why)
	}
	if m := os.Getenv(EnvPanicValidate); m != "" && c["mode"] == space.Str(m) {
		panic("faulty plugin: simulated panic in Validate\nwith a second line")
	}
	if c["mode"] == space.Str(Stuck) && os.Getenv(EnvHangValidate) != "" {
		select {} // a plugin that hangs while the host validates its space
	}
	return nil
}

// EnvHangValidate, when set, makes Validate of the stuck config never
// return, so tests see the host find out a plugin that hangs there.
const EnvHangValidate = "SYMMTUNE_FAULTY_HANG_VALIDATE"

func (kernel) SymmetricBytes(p space.Problem, _ int, _ string) (int64, error) {
	n := p.Shape["n"]
	if n <= 0 || n > MaxN {
		return 0, fmt.Errorf("n=%d out of range", n)
	}
	if b, ok := floatKnob(EnvSymmetricBytes); ok {
		return int64(b), nil
	}
	return n * 4, nil
}

func (kernel) Open(_ context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, err := sdk.TeamAs[*shm.Team](team)
	if err != nil {
		return nil, err
	}
	n := p.Shape["n"]
	return &instance{team: t, n: n, input: make([]float32, n), out: make([]float32, n)}, nil
}

type instance struct {
	team       *shm.Team
	n          int64
	input, out []float32
}

func (in *instance) last() bool { return in.team.Rank() == in.team.World()-1 }

func (in *instance) Close() error { return nil }

func (in *instance) Prepare(_ context.Context, c space.Config) error {
	if c["mode"].Str == PrepareError && in.last() {
		return errors.New("simulated compile error")
	}
	return nil
}

// allReduce sums every rank's input into out: copy in, barrier, read all
// peers, barrier (so nobody overwrites its buffer while a peer reads it).
// sleep models slower code between the two barriers.
func (in *instance) allReduce(ctx context.Context, sleep time.Duration, crashAfterCopy bool) error {
	t := in.team
	sym := make([][]float32, t.World())
	for r := range sym {
		sym[r] = unsafe.Slice((*float32)(unsafe.Pointer(&t.Data(r)[0])), in.n)
	}
	copy(sym[t.Rank()], in.input)
	if err := t.Barrier(ctx); err != nil {
		return err
	}
	if crashAfterCopy {
		panic("faulty plugin: simulated illegal memory access mid-verify")
	}
	for i := range in.out {
		var s float32
		for r := range sym {
			s += sym[r][i]
		}
		in.out[i] = s
	}
	if sleep > 0 {
		time.Sleep(sleep)
	}
	return t.Barrier(ctx)
}

func sleepFor(mode string) time.Duration {
	switch mode {
	case Medium:
		return MediumSleep
	case Slow:
		return SlowSleep
	}
	return 0
}

func (in *instance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	mode := c["mode"].Str
	rank, world := in.team.Rank(), in.team.World()
	if mode == Stuck && rank == 0 {
		// Never returns, whatever the host's deadline says: the host has to
		// give up on the call and kill the process.
		for {
			time.Sleep(time.Hour)
		}
	}
	for i := range in.input {
		in.input[i] = float32(sdk.Uniform(seed, rank, int64(i)))
	}
	if err := in.allReduce(ctx, 0, mode == PanicVerify && rank == 0); err != nil {
		return sdk.VerifyResult{}, err
	}
	if mode == Wrong && in.last() {
		for i := range in.out {
			in.out[i] += WrongOffset
		}
	}
	res := sdk.CheckUniformSum(in.out, seed, world, rank)
	if e, ok := floatKnob(EnvRelErr); ok && mode == Slow {
		res.RelErr = e
	}
	return res, nil
}

func (in *instance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	mode := c["mode"].Str
	if mode == Deadlock && in.last() {
		// Skips every barrier and reports made-up times: the other ranks
		// wait in the first barrier for a peer that never comes.
		markSlowRestart()
		times := make([]float64, iters)
		for i := range times {
			times[i] = 1
		}
		return times, nil
	}
	times := make([]float64, 0, iters)
	for i := 0; i < warmup+iters; i++ {
		if mode == CrashBench && in.last() && i == warmup+1 {
			// Dies between iterations, as a process killed by an illegal
			// address would: no reply, no cleanup.
			breakNextStart()
			// Straight to file descriptor 2, as the Go runtime and a C
			// library write their last words: os.Stderr goes through
			// go-plugin's forwarding, which exit may cut short.
			fmt.Fprintf(os.NewFile(2, "stderr"), "faulty: rank %d dies mid-bench with exit code 3\n", in.team.Rank())
			os.Exit(3)
		}
		if err := in.team.Barrier(ctx); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := in.allReduce(ctx, sleepFor(mode), false); err != nil {
			return nil, err
		}
		if i >= warmup {
			times = append(times, float64(time.Since(start).Nanoseconds())/1e3)
		}
	}
	if math.IsNaN(float64(in.out[0])) {
		return nil, errors.New("NaN output")
	}
	if us, ok := floatKnob(EnvBenchTime); ok && mode == Slow {
		for i := range times {
			times[i] = us
		}
	}
	return times, nil
}

// EnvBreakRestart names a marker file. When it is set, a crash_bench
// crash also creates the marker, and the next plugin process to start
// finds it, removes it and exits before serving: the group restart after
// the crash fails once, as a GPU process can while the driver is still
// tearing down the one that was killed.
const EnvBreakRestart = "SYMMTUNE_FAULTY_BREAK_RESTART"

func breakNextStart() {
	if p := os.Getenv(EnvBreakRestart); p != "" {
		_ = os.WriteFile(p, nil, 0o644)
	}
}

// EnvStartSleep makes every process sleep this long (a Go duration) before
// it serves, as a plugin with slow imports does. EnvSlowRestart names a
// marker file: the deadlock config creates it, and a process that finds it
// sleeps EnvStartSleep twice, as ranks restarted after a hang can while the
// killed ones are still being torn down.
const (
	EnvStartSleep  = "SYMMTUNE_FAULTY_START_SLEEP"
	EnvSlowRestart = "SYMMTUNE_FAULTY_SLOW_RESTART"
)

func slowStart() {
	d, err := time.ParseDuration(os.Getenv(EnvStartSleep))
	if err != nil {
		return
	}
	if p := os.Getenv(EnvSlowRestart); p != "" {
		if _, err := os.Stat(p); err == nil {
			d *= 2
		}
	}
	time.Sleep(d)
}

func markSlowRestart() {
	if p := os.Getenv(EnvSlowRestart); p != "" {
		_ = os.WriteFile(p, nil, 0o644)
	}
}

func main() {
	slowStart()
	if p := os.Getenv(EnvBreakRestart); p != "" {
		// Remove is atomic: of ranks starting at once, one refuses.
		if os.Remove(p) == nil {
			fmt.Fprintln(os.Stderr, "faulty: refusing to start once after a crash")
			os.Exit(4)
		}
	}
	sdk.Serve(kernel{}, shm.Backend{})
}

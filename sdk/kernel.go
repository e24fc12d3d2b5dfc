// Package sdk is what plugin authors import: the Kernel interface a tunable
// multi-rank kernel implements, Serve to run it as a symmtune plugin process,
// and the go-plugin/gRPC glue the host shares with plugins (handshake,
// protocol conversions). A plugin binary is named symmtune-plugin-<name>; the
// host starts one process per rank and drives them all in lockstep.
package sdk

import (
	"context"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
)

// Description is what a plugin tunes and how.
type Description struct {
	Name string
	// KernelVersion is a hash of the kernel's source, so cache entries go
	// stale when the kernel changes (see SourceHash).
	KernelVersion string
	// Dims names the problem dimensions, e.g. ["n"] or ["m","n","k"].
	Dims    []string
	Dtypes  []string
	Space   space.Space
	Default space.Config
	// Backends this binary can run ("cpu", "cuda"); filled in by Serve.
	Backends []string
	Summary  string
}

// Kernel is a tunable kernel. One value serves every rank: per-rank state
// lives in the Instance that Open returns.
type Kernel interface {
	Describe() Description
	// Validate rejects a config that cannot run on the problem (alignment,
	// divisibility, resources) with a reason. It must be cheap and must not
	// need a device: the host calls it to prune the space before any trial,
	// for every config of the space, several calls at once. Serve has
	// already rejected a backend it was not given, here and in every other
	// method that takes one.
	Validate(c space.Config, p space.Problem, world int, backend string) error
	// SymmetricBytes is the size of the symmetric region each rank needs.
	SymmetricBytes(p space.Problem, world int, backend string) (int64, error)
	// Open makes this rank's instance over a connected team. The team's
	// concrete type depends on the backend (*shm.Team, *cudamem.Team):
	// TeamAs converts it.
	Open(ctx context.Context, team symm.Team, p space.Problem) (Instance, error)
}

// Defaulter is implemented by kernels whose best untuned config depends on
// the problem (a small message wants one block, a large one every SM): the
// host then takes DefaultFor's config, instead of Description.Default, as
// the baseline every search measures first and the config an untuned
// caller should run. It must be cheap, need no device, and return a config
// Validate accepts.
type Defaulter interface {
	DefaultFor(p space.Problem, world int, backend string) (space.Config, error)
}

// HardwareDefaulter is a Defaulter whose best untuned config also depends
// on the GPUs (the fused GEMM is measured best on sm_90 only): Serve asks
// the backend's hardware fingerprint, the one the host's Hardware call
// returns, and passes it. A backend that cannot fingerprint its hardware
// gets DefaultFor's answer. The same rules as DefaultFor's apply: cheap,
// no device of its own, a config Validate accepts.
type HardwareDefaulter interface {
	Defaulter
	DefaultOn(p space.Problem, world int, backend string, hw hardware.Fingerprint) (space.Config, error)
}

// Instance is one rank of a kernel set up for one problem.
type Instance interface {
	// Prepare readies c on this rank (load or compile its code).
	Prepare(ctx context.Context, c space.Config) error
	// Verify runs c once on fresh random input derived from seed (every rank
	// derives every rank's input from seed, see Uniform) and checks this
	// rank's output against a float64 reference. A wrong answer is a
	// VerifyResult with OK false, not an error; errors mean the run failed.
	Verify(ctx context.Context, c space.Config, seed uint64) (VerifyResult, error)
	// Bench runs warmup untimed iterations, then iters timed ones, each
	// after a cross-rank barrier, and returns each timed iteration's
	// duration on this rank in microseconds. TimingOf(ctx) is how the host
	// asked for them to be timed.
	Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error)
	Close() error
}

// Precompiler is implemented by instances that can build many configs ahead
// of timing (GPU plugins compile with NVRTC on all cores). The returned slice
// holds one error (or nil) per config.
type Precompiler interface {
	Precompile(ctx context.Context, cs []space.Config) []error
}

// VerifyResult is one rank's correctness check of one config.
type VerifyResult struct {
	OK     bool
	RelErr float64
	Detail string
}

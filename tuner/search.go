package tuner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// Job is one search: one kernel at one world size, dtype and shape.
type Job struct {
	Kernel    string
	Backend   string // auto, cpu or cuda
	World     int
	Dtype     string
	ShapeText string // "n=1048576"; parsed against the kernel's dimensions
	Strategy  string
	// BudgetTrials caps the trials of the strategy phase: 0 is no cap
	// (every valid config), AutoBudget (DefaultJob's: a budget not given)
	// lets the search plan one that ends the exploration within JobTime,
	// unless BudgetTime is set. BudgetTime caps the phase's wall time (0:
	// no cap). Whichever comes first.
	BudgetTrials int
	BudgetTime   time.Duration
	// JobTime is how long the exploration of a job given no budget may
	// take: the automatic budget plans as many trials as fit in it at the
	// pace of the first ones, and stops the exploration when it is up
	// (see autoBudget). DefaultJob's is DefaultJobTime.
	JobTime time.Duration
	Warmup  int
	// Warm, when positive, lengthens each trial's warm-up to about this
	// much back-to-back running (at least Warmup iterations), counted in
	// calls of the first config measured (see session.trial): configs are
	// then timed at the clock they hold under sustained load, which on a
	// power-capped GPU is lower than in a burst after an idle pause and
	// lower still for configs that draw more power.
	Warm  time.Duration
	Iters int
	// Finalists is how many of the best configs are re-measured with
	// RefineFactor times the iterations before the winner is chosen. The
	// default, 10, is the "top 10": re-measured, they were ordered
	// as a torch program orders them in 53 of 53 pairs 2% apart, the first
	// passes in 83 of 93 (docs/trials.md, 1 x H200, 2026-12-02); at a
	// third shape, not used to choose it, 18 of 28 (2026-12-03).
	Finalists    int
	RefineFactor int
	// TrialTiming is how the ranks are asked to time every trial
	// (sdk.Timing): "" their own way; "loaded" each call after a fixed
	// load, at the clock a busy GPU holds (the CUDA plugins; about 150 ms
	// more a trial). RefineTiming is the finalists' re-measurements' ("":
	// TrialTiming's); DefaultJob's is "loaded". The first pass explores
	// at the plugin's own pace, and the finalists are ordered at the
	// clock a program holds: on 1 x H200 at W=1 the barrier timing ordered
	// 18 of 28 pairs of the top 10 that a torch program has 2% or more
	// apart as the program does, the loaded one 95 of 95 at two shapes;
	// every trial loaded orders as well, but its 30 s explored 90 matmulrs
	// configs instead of 873-1,398 and chose one 1.5% slower
	// (bench/results/2026-12-03-h200-search-order-loaded-refine.md). The
	// CPU plugins time every way alike.
	TrialTiming  string
	RefineTiming string
	Timeouts     Timeouts
	Seed         int64
	// Pin is the SHA-256 the plugin binary must have ("" for none).
	Pin string
	// Where restricts the search to configs with these values,
	// "name=value,..." (e.g. to time one config, or to tune one parameter
	// with the others fixed). The default config is still measured first,
	// as the baseline.
	Where string
}

// MaxCPUWorld bounds the CPU backend's world size: each rank is a process
// and maps every peer's region, so far more ranks than that only measures
// the scheduler.
const MaxCPUWorld = 64

// AutoBudget is Job.BudgetTrials for a budget not given: the search plans
// one from the space's size and the pace of its first trials, so that the
// exploration ends within Job.JobTime (autoBudget). It is DefaultJob's, so
// the search command and job files get it unless they set a budget; 0
// stays every valid config.
const AutoBudget = -1

// DefaultJobTime is DefaultJob's JobTime: how long the exploration of a
// job given no budget may take. An exhaustive GEMM search on two GPUs
// takes an hour or more (3,216 valid agmm configs at 8192x3584x8192, about
// 1.2 s a trial); within five minutes, pattern search with the trials that
// fit lands near the optimum (issue 29), and small spaces (the CPU
// quickstart's) still run every valid config well inside it.
const DefaultJobTime = 5 * time.Minute

// DefaultJob is a job with every setting at its default: what a job file
// and the search command's flags start from, and what a caller that leaves
// a setting at zero gets (but Warmup and BudgetTrials, where 0 is a
// setting: a Job that leaves BudgetTrials at 0 runs every valid config).
// Kernel, World and ShapeText have no default.
func DefaultJob() Job {
	return Job{
		Backend: "auto", Dtype: "f32", Strategy: strategy.Auto,
		BudgetTrials: AutoBudget, JobTime: DefaultJobTime,
		Warmup: 3, Iters: 20, Finalists: 10, RefineFactor: 3, RefineTiming: string(sdk.TimingLoaded),
		Timeouts: DefaultTimeouts,
	}
}

// withDefaults gives the settings a caller left at zero (or made negative)
// DefaultJob's values; a negative Warmup or Warm is none, a negative
// BudgetTrials is AutoBudget and 0 stays no cap.
func (j Job) withDefaults() Job {
	d := DefaultJob()
	if j.Strategy == "" {
		j.Strategy = d.Strategy
	}
	if j.BudgetTrials < 0 {
		j.BudgetTrials = AutoBudget
	}
	if j.JobTime <= 0 {
		j.JobTime = d.JobTime
	}
	if j.Iters <= 0 {
		j.Iters = d.Iters
	}
	j.Warmup = max(j.Warmup, 0)
	j.Warm = max(j.Warm, 0)
	if j.Finalists <= 0 {
		j.Finalists = d.Finalists
	}
	if j.RefineFactor <= 0 {
		j.RefineFactor = d.RefineFactor
	}
	j.Timeouts = j.Timeouts.withDefaults()
	return j
}

// Reporter is told about a search's progress (the CLI draws a progress line).
type Reporter interface {
	Start(job Job, total int)
	Trial(done, total int, r Result, best *Result)
	Finish()
}

type nopReporter struct{}

func (nopReporter) Start(Job, int)                  {}
func (nopReporter) Trial(int, int, Result, *Result) {}
func (nopReporter) Finish()                         {}

// Searcher runs jobs. One Searcher can run many jobs (a job file).
type Searcher struct {
	PluginDir string
	// Cache receives the winners; nil for none.
	Cache cache.Storage
	// Log receives every trial; nil for none.
	Log *TrialLog
	// Done holds results of an earlier, interrupted run (--resume): their
	// configs are not measured again.
	Done     *Resume
	Reporter Reporter
	Logger   *slog.Logger
	// PluginLogger receives go-plugin's and the plugins' own log lines.
	PluginLogger hclog.Logger
	// NoTransfer turns warm starts off: no job starts from the cache's
	// winners at other shapes, world sizes or hardware (see transfer.go).
	NoTransfer bool
	// AllowInsecurePlugins runs plugin binaries that someone other than
	// root or this user could have changed (--allow-insecure-plugins;
	// see trust.go).
	AllowInsecurePlugins bool
}

// Search runs one job to completion. Bad input (unknown kernel, shape or
// dtype the kernel does not take, impossible world size) is an
// *InputError, reported before any trial runs and before anything is
// written. When ctx ends, the search stops after killing its ranks and
// returns the partial outcome with ctx's error.
func (s *Searcher) Search(ctx context.Context, job Job) (*Outcome, error) {
	o, err := s.search(ctx, job)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		// An interrupt while ranks start or describe themselves surfaces as
		// the call it cut short (a gRPC "canceled", a failed connect); the
		// caller must still see an interrupt, not a failure.
		if o != nil {
			o.Interrupted = true
		}
		err = fmt.Errorf("%w (during %v)", ctx.Err(), err)
	}
	return o, err
}

func (s *Searcher) search(ctx context.Context, job Job) (*Outcome, error) {
	start := time.Now()
	job = job.withDefaults()
	s.defaults()
	backend, spec, err := s.resolve(job)
	if err != nil {
		return nil, err
	}
	if backend == "cpu" {
		sweepDeadHostsSHM()
	}
	if err := s.checkCache(ctx); err != nil {
		return nil, err
	}
	ss := &session{s: s, job: job, spec: spec, backend: backend, slowest: map[string]time.Duration{}}
	ss.out = &Outcome{Job: job, Backend: backend, Counts: map[Status]int{}}
	split := &ss.out.Time
	began := time.Now()
	first, err := launch(spec, 0)
	if err != nil {
		return nil, err
	}
	split.Setup += time.Since(began)
	defer func() {
		if ss.grp != nil {
			ss.grp.close(context.WithoutCancel(ctx))
		} else if first != nil {
			first.stop(context.WithoutCancel(ctx))
		}
	}()
	ss.slowStart = first.startup
	began = time.Now()
	valid, err := ss.describe(ctx, first)
	split.Validate += time.Since(began)
	if err != nil {
		return nil, err
	}
	began = time.Now()
	err = ss.restart(ctx, first)
	split.Setup += time.Since(began)
	if err != nil {
		return nil, err
	}
	first = nil
	ss.planTransfer(ctx, valid)
	began = time.Now()
	ss.precompile(ctx, valid)
	split.Precompile += time.Since(began)
	err = ss.explore(ctx, valid)
	if err == nil {
		err = ss.refine(ctx)
	}
	s.Reporter.Finish()
	ss.out.Elapsed = time.Since(start)
	split.Total = ss.out.Elapsed
	if err != nil {
		if ctx.Err() != nil {
			ss.out.Interrupted = true
			return ss.out, ctx.Err()
		}
		return ss.out, err
	}
	if err := ss.store(ctx); err != nil {
		return ss.out, err
	}
	return ss.out, nil
}

// resolve checks what a job asks for without starting anything, and says
// which backend and plugin binary will run it.
func (s *Searcher) resolve(job Job) (string, launchSpec, error) {
	backend, err := ResolveBackend(job.Backend, s.PluginDir, job.Kernel)
	if err != nil {
		return "", launchSpec{}, err
	}
	if job.World < 1 {
		return "", launchSpec{}, inputErrorf("world size %d: want at least 1", job.World)
	}
	if backend == "cpu" && job.World > MaxCPUWorld {
		return "", launchSpec{}, inputErrorf("world size %d: the cpu backend runs at most %d ranks", job.World, MaxCPUWorld)
	}
	if !slices.Contains(strategy.Names(), job.Strategy) {
		return "", launchSpec{}, inputErrorf("unknown strategy %q (known: %s)", job.Strategy, strings.Join(strategy.Names(), ", "))
	}
	if _, err := sdk.ParseTiming(job.TrialTiming); err != nil {
		return "", launchSpec{}, inputErrorf("trial timing: %v", err)
	}
	if _, err := sdk.ParseTiming(job.RefineTiming); err != nil {
		return "", launchSpec{}, inputErrorf("refine timing: %v", err)
	}
	path, err := PluginPath(s.PluginDir, job.Kernel, backend)
	if err != nil {
		return "", launchSpec{}, err
	}
	spec := launchSpec{Path: path, Logger: s.PluginLogger, Start: job.Timeouts.Setup, AllowInsecure: s.AllowInsecurePlugins}
	if job.Pin != "" {
		if spec.Checksum, err = parsePin(job.Pin); err != nil {
			return "", launchSpec{}, inputErrorf("pinned checksum for %s: %v", job.Kernel, err)
		}
	}
	return backend, spec, nil
}

// defaults fills the optional fields a caller left empty.
func (s *Searcher) defaults() {
	if s.Reporter == nil {
		s.Reporter = nopReporter{}
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.PluginLogger == nil {
		s.PluginLogger = hclog.NewNullLogger()
	}
}

// Preflight checks every job the way Search would before its first trial
// (plugin, shape, dtype, world size, at least one valid config), starting
// one plugin process per job and nothing else. A job file with a mistake in
// its last job then fails at once, before hours of earlier jobs run.
func (s *Searcher) Preflight(ctx context.Context, jobs []Job) error {
	s.defaults()
	for i, job := range jobs {
		job = job.withDefaults()
		backend, spec, err := s.resolve(job)
		if err != nil {
			return fmt.Errorf("job %d (%s world %d %s %s): %w", i+1, job.Kernel, job.World, job.Dtype, job.ShapeText, err)
		}
		first, err := launch(spec, 0)
		if err != nil {
			return fmt.Errorf("job %d (%s): %w", i+1, job.Kernel, err)
		}
		ss := &session{s: s, job: job, spec: spec, backend: backend, out: &Outcome{}}
		_, err = ss.describe(ctx, first)
		first.stop(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("job %d (%s world %d %s %s): %w", i+1, job.Kernel, job.World, job.Dtype, job.ShapeText, err)
		}
	}
	return nil
}

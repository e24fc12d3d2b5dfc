package tuner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/hardware"
	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
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
	// BudgetTrials caps the trials of the strategy phase (0: no cap);
	// BudgetTime caps its wall time (0: no cap). Whichever comes first.
	BudgetTrials int
	BudgetTime   time.Duration
	Warmup       int
	Iters        int
	// Finalists is how many of the best configs are re-measured with
	// RefineFactor times the iterations before the winner is chosen.
	Finalists    int
	RefineFactor int
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

func (j Job) withDefaults() Job {
	if j.Strategy == "" {
		j.Strategy = "auto"
	}
	if j.Iters <= 0 {
		j.Iters = 20
	}
	if j.Warmup < 0 {
		j.Warmup = 0
	}
	if j.Finalists <= 0 {
		j.Finalists = 3
	}
	if j.RefineFactor <= 0 {
		j.RefineFactor = 3
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
	// Cache receives the winners; when nil, CachePath names a cache file
	// ("" for none).
	Cache     cache.Storage
	CachePath string
	// Log receives every trial; nil for none.
	Log *TrialLog
	// Done holds results of an earlier, interrupted run (--resume): their
	// configs are not measured again.
	Done     *Resume
	Reporter Reporter
	Logger   *slog.Logger
	// PluginLogger receives go-plugin's and the plugins' own log lines.
	PluginLogger hclog.Logger
}

// Outcome is what one search found.
type Outcome struct {
	Job        Job
	Backend    string
	Desc       sdk.Description
	Hardware   hardware.Fingerprint
	Shape      space.Shape
	SpaceSize  int
	ValidCount int
	// Results holds every trial in order, resumed ones included, and the
	// re-measurements of the finalists (Refined).
	Results []Result
	Counts  map[Status]int
	Best    *Result // the winner's refined measurement; nil when nothing ran correctly
	Default *Result // the default config's refined (else first) measurement
	Entry   *cache.Entry
	// Kept is the cache's entry for the slot after Entry was stored:
	// Entry, or a better one that was already there.
	Kept    *cache.Entry
	Elapsed time.Duration
	// Interrupted is set when the context ended the search early; Entry is
	// then nil and the log holds what was measured.
	Interrupted bool
	// Startup is how long the first group took to start.
	Startup Startup
}

// Startup is a group's start: each rank process's start-up (exec to
// go-plugin's handshake, in rank order) and the setup and connect of all
// ranks together (allocating and mapping symmetric memory; a GPU plugin
// may create its context and process group here).
type Startup struct {
	Ranks []time.Duration
	Setup time.Duration
}

// Speedup of r over the default config measured the same way (both
// re-measured finalists, or both first-pass trials); 0 when unknown.
func (o *Outcome) Speedup(r Result) float64 {
	if r.Status != StatusOK {
		return 0
	}
	def := o.Desc.Default.String()
	for _, d := range o.Results {
		if d.Config.String() == def && d.Refined == r.Refined && d.Status == StatusOK {
			return d.Score() / r.Score()
		}
	}
	return 0
}

// Top returns up to n configs best first: the re-measured finalists (the
// winner first), then the other configs by their first-pass score. The two
// groups are not mixed because their iteration counts differ.
func (o *Outcome) Top(n int) []Result {
	var refined, first []Result
	seen := map[string]bool{}
	for _, r := range o.Results {
		if r.Status == StatusOK && r.Refined {
			refined = append(refined, r)
			seen[r.Config.String()] = true
		}
	}
	for _, r := range o.Results {
		if r.Status == StatusOK && !r.Refined && !seen[r.Config.String()] {
			first = append(first, r)
		}
	}
	byScore := func(rs []Result) {
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].Score() != rs[j].Score() {
				return rs[i].Score() < rs[j].Score()
			}
			return rs[i].Config.String() < rs[j].Config.String()
		})
	}
	byScore(refined)
	byScore(first)
	out := append(refined, first...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// session is the live state of one search.
type session struct {
	s       *Searcher
	job     Job
	spec    launchSpec
	backend string
	problem space.Problem
	groupID string
	grp     *group
	out     *Outcome
	// slowest successful call per phase, for deadlines scaled to the work
	slowest map[string]time.Duration
	// iterUS is the slowest bench iteration (wall time of a successful
	// bench call over its warm-up and timed iterations) so far, µs.
	iterUS float64
	// slowStart and slowSetup are the slowest plugin process start-up and
	// group setup+connect measured so far; restarts are given at least
	// startupMargin times as long (startDeadline).
	slowStart, slowSetup time.Duration
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
	first, err := launch(spec, 0)
	if err != nil {
		return nil, err
	}
	ss := &session{s: s, job: job, spec: spec, backend: backend, slowest: map[string]time.Duration{}}
	ss.out = &Outcome{Job: job, Backend: backend, Counts: map[Status]int{}}
	defer func() {
		if ss.grp != nil {
			ss.grp.close(context.WithoutCancel(ctx))
		} else if first != nil {
			first.stop(context.WithoutCancel(ctx))
		}
	}()
	ss.slowStart = first.startup
	valid, err := ss.describe(ctx, first)
	if err != nil {
		return nil, err
	}
	if err := ss.restart(ctx, first); err != nil {
		return nil, err
	}
	first = nil
	ss.precompile(ctx, valid)
	err = ss.explore(ctx, valid)
	if err == nil {
		err = ss.refine(ctx)
	}
	s.Reporter.Finish()
	ss.out.Elapsed = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			ss.out.Interrupted = true
			return ss.out, ctx.Err()
		}
		return ss.out, err
	}
	if err := ss.store(); err != nil {
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
	path, err := PluginPath(s.PluginDir, job.Kernel, backend)
	if err != nil {
		return "", launchSpec{}, err
	}
	spec := launchSpec{Path: path, Logger: s.PluginLogger, Start: job.Timeouts.Setup}
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

// describe asks rank 0 what the kernel is, checks the job against it, and
// prunes the space with the kernel's Validate.
func (ss *session) describe(ctx context.Context, r *rankProc) ([]space.Config, error) {
	job := ss.job
	cctx, cancel := context.WithTimeout(ctx, job.Timeouts.Setup)
	defer cancel()
	d, err := r.kernel.Describe(cctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe plugin %s: %w", ss.spec.Path, err)
	}
	desc, err := sdk.DescriptionFromProto(d)
	if err != nil {
		return nil, err
	}
	if desc.Name != job.Kernel {
		return nil, fmt.Errorf("plugin %s says it is %q, not %q", ss.spec.Path, desc.Name, job.Kernel)
	}
	if !slices.Contains(desc.Backends, ss.backend) {
		return nil, inputErrorf("kernel %s: plugin %s serves backends %v, not %s", job.Kernel, ss.spec.Path, desc.Backends, ss.backend)
	}
	shape, err := space.ParseShape(job.ShapeText, desc.Dims)
	if err != nil {
		return nil, &InputError{fmt.Errorf("kernel %s: %w", job.Kernel, err)}
	}
	if !slices.Contains(desc.Dtypes, job.Dtype) {
		return nil, inputErrorf("kernel %s (%s) does not take dtype %q (it takes %s)", job.Kernel, ss.backend, job.Dtype, strings.Join(desc.Dtypes, ", "))
	}
	hw, err := r.kernel.Hardware(cctx, &pb.HardwareRequest{Backend: ss.backend, World: int32(job.World)})
	if err != nil {
		return nil, inputErrorf("world size %d on the %s backend: %s", job.World, ss.backend, grpcMessage(err))
	}
	ss.problem = space.Problem{Shape: shape, Dtype: job.Dtype}
	if desc.Default, err = problemDefault(cctx, r, desc, ss.problem, job.World, ss.backend); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", ss.spec.Path, err)
	}
	ss.out.Desc, ss.out.Shape, ss.out.Hardware = desc, shape, sdk.HardwareFromProto(hw)
	all := desc.Space.Enumerate()
	ss.out.SpaceSize = len(all)
	where, err := parseWhere(job.Where, desc.Space, desc.Default)
	if err != nil {
		return nil, inputErrorf("kernel %s: --where: %v", job.Kernel, err)
	}
	// The default goes first: it is measured first and is the baseline.
	valid := []space.Config{}
	var defaultReason string
	for i, c := range append([]space.Config{desc.Default}, all...) {
		if (len(valid) > 0 && c.String() == desc.Default.String()) || (i > 0 && !matches(c, where)) {
			continue
		}
		v, err := r.kernel.Validate(cctx, &pb.ValidateRequest{
			Config: sdk.ConfigToProto(c), Problem: sdk.ProblemToProto(ss.problem),
			World: int32(job.World), Backend: ss.backend,
		})
		if err != nil {
			return nil, fmt.Errorf("validate %s: %w", c, err)
		}
		if v.GetOk() {
			valid = append(valid, c)
		} else if c.String() == desc.Default.String() {
			defaultReason = v.GetReason()
		}
	}
	ss.out.ValidCount = len(valid)
	if len(valid) == 0 {
		return nil, inputErrorf("kernel %s: no config can run shape %s, %s, world %d (the default config: %s)",
			job.Kernel, shape.Format(desc.Dims...), job.Dtype, job.World, defaultReason)
	}
	if defaultReason != "" {
		ss.s.Logger.Warn("default config cannot run this problem", "kernel", job.Kernel, "reason", defaultReason)
	}
	return valid, nil
}

func grpcMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "desc = "); i >= 0 {
		return msg[i+len("desc = "):]
	}
	return msg
}

// restart replaces the group with a fresh one; first, when non-nil, is an
// already running rank 0.
func (ss *session) restart(ctx context.Context, first *rankProc) error {
	if ss.grp != nil {
		ss.grp.kill()
		ss.grp = nil
	}
	spec := ss.spec
	spec.Start = startDeadline(ss.job.Timeouts.Setup, ss.slowStart)
	var err error
	if first == nil {
		if first, err = launch(spec, 0); err != nil {
			return err
		}
	}
	ss.groupID = newGroupID()
	ss.grp, err = startGroup(ctx, spec, first, ss.job.World, ss.backend, ss.problem, ss.groupID,
		startDeadline(ss.job.Timeouts.Setup, ss.slowSetup))
	if err != nil {
		return err
	}
	if ss.out.Startup.Ranks == nil {
		for _, r := range ss.grp.ranks {
			ss.out.Startup.Ranks = append(ss.out.Startup.Ranks, r.startup)
		}
		ss.out.Startup.Setup = ss.grp.setupTook
	}
	for _, r := range ss.grp.ranks {
		ss.slowStart = max(ss.slowStart, r.startup)
	}
	ss.slowSetup = max(ss.slowSetup, ss.grp.setupTook)
	return nil
}

// startupMargin is how many times the slowest start-up measured so far a
// group (re)start may take before it counts as failed.
const startupMargin = 3

// startDeadline bounds a plugin process's start-up, or a group's setup and
// connect: the job's setup timeout, raised to startupMargin times the
// slowest measured so far. Start-up can be seconds (a Python plugin that
// imports torch), and a group restarted after a hang starts all its ranks
// at once while the killed ones are still being torn down; a start that
// merely takes as long as the first one did must not fail the search.
func startDeadline(setup, measured time.Duration) time.Duration {
	return max(setup, startupMargin*measured)
}

// restartAttempts is how many times a group that must be replaced after a
// hang or crash is started before the search gives up: right after a
// SIGKILL the driver may still be releasing the dead processes' GPU memory
// and IPC handles, and a start that fails then succeeds a moment later.
const restartAttempts = 3

// restartRetrying replaces the group, retrying a failed start after a
// growing pause (restartAttempts in all).
func (ss *session) restartRetrying(ctx context.Context) error {
	var err error
	for attempt := 1; ; attempt++ {
		var ie *InputError
		if err = ss.restart(ctx, nil); err == nil || attempt == restartAttempts || ctx.Err() != nil || errors.As(err, &ie) {
			return err
		}
		pause := time.Duration(attempt) * 500 * time.Millisecond
		ss.s.Logger.Warn("ranks did not start; trying again", "attempt", attempt, "pause", pause, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// newGroupID names a group's shared resources. It starts with the host's
// PID so that a later search can tell files of a dead host (one killed with
// SIGKILL while its ranks were still mapping them) from a live one's.
func newGroupID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// precompile lets rank 0 build every valid config ahead of timing (GPU
// plugins compile in parallel on all cores). Failures are not fatal here:
// the config's own Prepare reports them as that trial's failure.
func (ss *session) precompile(ctx context.Context, valid []space.Config) {
	req := &pb.PrecompileRequest{}
	for _, c := range valid {
		req.Configs = append(req.Configs, sdk.ConfigToProto(c))
	}
	cctx, cancel := context.WithTimeout(ctx, ss.job.Timeouts.Prepare*time.Duration(max(1, len(valid)/8)))
	defer cancel()
	if _, err := ss.grp.ranks[0].kernel.Precompile(cctx, req); err != nil {
		ss.s.Logger.Warn("precompile failed; configs compile at their trials", "err", err)
	}
}

// deadline is the phase's configured ceiling, tightened to 20 times the
// slowest successful call so far plus slack, so a deadlock costs seconds.
// Bench deadlines scale per iteration instead (benchDeadline).
func (ss *session) deadline(phase string, ceiling time.Duration) time.Duration {
	if d, ok := ss.slowest[phase]; ok {
		return min(ceiling, 20*d+5*time.Second)
	}
	return ceiling
}

// explore runs the strategy phase.
func (ss *session) explore(ctx context.Context, valid []space.Config) error {
	job := ss.job
	budget := job.BudgetTrials
	if budget <= 0 || budget > len(valid) {
		budget = len(valid)
	}
	strat, err := strategy.New(job.Strategy, strategy.Problem{
		Space: ss.out.Desc.Space, Valid: valid, Default: ss.out.Desc.Default, Budget: budget, Seed: job.Seed,
	})
	if err != nil {
		return &InputError{err}
	}
	if c, ok := strat.(interface{ Close() }); ok {
		defer c.Close()
	}
	ss.s.Reporter.Start(job, budget)
	began := time.Now()
	var history []strategy.Observation
	var best *Result
	trials := 0
	for trials < budget {
		if job.BudgetTime > 0 && time.Since(began) >= job.BudgetTime {
			ss.s.Logger.Info("time budget reached", "kernel", job.Kernel, "trials", trials)
			break
		}
		batch := strat.Next(history)
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			if trials >= budget || (job.BudgetTime > 0 && time.Since(began) >= job.BudgetTime) {
				break
			}
			res, err := ss.measure(ctx, c, job.Iters, false)
			if err != nil {
				return err
			}
			trials++
			ss.out.Counts[res.Status]++
			history = append(history, strategy.Observation{Config: c, ScoreUS: res.Score(), OK: res.Status == StatusOK})
			if res.Status == StatusOK && (best == nil || res.Score() < best.Score()) {
				r := res
				best = &r
			}
			ss.s.Reporter.Trial(trials, budget, res, best)
		}
	}
	ss.out.Counts[StatusInvalid] = ss.out.SpaceSize - len(valid)
	return nil
}

// measure runs (or takes from the resume log) one trial, logs it, and
// restarts the group when the trial left it unusable.
func (ss *session) measure(ctx context.Context, c space.Config, iters int, refined bool) (Result, error) {
	if !refined {
		if r, ok := ss.s.Done.take(ss.jobKey(), c); ok {
			ss.out.Results = append(ss.out.Results, r)
			return r, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	t := trialSpec{Config: c, Warmup: ss.job.Warmup, Iters: iters, Timeouts: ss.job.Timeouts}
	t.Timeouts.Verify = ss.deadline("verify", t.Timeouts.Verify)
	t.BenchDeadline = benchDeadline(t.Timeouts.Bench, ss.iterUS, t.Warmup+t.Iters)
	res, restart, took := ss.grp.runTrial(ctx, t)
	if ctx.Err() != nil {
		// The trial was cut short by the interrupt, not by the config:
		// it is not a result and is not logged.
		return Result{}, ctx.Err()
	}
	if res.Status == StatusOK {
		// Verify and bench durations, for deadlines scaled to the work.
		ss.slowest["verify"] = max(ss.slowest["verify"], took.Verify)
		perIter := float64(took.Bench.Microseconds()) / float64(t.Warmup+t.Iters)
		ss.iterUS = max(ss.iterUS, perIter)
	}
	res.Refined = refined
	ss.stamp(&res)
	ss.out.Results = append(ss.out.Results, res)
	if ss.s.Log != nil {
		if err := ss.s.Log.Write(res); err != nil {
			return res, err
		}
	}
	if res.Status != StatusOK {
		ss.s.Logger.Debug("trial did not pass", "config", c.String(), "status", res.Status, "err", res.Error)
	}
	if restart {
		ss.s.Logger.Info("restarting ranks", "after", res.Status, "config", c.String())
		if err := ss.restartRetrying(ctx); err != nil {
			return res, fmt.Errorf("restart ranks after %s of %s: %w", res.Status, c, err)
		}
	}
	return res, nil
}

func (ss *session) stamp(r *Result) {
	r.Kernel, r.Backend, r.World, r.Dtype = ss.job.Kernel, ss.backend, ss.job.World, ss.job.Dtype
	r.Shape = ss.out.Shape.Format(ss.out.Desc.Dims...)
}

func (ss *session) jobKey() string {
	return resumeKey(ss.job.Kernel, ss.backend, ss.job.World, ss.job.Dtype, ss.out.Shape.Format(ss.out.Desc.Dims...))
}

// refine re-measures the finalists and the default with more iterations
// (successive halving's last rung): the first pass used few iterations, so
// its ranking near the top is noise-prone.
func (ss *session) refine(ctx context.Context) error {
	var obs []strategy.Observation
	for _, r := range ss.out.Results {
		obs = append(obs, strategy.Observation{Config: r.Config, ScoreUS: r.Score(), OK: r.Status == StatusOK})
	}
	finalists := strategy.Finalists(obs, ss.job.Finalists, 1.25)
	if len(finalists) == 0 {
		return nil
	}
	def := ss.out.Desc.Default.String()
	defaultOK := false
	for _, r := range ss.out.Results {
		if r.Config.String() == def && r.Status == StatusOK {
			defaultOK = true
			d := r
			ss.out.Default = &d
		}
	}
	if defaultOK && !containsConfig(finalists, def) {
		finalists = append(finalists, ss.out.Desc.Default)
	}
	iters := ss.job.Iters * ss.job.RefineFactor
	var best *Result
	for _, c := range finalists {
		res, err := ss.measure(ctx, c, iters, true)
		if err != nil {
			return err
		}
		if res.Status != StatusOK {
			ss.s.Logger.Warn("finalist failed its re-measurement; dropped", "config", c.String(), "status", res.Status)
			continue
		}
		if c.String() == def {
			r := res
			ss.out.Default = &r
		}
		if best == nil || res.Score() < best.Score() {
			r := res
			best = &r
		}
	}
	ss.out.Best = best
	return nil
}

func containsConfig(cs []space.Config, key string) bool {
	for _, c := range cs {
		if c.String() == key {
			return true
		}
	}
	return false
}

// store writes the winner to the cache.
func (ss *session) store() error {
	o := ss.out
	if o.Best == nil {
		return errors.New("no config ran correctly; nothing to cache")
	}
	trials := 0
	for _, r := range o.Results {
		if !r.Refined {
			trials++
		}
	}
	e := cache.Entry{
		Key: cache.Key{
			Kernel: ss.job.Kernel, KernelVersion: o.Desc.KernelVersion, Backend: ss.backend,
			Hardware: o.Hardware.ID(), World: ss.job.World, Dtype: ss.job.Dtype, Shape: o.Shape,
		},
		HardwareInfo: o.Hardware,
		Config:       o.Best.Config,
		MedianUS:     o.Best.Score(),
		MinUS:        deref(o.Best.MinUS),
		P90US:        deref(o.Best.P90US),
		Trials:       trials,
		TunedAt:      time.Now().UTC().Truncate(time.Second),
	}
	if o.Default != nil && o.Default.Status == StatusOK {
		e.DefaultMedianUS = o.Default.Score()
	}
	kept, err := ss.s.putWinner(e)
	if err != nil {
		return err
	}
	o.Entry, o.Kept = &e, kept
	return nil
}

// deref reads an optional timing; 0 stands for "not measured", which the
// cache accepts (it refuses NaN).
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

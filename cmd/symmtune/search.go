package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/cache/storage"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/tuner"
	"github.com/symmtune/symmtune/tuner/strategy"
)

type searchFlags struct {
	// job holds the flags that set a job's fields: tuner.DefaultJob()
	// with the flags given on top. Only flags that were given override a
	// job file's settings (jobFlags).
	job              tuner.Job
	exhaustive       bool
	noTransfer       bool
	jobFile, logPath string
	resume           string
	top              int
	shard            string
	shardCount       int
	// sharded is the shard this run tunes, when it tunes one; fileJobs is
	// how many jobs the whole file has.
	sharded  *shardSpec
	fileJobs int
	// globals are the command's global flags (--pin).
	globals *globals
}

func newSearchCmd(g *globals) *cobra.Command { return newSearchCmdWith(g, &searchFlags{}) }

// newSearchCmdWith is newSearchCmd with its flags parsed into f.
func newSearchCmdWith(g *globals, f *searchFlags) *cobra.Command {
	f.globals = g
	cmd := &cobra.Command{
		Use:   "search",
		Short: "Tune a kernel: run trials on one plugin process per rank and cache the winner",
		Example: "  symmtune search --kernel allreduce --world 4 --shape n=1048576 --dtype f32 --backend cpu\n" +
			"  symmtune search --config configs/quickstart-cpu.toml\n" +
			"  symmtune search --config jobs.toml --shard 2/4 --cache redis://tuning-db:6379/0",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSearch(cmd, g, f) },
	}
	fl := cmd.Flags()
	f.job = tuner.DefaultJob()
	j := &f.job
	fl.StringVar(&j.Kernel, "kernel", "", "kernel (plugin) name, e.g. allreduce")
	fl.IntVar(&j.World, "world", 0, "number of ranks")
	fl.StringVar(&j.ShapeText, "shape", "", "problem shape, e.g. n=1048576 or m=512,n=256,k=256")
	fl.StringVar(&j.Dtype, "dtype", j.Dtype, "element type (f32, bf16)")
	fl.StringVar(&j.Backend, "backend", j.Backend, "auto, cpu or cuda (auto: cuda where its plugin and a GPU are present)")
	fl.StringVar(&j.Strategy, "strategy", j.Strategy, "search strategy ("+strings.Join(strategy.Names(), ", ")+")")
	fl.StringVar(&f.jobFile, "config", "", "job file (TOML) listing kernels, world sizes, shapes and dtypes")
	fl.StringVar(&f.logPath, "log", "", "trial log, one JSON line per trial (default: a new file under the cache directory's logs/)")
	fl.StringVar(&f.resume, "resume", "", "trial log of an interrupted search: configs it holds are not measured again (new trials are appended to it unless --log is given)")
	fl.Var(budgetTrialsValue{&j.BudgetTrials}, "budget-trials", "at most this many trials per job; 0: every valid config; auto: as many as fit in "+
		shortDuration(j.JobTime)+" per job at the pace of its first trials, or every valid config if they all fit (with --config: the file's budget_trials, unless given)")
	fl.DurationVar(&j.BudgetTime, "budget-time", 0, "stop each job's exploration after this long, e.g. 10m (0: no limit; without --budget-trials, the trials that fit are planned from the first ones, a config of every family first)")
	fl.BoolVar(&f.exhaustive, "exhaustive", false, "measure every valid config of every job: no trial or time budget, a job file's included")
	fl.BoolVar(&f.noTransfer, "no-transfer", false, "start every job cold: no warm start from the cache's winners at other shapes, world sizes or hardware")
	fl.IntVar(&j.Iters, "iters", j.Iters, "timed iterations per trial (with --config: the file's, unless given)")
	fl.IntVar(&j.Warmup, "warmup", j.Warmup, "warm-up iterations per trial (with --config: the file's, unless given)")
	fl.DurationVar(&j.Warm, "warm", 0, "warm each config up by running it back to back for about this long before timing it, e.g. 1s: timed at the clock a GPU holds under sustained load (0: the job's, or --warmup iterations only)")
	fl.IntVar(&j.Finalists, "finalists", j.Finalists, "re-measure this many of the best configs (and the default) in interleaved rounds before choosing the winner (with --config: the file's, unless given)")
	fl.StringVar(&j.TrialTiming, "trial-timing", "", `how the ranks time each trial: "" the plugin's own way (the CUDA plugins: SYMMTUNE_TRIAL_TIMING, else a barrier before each call); "loaded": each call after a fixed load, at the clock a busy GPU holds (CUDA plugins; about 150 ms more a trial)`)
	fl.StringVar(&j.RefineTiming, "refine-timing", j.RefineTiming, `how the finalists' re-measurements are timed: "loaded", or "" as --trial-timing`)
	fl.Int64Var(&j.Seed, "seed", 0, "seed for randomized strategies")
	fl.IntVar(&f.top, "top", 5, "rows in the final table")
	fl.StringVar(&f.shard, "shard", "", "with --config: tune only shard K of N (K from 1), e.g. 2/4; the N shards of a file hold each of its jobs once, balanced by expected cost (default: from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with --shard-count)")
	fl.IntVar(&f.shardCount, "shard-count", 0, "with --config: the number of shards when the index comes from the environment (a Kubernetes Indexed Job's completions)")
	fl.StringVar(&j.Where, "where", "", "search only configs with these values, e.g. chunks=2,algo=0 (the default is still measured first, as the baseline)")
	return cmd
}

// jobFlags are the search flags that set one setting of a job: given with
// --config, each overrides that setting in every job of the file.
var jobFlags = map[string]func(dst *tuner.Job, flags tuner.Job){
	"backend":       func(d *tuner.Job, f tuner.Job) { d.Backend = f.Backend },
	"strategy":      func(d *tuner.Job, f tuner.Job) { d.Strategy = f.Strategy },
	"budget-trials": func(d *tuner.Job, f tuner.Job) { d.BudgetTrials = f.BudgetTrials },
	"budget-time":   func(d *tuner.Job, f tuner.Job) { d.BudgetTime = f.BudgetTime },
	"iters":         func(d *tuner.Job, f tuner.Job) { d.Iters = f.Iters },
	"warmup":        func(d *tuner.Job, f tuner.Job) { d.Warmup = f.Warmup },
	"warm":          func(d *tuner.Job, f tuner.Job) { d.Warm = f.Warm },
	"seed":          func(d *tuner.Job, f tuner.Job) { d.Seed = f.Seed },
	"finalists":     func(d *tuner.Job, f tuner.Job) { d.Finalists = f.Finalists },
	"trial-timing":  func(d *tuner.Job, f tuner.Job) { d.TrialTiming = f.TrialTiming },
	"refine-timing": func(d *tuner.Job, f tuner.Job) { d.RefineTiming = f.RefineTiming },
	"where":         func(d *tuner.Job, f tuner.Job) { d.Where = f.Where },
}

// jobs builds the job list: the one job the flags describe, or a job
// file's jobs with the flags that were given overriding their settings.
func (f *searchFlags) jobs(cmd *cobra.Command) ([]tuner.Job, error) {
	changed := cmd.Flags().Changed
	var jobs []tuner.Job
	if f.jobFile != "" {
		for _, name := range []string{"kernel", "world", "shape", "dtype"} {
			if changed(name) {
				return nil, usageError{fmt.Errorf("--%s and --config exclude each other: the job file lists kernels, worlds, dtypes and shapes", name)}
			}
		}
		var err error
		if jobs, err = tuner.LoadJobFile(f.jobFile); err != nil {
			return nil, err
		}
		// Before the flags below change any job: every shard of a fleet
		// must split the same list the same way.
		spec, ok, err := resolveShard(f.shard, f.shardCount, os.Getenv)
		if err != nil {
			return nil, usageError{err}
		}
		if ok {
			f.sharded, f.fileJobs = &spec, len(jobs)
			jobs = tuner.Shard(jobs, spec.index, spec.count)
		}
	} else {
		if changed("shard") || changed("shard-count") {
			return nil, usageError{errors.New("--shard and --shard-count split a job file: they need --config")}
		}
		if f.job.Kernel == "" || f.job.World == 0 || f.job.ShapeText == "" {
			return nil, usageError{errors.New("search needs --kernel, --world and --shape (or --config FILE)")}
		}
		jobs = []tuner.Job{f.job}
	}
	trust, err := f.globals.trust()
	if err != nil {
		return nil, err
	}
	for i := range jobs {
		if pin := trust.Pins[jobs[i].Kernel]; pin != "" {
			jobs[i].Pin = pin
		}
	}
	if f.top < 1 {
		return nil, usageError{fmt.Errorf("--top %d: want 1 or more rows in the final table", f.top)}
	}
	if j := f.job; j.Iters < 0 || j.BudgetTime < 0 || j.Warmup < 0 || j.Warm < 0 {
		return nil, usageError{errors.New("--iters, --warmup, --warm and --budget-time must not be negative")}
	}
	if f.job.Finalists < 1 {
		return nil, usageError{fmt.Errorf("--finalists %d: want 1 or more configs to re-measure", f.job.Finalists)}
	}
	if _, err := sdk.ParseTiming(f.job.TrialTiming); err != nil {
		return nil, usageError{fmt.Errorf("--trial-timing: %w", err)}
	}
	if _, err := sdk.ParseTiming(f.job.RefineTiming); err != nil {
		return nil, usageError{fmt.Errorf("--refine-timing: %w", err)}
	}
	if f.exhaustive && ((changed("budget-trials") && f.job.BudgetTrials != 0) || (changed("budget-time") && f.job.BudgetTime != 0)) {
		return nil, usageError{errors.New("--exhaustive measures every valid config: it excludes a --budget-trials or --budget-time budget")}
	}
	if f.jobFile != "" {
		for name, set := range jobFlags {
			if changed(name) {
				for i := range jobs {
					set(&jobs[i], f.job)
				}
			}
		}
	}
	for i := range jobs {
		j := &jobs[i]
		switch {
		case f.exhaustive:
			j.BudgetTrials, j.BudgetTime = 0, 0
		case changed("budget-time") && j.BudgetTime == 0 && j.BudgetTrials == tuner.AutoBudget && !changed("budget-trials"):
			// --budget-time 0 is a budget given: no time limit, and no
			// trial budget to plan (unless --budget-trials auto asks
			// for one).
			j.BudgetTrials = 0
		}
	}
	return jobs, nil
}

// budgetTrialsValue is --budget-trials: a number of trials, 0 for every
// valid config, or auto (tuner.AutoBudget, the default) for a budget the
// search plans.
type budgetTrialsValue struct{ p *int }

func (v budgetTrialsValue) String() string {
	if v.p == nil || *v.p == tuner.AutoBudget {
		return "auto"
	}
	return strconv.Itoa(*v.p)
}

func (v budgetTrialsValue) Set(s string) error {
	if s == "auto" {
		*v.p = tuner.AutoBudget
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a number of trials, 0 (every valid config) or auto")
	}
	if n < 0 {
		return errors.New("must not be negative (0: every valid config; auto: a budget planned from the time per job)")
	}
	*v.p = n
	return nil
}

func (v budgetTrialsValue) Type() string { return "int" }

// shortDuration prints whole minutes as "5m", not time.Duration's "5m0s".
func shortDuration(d time.Duration) string {
	if d%time.Minute == 0 && d > 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

func runSearch(cmd *cobra.Command, g *globals, f *searchFlags) error {
	if err := checkLogNotGzipped(f); err != nil {
		return err
	}
	jobs, err := f.jobs(cmd)
	if err != nil {
		return err
	}
	st, err := g.openCache()
	if err != nil {
		return err
	}
	defer st.Close()
	// The cache must take the winners before any trial runs: a path that
	// is not a file, or cannot be written, or a server that refuses us,
	// would otherwise be found after the trials, and each winner lost.
	if err := st.Check(cmd.Context()); err != nil {
		if cmd.Context().Err() != nil {
			return err
		}
		return usageError{fmt.Errorf("not searching: %w", err)}
	}
	if store, err := st.Load(cmd.Context()); err == nil {
		reportDamage(cmd.ErrOrStderr(), store)
	} // else: the search's own check reports it
	out := cmd.OutOrStdout()
	if f.sharded != nil {
		fmt.Fprintf(out, "shard %s (%s): %d of the %d jobs in %s\n", f.sharded, f.sharded.from, len(jobs), f.fileJobs, f.jobFile)
		if len(jobs) == 0 {
			return nil
		}
	}
	s := &tuner.Searcher{
		PluginDir:    g.pluginDir,
		Cache:        st,
		Logger:       g.logger(),
		PluginLogger: g.pluginLogger(),
		NoTransfer:   f.noTransfer,

		AllowInsecurePlugins: g.allowInsecure,
	}
	if f.resume != "" {
		if s.Done, err = tuner.LoadResume(f.resume); err != nil {
			return err
		}
	}
	logPath := f.logPath
	if logPath == "" && f.resume != "" {
		logPath = f.resume
	}
	if logPath == "" {
		logPath = defaultLogPath(storage.LocalDir(g.cacheLocation()), jobs[0], f.sharded)
	}
	// Created at the first trial: bad input found while a plugin describes
	// its kernel must leave nothing behind, not even an empty log.
	s.Log = tuner.NewTrialLog(logPath)
	defer s.Log.Close()

	interactive := term.IsTerminal(int(os.Stderr.Fd()))
	if interactive {
		s.Reporter = &progressReporter{}
	}
	if len(jobs) > 1 {
		// Check every job before the first one runs: a mistake in the last
		// job of a long file must not surface hours in.
		if err := s.Preflight(cmd.Context(), jobs); err != nil {
			return err
		}
	}
	var failed []string
	for _, job := range jobs {
		o, err := s.Search(cmd.Context(), job)
		if err == nil {
			printOutcome(out, o, f.top)
			continue
		}
		err = fmt.Errorf("%s world %d %s %s: %w", job.Kernel, job.World, job.Dtype, job.ShapeText, err)
		var se *tuner.StoreError
		if errors.Is(err, cache.ErrUnavailable) || (errors.As(err, &se) && cmd.Context().Err() == nil) {
			// Every later winner would be lost too: stop, keep the trials.
			return fmt.Errorf("%w; stopping%s", err, resumeHint(logPath, "once the cache is back"))
		}
		var ie *tuner.InputError
		if cmd.Context().Err() != nil || errors.As(err, &ie) || len(jobs) == 1 {
			if cmd.Context().Err() != nil && logExists(logPath) {
				n := 0
				if o != nil {
					n = len(o.Results)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "interrupted: %d trials of this job are in %s; continue with --resume %s\n", n, logPath, logPath)
			}
			return err
		}
		// One job failing (no config ran correctly, ranks that would not
		// start) must not cost the others their results.
		fmt.Fprintf(cmd.ErrOrStderr(), "symmtune: %v; going on with the next job\n", err)
		failed = append(failed, fmt.Sprintf("%s world %d %s %s", job.Kernel, job.World, job.Dtype, job.ShapeText))
	}
	if len(failed) > 0 {
		fmt.Fprintf(out, "trial log: %s\ncache: %s\n", logPath, st.Location())
		return fmt.Errorf("%d of %d jobs failed: %s", len(failed), len(jobs), strings.Join(failed, "; "))
	}
	fmt.Fprintf(out, "trial log: %s\ncache: %s\n", logPath, st.Location())
	return nil
}

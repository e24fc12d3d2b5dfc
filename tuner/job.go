package tuner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/symmtune/symmtune/sdk"
)

// JobFile is a tuning job file (configs/*.toml): defaults, then a list of
// [[job]] tables, each expanding to every combination of its worlds,
// dtypes and shapes. A job starts from DefaultJob; the file's top-level
// settings override it, and a job's own settings override those. Without
// budget_trials or budget_time a job's budget is planned (AutoBudget);
// budget_trials = 0 runs every valid config.
//
//	backend = "cpu"
//	iters = 10
//	[[job]]
//	kernel = "allreduce"
//	worlds = [2, 4]
//	dtypes = ["f32"]
//	shapes = ["n=65536", "n=1048576"]
type JobFile struct {
	jobSettings
	Jobs []jobEntry `toml:"job"`
	// Plugins pins plugin binaries: kernel name -> SHA-256 (hex, optionally
	// "sha256:"-prefixed). A binary that does not match is not started.
	Plugins map[string]string `toml:"plugins"`
}

// jobSettings can be given at the top level (defaults) or per job.
type jobSettings struct {
	Backend      string   `toml:"backend"`
	Strategy     string   `toml:"strategy"`
	BudgetTrials *int     `toml:"budget_trials"` // nil: not set; 0: every valid config
	BudgetTime   duration `toml:"budget_time"`
	Warmup       *int     `toml:"warmup"`
	Warm         duration `toml:"warm"`
	Iters        int      `toml:"iters"`
	Finalists    int      `toml:"finalists"`
	TrialTiming  string   `toml:"trial_timing"`
	RefineTiming string   `toml:"refine_timing"`
	Seed         int64    `toml:"seed"`
	Timeouts     struct {
		Setup   duration `toml:"setup"`
		Prepare duration `toml:"prepare"`
		Verify  duration `toml:"verify"`
		Bench   duration `toml:"bench"`
	} `toml:"timeouts"`
}

type jobEntry struct {
	jobSettings
	Kernel string   `toml:"kernel"`
	Worlds []int    `toml:"worlds"`
	Dtypes []string `toml:"dtypes"`
	Shapes []string `toml:"shapes"`
}

// duration reads TOML strings like "90s" or "10m".
type duration struct{ time.Duration }

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", b, err)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", b)
	}
	d.Duration = v
	return nil
}

// LoadJobFile parses a job file and expands it into jobs. Unknown keys,
// malformed values and empty lists are input errors naming the file.
func LoadJobFile(path string) ([]Job, error) {
	var f JobFile
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, inputErrorf("job file %s: line %d: %s", path, perr.Position.Line, perr.Message)
		}
		return nil, inputErrorf("job file %s: %v", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, inputErrorf("job file %s: unknown key(s) %s", path, strings.Join(keys, ", "))
	}
	if len(f.Jobs) == 0 {
		return nil, inputErrorf("job file %s: no [[job]] tables", path)
	}
	if err := f.jobSettings.check(); err != nil {
		return nil, inputErrorf("job file %s: %v", path, err)
	}
	var jobs []Job
	for i, e := range f.Jobs {
		where := fmt.Sprintf("job file %s: job %d", path, i+1)
		if e.Kernel == "" {
			return nil, inputErrorf("%s: missing kernel", where)
		}
		if err := e.jobSettings.check(); err != nil {
			return nil, inputErrorf("%s (%s): %v", where, e.Kernel, err)
		}
		if len(e.Worlds) == 0 || len(e.Dtypes) == 0 || len(e.Shapes) == 0 {
			return nil, inputErrorf("%s (%s): worlds, dtypes and shapes must each list at least one value", where, e.Kernel)
		}
		for _, w := range e.Worlds {
			if w < 1 {
				return nil, inputErrorf("%s (%s): world size %d: want at least 1", where, e.Kernel, w)
			}
		}
		for _, w := range e.Worlds {
			for _, dt := range e.Dtypes {
				for _, sh := range e.Shapes {
					j := DefaultJob()
					j.Kernel, j.World, j.Dtype, j.ShapeText, j.Pin = e.Kernel, w, dt, sh, f.Plugins[e.Kernel]
					f.jobSettings.apply(&j)
					e.jobSettings.apply(&j)
					jobs = append(jobs, j)
				}
			}
		}
	}
	return jobs, nil
}

// check refuses settings no job can have. A budget_trials left out lets
// the search plan the budget (AutoBudget); a negative one is refused
// rather than read as either.
//
// The numbers are checked as the CLI checks its flags: a negative count
// would otherwise reach the search (iters = -5 asks every rank for -5
// timings), or be read as "not set" in one place and used in another.
func (s jobSettings) check() error {
	if s.BudgetTrials != nil && *s.BudgetTrials < 0 {
		return fmt.Errorf("budget_trials = %d: want 0 (every valid config) or more, or leave it out for a budget planned from the time per job", *s.BudgetTrials)
	}
	if s.Iters < 0 {
		return fmt.Errorf("iters = %d: want 1 or more timed iterations per trial (0 or left out: %d)", s.Iters, DefaultJob().Iters)
	}
	if s.Warmup != nil && *s.Warmup < 0 {
		return fmt.Errorf("warmup = %d: want 0 or more warm-up iterations", *s.Warmup)
	}
	if s.Finalists < 0 {
		return fmt.Errorf("finalists = %d: want 1 or more configs to re-measure (0 or left out: %d)", s.Finalists, DefaultJob().Finalists)
	}
	if _, err := sdk.ParseTiming(s.TrialTiming); err != nil {
		return fmt.Errorf("trial_timing = %q: %w", s.TrialTiming, err)
	}
	if _, err := sdk.ParseTiming(s.RefineTiming); err != nil {
		return fmt.Errorf("refine_timing = %q: %w", s.RefineTiming, err)
	}
	return nil
}

// apply sets the settings given (those not zero) on j: first a file's
// top-level defaults, then a job's own.
func (s jobSettings) apply(j *Job) {
	if s.Backend != "" {
		j.Backend = s.Backend
	}
	if s.Strategy != "" {
		j.Strategy = s.Strategy
	}
	if s.BudgetTrials != nil {
		j.BudgetTrials = *s.BudgetTrials
	}
	if s.BudgetTime.Duration != 0 {
		j.BudgetTime = s.BudgetTime.Duration
	}
	if s.Warmup != nil {
		j.Warmup = *s.Warmup
	}
	if s.Warm.Duration != 0 {
		j.Warm = s.Warm.Duration
	}
	if s.Iters != 0 {
		j.Iters = s.Iters
	}
	if s.Finalists != 0 {
		j.Finalists = s.Finalists
	}
	if s.TrialTiming != "" {
		j.TrialTiming = s.TrialTiming
	}
	if s.RefineTiming != "" {
		j.RefineTiming = s.RefineTiming
	}
	if s.Seed != 0 {
		j.Seed = s.Seed
	}
	for _, t := range []struct {
		dst *time.Duration
		src duration
	}{
		{&j.Timeouts.Setup, s.Timeouts.Setup}, {&j.Timeouts.Prepare, s.Timeouts.Prepare},
		{&j.Timeouts.Verify, s.Timeouts.Verify}, {&j.Timeouts.Bench, s.Timeouts.Bench},
	} {
		if t.src.Duration != 0 {
			*t.dst = t.src.Duration
		}
	}
}

package tuner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// JobFile is a tuning job file (configs/*.toml): defaults, then a list of
// [[job]] tables, each expanding to every combination of its worlds,
// dtypes and shapes.
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
	BudgetTrials int      `toml:"budget_trials"`
	BudgetTime   duration `toml:"budget_time"`
	Warmup       *int     `toml:"warmup"`
	Warm         duration `toml:"warm"`
	Iters        int      `toml:"iters"`
	Finalists    int      `toml:"finalists"`
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
	var jobs []Job
	for i, e := range f.Jobs {
		where := fmt.Sprintf("job file %s: job %d", path, i+1)
		if e.Kernel == "" {
			return nil, inputErrorf("%s: missing kernel", where)
		}
		if len(e.Worlds) == 0 || len(e.Dtypes) == 0 || len(e.Shapes) == 0 {
			return nil, inputErrorf("%s (%s): worlds, dtypes and shapes must each list at least one value", where, e.Kernel)
		}
		s := merge(f.jobSettings, e.jobSettings)
		for _, w := range e.Worlds {
			for _, dt := range e.Dtypes {
				for _, sh := range e.Shapes {
					j := Job{
						Kernel: e.Kernel, Backend: s.Backend, World: w, Dtype: dt, ShapeText: sh,
						Strategy: s.Strategy, BudgetTrials: s.BudgetTrials, BudgetTime: s.BudgetTime.Duration,
						Warmup: 3, Warm: s.Warm.Duration, Iters: s.Iters, Finalists: s.Finalists, Seed: s.Seed,
						Timeouts: Timeouts{Setup: s.Timeouts.Setup.Duration, Prepare: s.Timeouts.Prepare.Duration,
							Verify: s.Timeouts.Verify.Duration, Bench: s.Timeouts.Bench.Duration},
						Pin: f.Plugins[e.Kernel],
					}
					if s.Warmup != nil {
						j.Warmup = *s.Warmup
					}
					jobs = append(jobs, j)
				}
			}
		}
	}
	return jobs, nil
}

// merge lets a job's own settings override the file's defaults.
func merge(def, own jobSettings) jobSettings {
	out := def
	if own.Backend != "" {
		out.Backend = own.Backend
	}
	if own.Strategy != "" {
		out.Strategy = own.Strategy
	}
	if own.BudgetTrials != 0 {
		out.BudgetTrials = own.BudgetTrials
	}
	if own.BudgetTime.Duration != 0 {
		out.BudgetTime = own.BudgetTime
	}
	if own.Warmup != nil {
		out.Warmup = own.Warmup
	}
	if own.Warm.Duration != 0 {
		out.Warm = own.Warm
	}
	if own.Iters != 0 {
		out.Iters = own.Iters
	}
	if own.Finalists != 0 {
		out.Finalists = own.Finalists
	}
	if own.Seed != 0 {
		out.Seed = own.Seed
	}
	for _, p := range []struct{ dst, src *duration }{
		{&out.Timeouts.Setup, &own.Timeouts.Setup}, {&out.Timeouts.Prepare, &own.Timeouts.Prepare},
		{&out.Timeouts.Verify, &own.Timeouts.Verify}, {&out.Timeouts.Bench, &own.Timeouts.Bench},
	} {
		if p.src.Duration != 0 {
			*p.dst = *p.src
		}
	}
	return out
}

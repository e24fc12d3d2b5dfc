package strategy

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
)

// Landscape is a recorded search: every config of a space with the outcome
// an exhaustive search measured for it. Replaying a strategy against it
// answers "how close would this strategy have come, in how many trials"
// without a GPU.
type Landscape struct {
	Path    string
	Space   space.Space
	Valid   []space.Config // status != "invalid", the default first, then log order
	Default space.Config   // the first line's config
	// Torn is the number of a torn last line that was skipped (the search
	// was killed while writing it); 0 when there is none.
	Torn    int
	results map[space.ConfigKey]Observation
}

// Lookup returns the recorded outcome of c. Configs missing from the log
// count as invalid (not OK).
func (l Landscape) Lookup(c space.Config) Observation {
	if o, ok := l.results[configKey(c)]; ok {
		return o
	}
	return Observation{Config: c}
}

// Optimum returns the best OK observation of the landscape: what an
// exhaustive search finds. ok=false when nothing passed.
func (l Landscape) Optimum() (best Observation, ok bool) {
	for _, c := range l.Valid {
		o := l.results[configKey(c)]
		if o.OK && (!ok || o.ScoreUS < best.ScoreUS) {
			best, ok = o, true
		}
	}
	return best, ok
}

// Problem is the strategy problem the landscape poses.
func (l Landscape) Problem(budget int, seed int64) Problem {
	return Problem{Space: l.Space, Valid: l.Valid, Default: l.Default, Budget: budget, Seed: seed}
}

// LoadLandscape reads a trial log (as `symmtune search --log` writes it,
// or gzipped with a name ending in .gz) into a landscape. The space is
// rebuilt from the configs in the log: each parameter's distinct values,
// integers sorted numerically and strings lexically. Lines that
// re-measure finalists after the search (refined) are skipped: a replay
// models the search itself. A config logged twice keeps its first
// measurement (a resumed search may repeat one), and a torn last line
// (the host was killed while writing it) is skipped and its number kept
// in Torn. Errors name the file and line and are *InputError: the log is
// the user's input.
func LoadLandscape(path string) (Landscape, error) {
	lf, err := triallog.Read(path)
	if err != nil {
		var le *triallog.LineError
		if errors.As(err, &le) {
			return Landscape{}, landscapeLineError(le)
		}
		return Landscape{}, &InputError{Err: fmt.Errorf("landscape: %w", err)}
	}
	l := Landscape{Path: path, Torn: lf.Torn, results: map[space.ConfigKey]Observation{}}
	type entry struct {
		c      space.Config
		status triallog.Status
	}
	var (
		entries []entry
		names   []string // parameter names of the first line, sorted
		values  = map[string]map[space.Value]bool{}
		job     string
	)
	bad := func(line int, format string, args ...any) error {
		return &InputError{Err: fmt.Errorf("landscape %s line %d: %s", path, line, fmt.Sprintf(format, args...))}
	}
	for i, r := range lf.Results {
		line := lf.Lines[i]
		if r.Refined {
			continue
		}
		if job == "" {
			job = r.Job()
		} else if j := r.Job(); j != job {
			return Landscape{}, bad(line, "job %s differs from the first line's %s: a landscape holds one job", j, job)
		}
		lineNames := slices.Sorted(maps.Keys(r.Config))
		if names == nil {
			names = lineNames
		} else if !slices.Equal(lineNames, names) {
			return Landscape{}, bad(line, "config has parameters %s, the first line has %s", strings.Join(lineNames, ","), strings.Join(names, ","))
		}
		obs := Observation{Config: r.Config}
		if r.Status == triallog.StatusOK {
			if r.ScoreUS == nil || math.IsNaN(*r.ScoreUS) || math.IsInf(*r.ScoreUS, 0) || *r.ScoreUS < 0 {
				return Landscape{}, bad(line, "status ok needs a finite, non-negative score_us")
			}
			obs.ScoreUS, obs.OK = *r.ScoreUS, true
		}
		key := configKey(r.Config)
		if _, dup := l.results[key]; dup {
			continue
		}
		for n, v := range r.Config {
			if values[n] == nil {
				values[n] = map[space.Value]bool{}
			}
			values[n][v] = true
		}
		l.results[key] = obs
		entries = append(entries, entry{r.Config, r.Status})
	}
	if len(entries) == 0 {
		return Landscape{}, &InputError{Err: fmt.Errorf("landscape %s: no trials", path)}
	}
	for _, n := range names {
		p := space.Param{Name: n}
		isStr := false
		for v := range values[n] {
			p.Values = append(p.Values, v)
			isStr = v.IsStr
		}
		for _, v := range p.Values {
			if v.IsStr != isStr {
				return Landscape{}, &InputError{Err: fmt.Errorf("landscape %s: parameter %q mixes integers and strings", path, n)}
			}
		}
		sort.Slice(p.Values, func(i, j int) bool {
			if isStr {
				return p.Values[i].Str < p.Values[j].Str
			}
			return p.Values[i].Int < p.Values[j].Int
		})
		l.Space.Params = append(l.Space.Params, p)
	}
	l.Default = entries[0].c
	for _, e := range entries {
		if e.status != triallog.StatusInvalid {
			l.Valid = append(l.Valid, e.c)
		}
	}
	return l, nil
}

// landscapeLineError says what is wrong with a line that is not a trial,
// in the words of the landscape's other errors.
func landscapeLineError(le *triallog.LineError) error {
	why := le.Err.Error()
	var se *triallog.StatusError
	if errors.As(le.Err, &se) {
		why = fmt.Sprintf("unknown status %q (want %s)", se.Status, triallog.StatusList())
	}
	return &InputError{Err: fmt.Errorf("landscape %s line %d: %s", le.Path, le.Line, why)}
}

// ReplayResult is what `symmtune replay --json` prints. With no OK config
// among the trials, BestScoreUS is 0 and BestConfig null.
type ReplayResult struct {
	BestScoreUS  float64        `json:"best_score_us"`
	BestConfig   map[string]any `json:"best_config"`
	TrialsUsed   int            `json:"trials_used"`
	Strategy     string         `json:"strategy"`
	Seed         int64          `json:"seed"`
	SpaceSize    int            `json:"space_size"`
	ValidConfigs int            `json:"valid_configs"`
}

// errContract marks a strategy breaking the Strategy contract during a
// replay: a bug in this package, not bad input.
var errContract = errors.New("strategy broke its contract")

// Replay runs strategy name against the landscape the way the host would:
// each proposed config is one trial, answered from the log, until the
// strategy is done or budget trials were used (budget <= 0: every valid
// config). A strategy proposing a config twice or outside Valid is an
// error wrapping errContract.
func Replay(l Landscape, name string, budget int, seed int64) (ReplayResult, error) {
	res, _, err := replay(l, name, budget, seed)
	return res, err
}

// replay is Replay that also returns the trials in order.
func replay(l Landscape, name string, budget int, seed int64) (ReplayResult, []Observation, error) {
	if budget <= 0 || budget > len(l.Valid) {
		budget = len(l.Valid)
	}
	s, err := New(name, l.Problem(budget, seed))
	if err != nil {
		return ReplayResult{}, nil, err
	}
	defer s.Close()
	res := ReplayResult{Strategy: s.Name(), Seed: seed, SpaceSize: l.Space.Size(), ValidConfigs: len(l.Valid)}
	history, err := drive(l, s, budget)
	if err != nil {
		return res, history, fmt.Errorf("replay %s on %s: %w", name, l.Path, err)
	}
	res.TrialsUsed = len(history)
	var best Observation
	found := false
	for _, o := range history {
		if o.OK && (!found || o.ScoreUS < best.ScoreUS) {
			best, found = o, true
		}
	}
	if found {
		res.BestScoreUS = best.ScoreUS
		res.BestConfig = best.Config.Any()
	}
	return res, history, nil
}

// drive runs s against the landscape the way the host does, up to budget
// trials, checking the Strategy contract on every proposal.
func drive(l Landscape, s Strategy, budget int) ([]Observation, error) {
	valid := make(map[space.ConfigKey]bool, len(l.Valid))
	for _, c := range l.Valid {
		valid[configKey(c)] = true
	}
	var history []Observation
	seen := map[space.ConfigKey]bool{}
	for len(history) < budget {
		batch := s.Next(history)
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			if len(history) >= budget {
				break
			}
			key := configKey(c)
			if !valid[key] {
				return history, fmt.Errorf("trial %d: proposed %s, not a valid config: %w", len(history)+1, key, errContract)
			}
			if seen[key] {
				return history, fmt.Errorf("trial %d: proposed %s again: %w", len(history)+1, key, errContract)
			}
			seen[key] = true
			history = append(history, l.Lookup(c))
		}
	}
	return history, nil
}

package strategy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

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
	results map[string]Observation
}

// Lookup returns the recorded outcome of c. Configs missing from the log
// count as invalid (not OK).
func (l Landscape) Lookup(c space.Config) Observation {
	if o, ok := l.results[c.String()]; ok {
		return o
	}
	return Observation{Config: c}
}

// Optimum returns the best OK observation of the landscape: what an
// exhaustive search finds. ok=false when nothing passed.
func (l Landscape) Optimum() (best Observation, ok bool) {
	for _, c := range l.Valid {
		o := l.results[c.String()]
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

// logLine is the part of a `symmtune search --log` line a landscape needs;
// other keys are ignored.
type logLine struct {
	Config  map[string]space.Value `json:"config"`
	Status  *string                `json:"status"`
	ScoreUS *float64               `json:"score_us"`
	// Refined lines re-measure finalists with more iterations after the
	// search; a replay models the search itself, so they are skipped.
	Refined bool `json:"refined"`
	// The job, when present, must be the same on every line: a log may
	// hold several jobs, a landscape only one.
	Kernel  string `json:"kernel"`
	Backend string `json:"backend"`
	World   int    `json:"world"`
	Dtype   string `json:"dtype"`
	Shape   string `json:"shape"`
}

func (ln logLine) job() string {
	return fmt.Sprintf("kernel=%q backend=%q world=%d dtype=%q shape=%q", ln.Kernel, ln.Backend, ln.World, ln.Dtype, ln.Shape)
}

var knownStatus = map[string]bool{"ok": true, "wrong": true, "failed": true, "hang": true, "crash": true, "invalid": true}

// LoadLandscape reads a trial log (JSON lines, as `symmtune search --log`
// writes them) into a landscape. The space is rebuilt from the configs in
// the log: each parameter's distinct values, integers sorted numerically
// and strings lexically. A config logged twice keeps its first measurement
// (a resumed search may repeat one). Errors name the file and line and are
// *InputError: the log is the user's input.
func LoadLandscape(path string) (Landscape, error) {
	f, err := os.Open(path)
	if err != nil {
		return Landscape{}, &InputError{Err: fmt.Errorf("landscape: %w", err)}
	}
	defer f.Close()
	l := Landscape{Path: path, results: map[string]Observation{}}
	type entry struct {
		c      space.Config
		status string
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
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var ln logLine
		if err := json.Unmarshal([]byte(text), &ln); err != nil {
			return Landscape{}, bad(line, "%v", err)
		}
		if len(ln.Config) == 0 {
			return Landscape{}, bad(line, "no config")
		}
		if ln.Status == nil {
			return Landscape{}, bad(line, "no status")
		}
		status := *ln.Status
		if !knownStatus[status] {
			return Landscape{}, bad(line, "unknown status %q (want ok, wrong, failed, hang, crash or invalid)", status)
		}
		if ln.Refined {
			continue
		}
		if job == "" {
			job = ln.job()
		} else if j := ln.job(); j != job {
			return Landscape{}, bad(line, "job %s differs from the first line's %s: a landscape holds one job", j, job)
		}
		c := space.Config(ln.Config)
		lineNames := make([]string, 0, len(c))
		for n := range c {
			lineNames = append(lineNames, n)
		}
		sort.Strings(lineNames)
		if names == nil {
			names = lineNames
		} else if strings.Join(lineNames, ",") != strings.Join(names, ",") {
			return Landscape{}, bad(line, "config has parameters %s, the first line has %s", strings.Join(lineNames, ","), strings.Join(names, ","))
		}
		obs := Observation{Config: c}
		if status == "ok" {
			if ln.ScoreUS == nil || math.IsNaN(*ln.ScoreUS) || math.IsInf(*ln.ScoreUS, 0) || *ln.ScoreUS < 0 {
				return Landscape{}, bad(line, "status ok needs a finite, non-negative score_us")
			}
			obs.ScoreUS, obs.OK = *ln.ScoreUS, true
		}
		key := c.String()
		if _, dup := l.results[key]; dup {
			continue
		}
		for n, v := range c {
			if values[n] == nil {
				values[n] = map[space.Value]bool{}
			}
			values[n][v] = true
		}
		l.results[key] = obs
		entries = append(entries, entry{c, status})
	}
	if err := sc.Err(); err != nil {
		return Landscape{}, &InputError{Err: fmt.Errorf("landscape %s line %d: %w", path, line+1, err)}
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
		if e.status != "invalid" {
			l.Valid = append(l.Valid, e.c)
		}
	}
	return l, nil
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
	defer closeStrategy(s)
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
	valid := make(map[string]bool, len(l.Valid))
	for _, c := range l.Valid {
		valid[c.String()] = true
	}
	var history []Observation
	seen := map[string]bool{}
	for len(history) < budget {
		batch := s.Next(history)
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			if len(history) >= budget {
				break
			}
			key := c.String()
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

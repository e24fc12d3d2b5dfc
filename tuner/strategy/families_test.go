package strategy

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// familiesOf returns the family of each config of l's valid configs, by key.
func familiesOf(t *testing.T, l Landscape) (*lattice, *familySet) {
	t.Helper()
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	return lat, lat.families()
}

// coveredBy counts the families history measured.
func coveredBy(lat *lattice, fs *familySet, history []Observation) int {
	seen := map[int]bool{}
	for _, o := range history {
		if i, ok := lat.byKey[o.Config.Key()]; ok {
			seen[fs.of[i]] = true
		}
	}
	return len(seen)
}

// valuesMissed names a structural value (param=value) no config of
// history has, "" when every one is covered.
func valuesMissed(lat *lattice, fs *familySet, history []Observation) string {
	for _, d := range fs.dims {
		for v := range lat.size(d) {
			found := false
			for _, o := range history {
				if i, ok := lat.byKey[o.Config.Key()]; ok && lat.idx[i][d] == v {
					found = true
					break
				}
			}
			if !found {
				p := lat.sp.Params[d]
				return p.Name + "=" + p.Values[v].String()
			}
		}
	}
	return ""
}

// gridLandscape is a small space with three impls, a graph switch and a
// size: 3 x 2 families, each of 8 configs, the best in the family the
// space lists last.
func gridLandscape() Landscape {
	return synth("families", []space.Param{
		strParam("impl", "a", "b", "c"), intParam("graph", 0, 1), rangeParam("size", 8),
	}, func(idx []int) outcome {
		return outcome{status: "ok", score: float64(100 - 10*idx[0] - 3*idx[1] + idx[2])}
	})
}

// TestBudgetMeasuresEveryFamily: a budget of as many trials as the space
// has families measures one config of each, whatever the strategy (but
// random sampling, the baseline), on a small grid and on every recorded
// landscape; the bandit (auto) covers every structural value with that
// budget, and every family in its first trials with four times it (see
// bandit, "the first pass, learnt").
func TestBudgetMeasuresEveryFamily(t *testing.T) {
	skipReplaysUnderRace(t)
	ls := []Landscape{gridLandscape()}
	files := recordedLandscapes(t)
	for _, f := range files {
		l, err := LoadLandscape(f)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	names := []string{Auto, Exhaustive, Pattern, NelderMead, Surrogate, Bandit}
	// The replays first, on every core and each once: auto is the bandit
	// below the whole space (replayResolved), so the two names share theirs.
	var jobs []resolvedJob
	for _, l := range ls {
		_, fs := familiesOf(t, l)
		n := len(fs.members)
		for _, name := range names {
			for seed := int64(1); seed <= 3; seed++ {
				jobs = append(jobs, resolvedJob{l, name, n, seed})
				if wide := firstPassBudget(n); (name == Auto || name == Bandit) && wide < len(l.Valid) {
					jobs = append(jobs, resolvedJob{l, name, wide, seed})
				}
			}
		}
	}
	prefetchResolved(jobs)
	for _, l := range ls {
		lat, fs := familiesOf(t, l)
		n := len(fs.members)
		for _, name := range names {
			for seed := int64(1); seed <= 3; seed++ {
				_, h, err := replayResolved(l, name, n, seed)
				if err != nil {
					t.Fatal(err)
				}
				if name == Auto || name == Bandit {
					// The bandit's first pass covers every structural
					// value when the families are more than
					// banditDesignShare of the budget, every family once
					// the budget is 1/banditDesignShare times theirs.
					if missing := valuesMissed(lat, fs, h); missing != "" {
						t.Errorf("%s on %s seed %d: %d trials measured no config with %s", name, filepath.Base(l.Path), seed, len(h), missing)
					}
					wide := firstPassBudget(n)
					if wide >= len(l.Valid) {
						// Four times the families is the whole space
						// here (1 x H200's world-1 agmm at 256 rows:
						// 120 families in 384 configs): every config is
						// measured, in exhaustive order, so there is no
						// first pass to judge.
						continue
					}
					_, h, err = replayResolved(l, name, wide, seed)
					if err != nil {
						t.Fatal(err)
					}
					h = h[:min(len(h), n+1)] // the default and one of each family
				}
				if got := coveredBy(lat, fs, h); got != n {
					t.Errorf("%s on %s seed %d: %d trials measured %d of %d families", name, filepath.Base(l.Path), seed, len(h), got, n)
				}
			}
		}
	}
	if _, fs := familiesOf(t, gridLandscape()); len(fs.members) != 6 {
		t.Fatalf("the grid has %d families, want 6 (impl x graph)", len(fs.members))
	}
}

// TestExhaustiveInterleavesFamilies: the exhaustive order, which a search
// cut short by its time runs, measures every family before a second config
// of any, then takes the families in turn, and still lists every valid
// config once.
func TestExhaustiveInterleavesFamilies(t *testing.T) {
	for _, path := range []string{"../testdata/landscape-cuda-agmm-w2-m8192n3584k8192.jsonl.gz", "../testdata/landscape-cuda-allreduce-w4-n32768.jsonl", ""} {
		l := gridLandscape()
		if path != "" {
			var err error
			if l, err = LoadLandscape(path); err != nil {
				t.Fatal(err)
			}
		}
		lat, fs := familiesOf(t, l)
		_, h, err := replay(l, Exhaustive, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != len(lat.valid) {
			t.Fatalf("%s: %d trials of %d valid configs", l.Path, len(h), len(lat.valid))
		}
		if !h[0].Config.Equal(l.Default) {
			t.Errorf("%s: first trial %s, want the default %s", l.Path, h[0].Config, l.Default)
		}
		n := len(fs.members)
		if got := coveredBy(lat, fs, h[:n]); got != n {
			t.Errorf("%s: the first %d trials measured %d families", l.Path, n, got)
		}
		// At every prefix, families with configs left differ by at most
		// one measured config.
		count := make([]int, n)
		for k, o := range h {
			count[fs.of[lat.byKey[o.Config.Key()]]]++
			lo, hi := len(lat.valid), 0
			for f, c := range count {
				if c < len(fs.members[f]) {
					lo = min(lo, c)
				}
				hi = max(hi, min(c, len(fs.members[f])))
			}
			if k >= n && lo < len(lat.valid) && hi-lo > 1 {
				t.Fatalf("%s: after %d trials the families hold %d to %d measured configs", l.Path, k+1, lo, hi)
			}
		}
	}
}

func TestCoverage(t *testing.T) {
	l := gridLandscape()
	p := l.Problem(0, 1)
	c := func(impl string, graph, size int64) space.Config {
		return space.Config{"impl": space.Str(impl), "graph": space.Int(graph), "size": space.Int(size)}
	}
	for _, tc := range []struct {
		name     string
		measured []space.Config
		want     string
	}{
		{"none", nil, "measured 0 of 6 families (none); not measured: impl=a,graph=0; impl=a,graph=1; impl=b,graph=0; impl=b,graph=1; impl=c,graph=0; impl=c,graph=1"},
		{"two, one twice", []space.Config{c("a", 0, 1), c("a", 0, 2), c("c", 1, 0)},
			"measured 2 of 6 families (impl=a,graph=0; impl=c,graph=1); not measured: impl=a,graph=1; impl=b,graph=0; impl=b,graph=1; impl=c,graph=0"},
		{"all", []space.Config{c("a", 0, 1), c("a", 1, 1), c("b", 0, 1), c("b", 1, 1), c("c", 0, 1), c("c", 1, 1)}, "every family (6) measured"},
	} {
		cov, err := Coverage(p, tc.measured)
		if err != nil {
			t.Fatal(err)
		}
		if got := cov.Note(); got != tc.want {
			t.Errorf("%s: %q\nwant %q", tc.name, got, tc.want)
		}
	}
	var many []string
	for i := range familiesShown + 3 {
		many = append(many, fmt.Sprint(i))
	}
	if got := shortList(many); !strings.HasSuffix(got, "; and 3 more") {
		t.Errorf("shortList of %d: %q", len(many), got)
	}
}

// firstPassBudget is the budget at which the bandit's first pass measures
// every one of n families (1/banditDesignShare times theirs, rounded).
func firstPassBudget(n int) int { return int(float64(n)/banditDesignShare + 0.5) }

package tuner

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// gemmSpace is a small GEMM-like space: tile sizes, an impl and threads.
var gemmSpace = space.Space{Params: []space.Param{
	{Name: "block_m", Values: []space.Value{space.Int(16), space.Int(32), space.Int(64), space.Int(128)}},
	{Name: "impl", Values: []space.Value{space.Str("fused"), space.Str("sequential")}},
	{Name: "threads", Values: []space.Value{space.Int(1), space.Int(2)}},
}}

var gemmDefault = space.Config{"block_m": space.Int(32), "impl": space.Str("fused"), "threads": space.Int(1)}

func cfg(bm int64, impl string, threads int64) space.Config {
	return space.Config{"block_m": space.Int(bm), "impl": space.Str(impl), "threads": space.Int(threads)}
}

func TestMapConfig(t *testing.T) {
	cases := []struct {
		name string
		from space.Config
		want space.Config
	}{
		{"in the space as it is", cfg(64, "sequential", 2), cfg(64, "sequential", 2)},
		{"an integer the space lacks: the nearest by ratio", space.Config{"block_m": space.Int(96), "impl": space.Str("fused"), "threads": space.Int(2)}, cfg(128, "fused", 2)},
		{"an integer past the largest", space.Config{"block_m": space.Int(1024), "impl": space.Str("fused"), "threads": space.Int(1)}, cfg(128, "fused", 1)},
		{"a string the space lacks: the default's", space.Config{"block_m": space.Int(16), "impl": space.Str("tma"), "threads": space.Int(2)}, cfg(16, "fused", 2)},
		{"a parameter missing: the default's", space.Config{"block_m": space.Int(64)}, cfg(64, "fused", 1)},
		{"a parameter the space lacks: dropped", space.Config{"block_m": space.Int(64), "impl": space.Str("sequential"), "threads": space.Int(1), "stages": space.Int(3)}, cfg(64, "sequential", 1)},
		{"a string for an integer parameter: the default's", space.Config{"block_m": space.Str("big"), "impl": space.Str("fused"), "threads": space.Int(2)}, cfg(32, "fused", 2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mapConfig(c.from, gemmSpace, gemmDefault)
			if got.String() != c.want.String() {
				t.Errorf("mapConfig(%s) = %s, want %s", c.from, got, c.want)
			}
			if err := gemmSpace.Check(got); err != nil {
				t.Errorf("mapped config outside the space: %v", err)
			}
		})
	}
}

func TestPickSeeds(t *testing.T) {
	nb := func(shape int64, dist float64, c space.Config) cache.Neighbour {
		return cache.Neighbour{Entry: cache.Entry{Key: cache.Key{Kernel: "agmm", World: 2, Dtype: "f32", Shape: space.Shape{"m": shape}}, Config: c}, Distance: dist}
	}
	var valid []space.Config
	for _, c := range gemmSpace.Enumerate() {
		if c["threads"] != space.Int(2) || c["block_m"] != space.Int(128) { // the space's only hole: 128 x 2 threads
			valid = append(valid, c)
		}
	}
	near := []cache.Neighbour{
		nb(1, 0.5, cfg(64, "fused", 2)),
		nb(2, 1, cfg(64, "fused", 2)),       // the same winner: one seed
		nb(3, 1.5, gemmDefault),             // the default: a seed at no cost
		nb(4, 2, cfg(128, "sequential", 2)), // invalid here
		nb(5, 2.5, space.Config{"block_m": space.Int(96), "impl": space.Str("sequential"), "threads": space.Int(1)}), // maps to 128
		nb(6, 3, cfg(16, "fused", 1)),
		nb(7, 4, cfg(16, "sequential", 1)), // past the limit
	}
	cases := []struct {
		name   string
		n      int
		shapes []int64
	}{
		{"up to three distinct valid configs, nearest first", 3, []int64{1, 3, 5}},
		{"one", 1, []int64{1}},
		{"more than there are", 10, []int64{1, 3, 5, 6, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := pickSeeds(near, valid, gemmSpace, gemmDefault, c.n)
			var shapes []int64
			for _, s := range got {
				shapes = append(shapes, s.From.Shape["m"])
			}
			if !slices.Equal(shapes, c.shapes) {
				t.Errorf("seeds from shapes %v, want %v", shapes, c.shapes)
			}
		})
	}
	if got := pickSeeds(nil, valid, gemmSpace, gemmDefault, 3); len(got) != 0 {
		t.Errorf("seeds from an empty cache: %v", got)
	}
}

func TestStale(t *testing.T) {
	obs := func(scores ...float64) []strategy.Observation {
		var h []strategy.Observation
		for _, s := range scores {
			h = append(h, strategy.Observation{ScoreUS: s, OK: s > 0})
		}
		return h
	}
	cases := []struct {
		name    string
		history []strategy.Observation
		want    bool
	}{
		{"no gain in the last 3", obs(100, 90, 95, 91, 99), true},
		{"a gain within the last 3", obs(100, 95, 90, 80, 99), false},
		{"small steps below the gain threshold do not count", obs(100, 90, 89, 88, 87.5), true},
		{"failures count as trials without gain", obs(100, 90, -1, -1, -1), true},
		{"too short to judge", obs(100, 90, 95), false},
		{"nothing ran", obs(-1, -1, -1, -1, -1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := stale(c.history, 3, 0.03); got != c.want {
				t.Errorf("stale = %v, want %v", got, c.want)
			}
		})
	}
}

// listStrategy proposes its configs one at a time, skipping observed ones.
type listStrategy struct{ cs []space.Config }

func (l *listStrategy) Name() string { return "list" }
func (l *listStrategy) Close()       {}
func (l *listStrategy) Next(history []strategy.Observation) []space.Config {
	seen := map[string]bool{}
	for _, o := range history {
		seen[o.Config.String()] = true
	}
	for _, c := range l.cs {
		if !seen[c.String()] {
			return []space.Config{c}
		}
	}
	return nil
}

// TestSeededStrategy: the default and the seeds come first, the strategy
// then continues without proposing them again, and the patience rule ends
// the exploration once the seed stays best.
func TestSeededStrategy(t *testing.T) {
	seed := cfg(64, "sequential", 2)
	others := []space.Config{gemmDefault, cfg(16, "fused", 1), seed, cfg(16, "fused", 2), cfg(64, "fused", 1), cfg(64, "fused", 2), cfg(16, "sequential", 1)}
	score := func(c space.Config) float64 {
		if c.String() == seed.String() {
			return 50
		}
		return 100
	}
	for _, patience := range []int{0, 2} {
		tr := &Transfer{Seeds: []Seed{{Config: seed}}, Patience: patience}
		ss := &session{transfer: tr, out: &Outcome{}}
		ss.out.Desc.Default = gemmDefault
		st := ss.withSeeds(&listStrategy{others})
		var history []strategy.Observation
		var order []string
		for {
			batch := st.Next(history)
			if len(batch) == 0 {
				break
			}
			for _, c := range batch {
				order = append(order, c.String())
				history = append(history, strategy.Observation{Config: c, ScoreUS: score(c), OK: true})
			}
		}
		if order[0] != gemmDefault.String() || order[1] != seed.String() {
			t.Errorf("patience %d: first trials %v, want the default then the seed", patience, order[:2])
		}
		seen := map[string]bool{}
		for _, k := range order {
			if seen[k] {
				t.Errorf("patience %d: %s proposed twice", patience, k)
			}
			seen[k] = true
		}
		want := len(others)
		if patience > 0 {
			want = 2 + patience // the default, the seed, then patience trials without gain
		}
		if len(order) != want {
			t.Errorf("patience %d: %d trials, want %d", patience, len(order), want)
		}
		if (tr.Stopped > 0) != (patience > 0) {
			t.Errorf("patience %d: Stopped %d", patience, tr.Stopped)
		}
	}
}

func TestStopsEarly(t *testing.T) {
	cases := []struct {
		name string
		job  Job
		want bool
	}{
		{"no budget given", Job{Strategy: "auto", BudgetTrials: AutoBudget}, true},
		{"a trial cap", Job{Strategy: "auto", BudgetTrials: 40}, true},
		{"a time cap", Job{Strategy: "auto", BudgetTime: 60e9}, true},
		{"every valid config (--exhaustive)", Job{Strategy: "auto", BudgetTrials: 0}, false},
		{"the exhaustive strategy", Job{Strategy: strategy.Exhaustive, BudgetTrials: AutoBudget}, false},
	}
	for _, c := range cases {
		if got := stopsEarly(c.job); got != c.want {
			t.Errorf("%s: stopsEarly = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSecondJobSeedsFromTheFirst: a job at a new shape starts from the
// winner the first job put in the cache, right after the default, and
// says so; with NoTransfer it does not.
func TestSecondJobSeedsFromTheFirst(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	cachePath := filepath.Join(t.TempDir(), "configs.toml")
	job := func(n string) Job {
		j := faultyJob(2)
		// The default (medium) and fast only: no hangs, a known winner.
		j.ShapeText, j.Where, j.Finalists = n, "mode=fast", 2
		return j
	}
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: cachePath}, Logger: quietLogger()}
	first, err := s.Search(context.Background(), job("n=1024"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Transfer == nil || len(first.Transfer.Seeds) != 0 {
		t.Fatalf("first job: transfer %+v, want none from an empty cache", first.Transfer)
	}
	if first.Best == nil || first.Best.Config["mode"].Str != "fast" {
		t.Fatalf("first job's winner %v, want mode=fast", first.Best)
	}
	for _, noTransfer := range []bool{false, true} {
		s.NoTransfer = noTransfer
		o, err := s.Search(context.Background(), job("n=4096"))
		if err != nil {
			t.Fatal(err)
		}
		if noTransfer {
			if line := o.Transfer.Line(); line != "" || o.Transfer != nil {
				t.Errorf("with NoTransfer: transfer %q", line)
			}
			continue
		}
		if o.Transfer == nil || len(o.Transfer.Seeds) != 1 {
			t.Fatalf("second job: transfer %+v, want one seed", o.Transfer)
		}
		sd := o.Transfer.Seeds[0]
		if !sd.From.Equal(first.Entry.Key) || sd.Config["mode"].Str != "fast" || sd.Distance != 2 {
			t.Errorf("seed %+v, want the first job's entry %s (mode=fast, distance 2)", sd, first.Entry.Key)
		}
		if line := o.Transfer.Line(); !strings.Contains(line, "seeded from 1 cache entry: "+first.Entry.Key.String()) {
			t.Errorf("transfer line %q does not name the first job's entry", line)
		}
		if len(o.Results) < 2 || !o.Results[0].Default || o.Results[1].Config["mode"].Str != "fast" {
			t.Errorf("first trials %v, want the default then the seed", o.Results)
		}
	}
}

// TestSeededByTheDefault: a seed that is the default costs no trial, and
// the stopping rule still applies.
func TestSeededByTheDefault(t *testing.T) {
	tr := &Transfer{Seeds: []Seed{{Config: gemmDefault}}, Patience: 2}
	ss := &session{transfer: tr, out: &Outcome{}}
	ss.out.Desc.Default = gemmDefault
	st := ss.withSeeds(&listStrategy{[]space.Config{cfg(16, "fused", 1), gemmDefault, cfg(64, "fused", 1), cfg(64, "fused", 2), cfg(16, "fused", 2)}})
	var history []strategy.Observation
	for {
		batch := st.Next(history)
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			history = append(history, strategy.Observation{Config: c, ScoreUS: 100, OK: true})
		}
	}
	if len(history) != 3 || history[0].Config.String() != gemmDefault.String() || tr.Stopped != 3 {
		t.Errorf("%d trials (first %s), stopped after %d; want the default, then 2 without gain", len(history), history[0].Config, tr.Stopped)
	}
}

// TestPatienceFor: the stopping rule applies to a job that may stop early
// and whose nearest seed is near; a far seed only seeds.
func TestPatienceFor(t *testing.T) {
	near, far := Seed{Distance: 1}, Seed{Distance: transferNear + 0.5}
	for _, tc := range []struct {
		name    string
		seeds   []Seed
		mayStop bool
		want    int
	}{
		{"no seeds", nil, true, 0},
		{"near seed", []Seed{near, far}, true, transferPatience},
		{"at the bound", []Seed{{Distance: transferNear}}, true, transferPatience},
		{"nearest is far", []Seed{far}, true, 0},
		{"exhaustive job", []Seed{near}, false, 0},
	} {
		if got := patienceFor(tc.seeds, tc.mayStop); got != tc.want {
			t.Errorf("%s: patience %d, want %d", tc.name, got, tc.want)
		}
	}
	line := (&Transfer{Seeds: []Seed{far}}).Line()
	if !strings.Contains(line, "no early stop") {
		t.Errorf("far seed's line %q does not say the rule is off", line)
	}
}

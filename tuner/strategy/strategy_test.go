package strategy

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/space"
)

var searching = []string{Exhaustive, Random, Pattern, NelderMead, Surrogate, Bandit}

func synthetic() []Landscape { return []Landscape{bowl(), plateau(), holes(), named()} }

// driveChecked runs s like the host does, checking the Strategy contract on every
// batch: nothing observed is proposed again, nothing outside Valid is
// proposed, and the budget is respected. It returns the trials in order.
func driveChecked(t *testing.T, l Landscape, s Strategy, budget int) []Observation {
	t.Helper()
	valid := map[string]bool{}
	for _, c := range l.Valid {
		valid[c.String()] = true
	}
	seen := map[string]bool{}
	var history []Observation
	for calls := 0; len(history) < budget; calls++ {
		if calls > 10*len(l.Valid)+10 {
			t.Fatalf("%s on %s: Next keeps returning configs after %d calls", s.Name(), l.Path, calls)
		}
		batch := s.Next(history)
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			key := c.String()
			if !valid[key] {
				t.Fatalf("%s on %s: proposed %s, not a valid config", s.Name(), l.Path, key)
			}
			if seen[key] {
				t.Fatalf("%s on %s: proposed %s twice", s.Name(), l.Path, key)
			}
			seen[key] = true
			if len(history) < budget {
				history = append(history, l.Lookup(c))
			}
		}
	}
	return history
}

func best(h []Observation) (Observation, bool) {
	var b Observation
	ok := false
	for _, o := range h {
		if o.OK && (!ok || o.ScoreUS < b.ScoreUS) {
			b, ok = o, true
		}
	}
	return b, ok
}

func keys(h []Observation) []string {
	out := make([]string, len(h))
	for i, o := range h {
		out[i] = o.Config.String()
	}
	return out
}

// TestContract checks the Strategy contract of every searching strategy on
// every synthetic landscape at four budgets. The subtests are independent
// (each drives strategies of its own over a landscape it only reads), so
// they run in parallel: both cores busy, and under -race the strategies
// run side by side. Under -race it leaves out the surrogate's and the
// bandit's subtests on the bowl (960 valid configs, driven to the end four
// times each: two minutes of the race run, each on one goroutine, as the
// surrogate predicts in parallel only from 2048 valid configs):
// both strategies still run under -race on the other landscapes, and
// make test runs the whole test again without -race (NORACE_TESTS).
func TestContract(t *testing.T) {
	for _, l := range synthetic() {
		for _, name := range searching {
			for _, budget := range []int{1, 7, len(l.Valid) / 5, len(l.Valid)} {
				t.Run(fmt.Sprintf("%s/%s/%d", l.Path, name, budget), func(t *testing.T) {
					if raceDetector && l.Path == "bowl" && (name == Surrogate || name == Bandit) {
						t.Skip("the bowl's whole space under -race: run without -race (make test does)")
					}
					t.Parallel()
					s, err := New(name, l.Problem(budget, 3))
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					// Drive past the budget: a strategy must stop by itself
					// once everything is measured.
					h := driveChecked(t, l, s, len(l.Valid)+1)
					if budget == len(l.Valid) && len(h) != len(l.Valid) {
						t.Errorf("used %d trials of %d valid configs before stopping", len(h), len(l.Valid))
					}
					// And under a budget, the host cuts it short.
					s2, _ := New(name, l.Problem(budget, 3))
					defer s2.Close()
					if h := driveChecked(t, l, s2, budget); len(h) > budget {
						t.Errorf("%d trials, budget %d", len(h), budget)
					}
				})
			}
		}
	}
}

func TestDeterministicPerSeed(t *testing.T) {
	l := holes()
	for _, name := range searching {
		t.Run(name, func(t *testing.T) {
			run := func(seed int64) []string {
				s, err := New(name, l.Problem(40, seed))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				return keys(driveChecked(t, l, s, 40))
			}
			a, b := run(7), run(7)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed 7 gave two different trial sequences:\n%v\n%v", a, b)
			}
			if name != Exhaustive && reflect.DeepEqual(a, run(8)) {
				t.Errorf("seeds 7 and 8 gave the same trial sequence")
			}
		})
	}
}

func TestDefaultFirst(t *testing.T) {
	l := bowl()
	// Make the default something other than the first valid config.
	l.Default = l.Valid[100]
	for _, name := range searching {
		s, err := New(name, l.Problem(20, 1))
		if err != nil {
			t.Fatal(err)
		}
		batch := s.Next(nil)
		s.Close()
		if len(batch) == 0 || batch[0].String() != l.Default.String() {
			t.Errorf("%s: first proposal %v, want the default %s", name, batch, l.Default)
		}
	}
}

func TestExhaustiveFindsOptimum(t *testing.T) {
	for _, l := range synthetic() {
		opt, _ := l.Optimum()
		r, err := Replay(l, Exhaustive, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.TrialsUsed != len(l.Valid) || r.BestScoreUS != opt.ScoreUS {
			t.Errorf("%s: exhaustive used %d trials and reached %g; want %d trials and %g", l.Path, r.TrialsUsed, r.BestScoreUS, len(l.Valid), opt.ScoreUS)
		}
	}
}

// TestLocalSearchesDescend checks the local searches on the synthetic
// landscapes: the smooth bowl must be solved exactly with a fifth of the
// configs; on the plateau they must find the well (any score below the
// plateau's 100) that random sampling finds only by luck; with holes (the
// bowl's bottom itself invalid, a third of the rest too) within 5%: the
// valid configs around the hole differ by a few percent only.
func TestLocalSearchesDescend(t *testing.T) {
	cases := []struct {
		l      Landscape
		budget int
		within float64 // of the optimum
	}{
		{bowl(), len(bowl().Valid) / 5, 1.0},
		{plateau(), len(plateau().Valid) / 3, 95.0 / 60},
		{holes(), len(holes().Valid) / 3, 1.05},
	}
	for _, tc := range cases {
		opt, _ := tc.l.Optimum()
		for _, name := range []string{Pattern, NelderMead, Surrogate, Bandit} {
			for seed := int64(1); seed <= 5; seed++ {
				r, err := Replay(tc.l, name, tc.budget, seed)
				if err != nil {
					t.Fatal(err)
				}
				if r.BestScoreUS > opt.ScoreUS*tc.within+1e-9 {
					t.Errorf("%s on %s seed %d: reached %g in %d trials, want <= %g", name, tc.l.Path, seed, r.BestScoreUS, r.TrialsUsed, opt.ScoreUS*tc.within)
				}
			}
		}
	}
}

func TestRandomIsAPermutation(t *testing.T) {
	l := holes()
	s, _ := New(Random, l.Problem(0, 5))
	h := driveChecked(t, l, s, len(l.Valid))
	if len(h) != len(l.Valid) {
		t.Fatalf("random covered %d of %d valid configs", len(h), len(l.Valid))
	}
	if reflect.DeepEqual(keys(h[1:]), func() []string {
		var out []string
		for _, c := range l.Valid[1:] {
			out = append(out, c.String())
		}
		return out
	}()) {
		t.Errorf("random kept Valid's order")
	}
}

func TestNewNames(t *testing.T) {
	l := bowl()
	for _, name := range Names() {
		s, err := New(name, l.Problem(10, 1))
		if err != nil {
			t.Errorf("New(%q): %v", name, err)
			continue
		}
		s.Close()
		// The host checks names with an empty problem before it knows the
		// space; that must work and propose nothing.
		s, err = New(name, Problem{})
		if err != nil {
			t.Errorf("New(%q, Problem{}): %v", name, err)
			continue
		}
		if got := s.Next(nil); got != nil {
			t.Errorf("New(%q, Problem{}).Next = %v, want nil", name, got)
		}
		s.Close()
	}
	_, err := New("simulated-annealing", l.Problem(10, 1))
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("unknown name: err %v (%T), want *InputError", err, err)
	}
	for _, name := range Names() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %q", err, name)
		}
	}
}

func TestAutoPicksExhaustiveWhenBudgetCoversSpace(t *testing.T) {
	l := holes()
	for _, tc := range []struct {
		budget int
		want   string
	}{{0, Exhaustive}, {len(l.Valid), Exhaustive}, {len(l.Valid) + 5, Exhaustive}, {len(l.Valid) - 1, AutoChoice}} {
		s, err := New(Auto, l.Problem(tc.budget, 1))
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != tc.want {
			t.Errorf("auto with budget %d of %d valid: %s, want %s", tc.budget, len(l.Valid), s.Name(), tc.want)
		}
		s.Close()
	}
}

// TestNelderMeadReleasesGoroutine checks that the gonum goroutine ends
// when Next returns nil, on Close, and when the strategy is dropped.
func TestNelderMeadReleasesGoroutine(t *testing.T) {
	l := bowl()
	settle := func(want int) int {
		var n int
		for i := 0; i < 100; i++ {
			runtime.GC()
			if n = runtime.NumGoroutine(); n <= want {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return n
	}
	base := settle(0)

	// Run to the end: Next returning nil has released it.
	s, _ := New(NelderMead, l.Problem(0, 1))
	driveChecked(t, l, s, len(l.Valid)+1)
	// settle: the optimizer goroutine closes its done channel just before
	// it returns, so it may still be counted for a moment after Next.
	if n := settle(base); n > base {
		t.Errorf("after Next returned nil: %d goroutines, %d before", n, base)
	}

	// untilOptimizing drives s until a gonum run is under way (between
	// runs, while it samples or polishes, there is no goroutine to leak).
	untilOptimizing := func(s Strategy) {
		t.Helper()
		var history []Observation
		for len(history) < len(l.Valid) {
			batch := s.Next(history)
			if len(batch) == 0 {
				break
			}
			for _, c := range batch {
				history = append(history, l.Lookup(c))
			}
			if runtime.NumGoroutine() > base {
				return
			}
		}
		t.Fatalf("no optimizer goroutine in %d trials: the test checks nothing", len(history))
	}

	// Stop early with Close, twice.
	s, _ = New(NelderMead, l.Problem(0, 1))
	untilOptimizing(s)
	s.Close()
	s.Close()
	if n := settle(base); n > base {
		t.Errorf("after Close: %d goroutines, %d before", n, base)
	}

	// Drop it without Close: the cleanup stops it.
	func() {
		s, _ := New(NelderMead, l.Problem(0, 1))
		untilOptimizing(s)
	}()
	if n := settle(base); n > base {
		t.Errorf("after dropping the strategy: %d goroutines, %d before", n, base)
	}
}

// TestIgnoresForeignHistory: a host may pass observations the strategy did
// not propose (a resumed log, configs measured for other reasons); they
// count as measured and are not proposed again.
func TestIgnoresForeignHistory(t *testing.T) {
	l := bowl()
	pre := []Observation{l.Lookup(l.Valid[5]), l.Lookup(l.Valid[900]), {Config: space.Config{"zz": space.Int(1)}}}
	for _, name := range searching {
		s, _ := New(name, l.Problem(0, 1))
		history := append([]Observation(nil), pre...)
		for len(history) < len(l.Valid)+len(pre) {
			batch := s.Next(history)
			if len(batch) == 0 {
				break
			}
			for _, c := range batch {
				if c.String() == l.Valid[5].String() || c.String() == l.Valid[900].String() {
					t.Fatalf("%s proposed %s, already in the history", name, c)
				}
				history = append(history, l.Lookup(c))
			}
		}
		s.Close()
		if got := len(history) - len(pre); got != len(l.Valid)-2 {
			t.Errorf("%s proposed %d configs, want the %d not in the history", name, got, len(l.Valid)-2)
		}
	}
}

func TestFinalists(t *testing.T) {
	c := func(i int64) space.Config { return space.Config{"x": space.Int(i)} }
	obs := []Observation{
		{Config: c(1), ScoreUS: 110, OK: true},
		{Config: c(2), ScoreUS: 100, OK: true},
		{Config: c(3), ScoreUS: 50}, // failed: never a finalist
		{Config: c(4), ScoreUS: 124, OK: true},
		{Config: c(5), ScoreUS: 126, OK: true},
		{Config: c(1), ScoreUS: 105, OK: true}, // re-measured: counts once, best score
		{Config: c(6), ScoreUS: 110, OK: true}, // ties keep log order
	}
	cases := []struct {
		k      int
		factor float64
		want   []int64
	}{
		{10, 1.25, []int64{2, 1, 6, 4}},
		{2, 1.25, []int64{2, 1}},
		{10, 1.0, []int64{2}},
		{10, 0.5, []int64{2}},
		{0, 1.25, nil},
		{10, 2, []int64{2, 1, 6, 4, 5}},
	}
	for _, tc := range cases {
		got := Finalists(obs, tc.k, tc.factor)
		var ids []int64
		for _, g := range got {
			ids = append(ids, g["x"].Int)
		}
		if !reflect.DeepEqual(ids, tc.want) {
			t.Errorf("Finalists(k=%d, factor=%g) = %v, want %v", tc.k, tc.factor, ids, tc.want)
		}
	}
	if got := Finalists([]Observation{{Config: c(1)}}, 3, 1.25); got != nil {
		t.Errorf("no OK observations: got %v", got)
	}
}

// TestFirstSearchKeepsToItsShare: the first local search (a pattern
// descent, a Nelder-Mead run with its polish) ends within firstShare of
// the trials the sample left, so a small budget always reaches a second
// start. On the 4-GPU n=32768 all-reduce landscape (23 trials) finishing
// the first search would often take them all.
func TestFirstSearchKeepsToItsShare(t *testing.T) {
	l, err := LoadLandscape("../testdata/landscape-cuda-allreduce-w4-n32768.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	budget := len(l.Valid) / 5
	for _, name := range []string{Pattern, NelderMead} {
		for seed := int64(1); seed <= 10; seed++ {
			s, err := New(name, l.Problem(budget, seed))
			if err != nil {
				t.Fatal(err)
			}
			// restarts counts searches started; the first one ends when
			// the second starts.
			state := func() (restarts, used, from, share int) {
				switch x := s.(type) {
				case *pattern:
					return x.restarts, x.t.used, x.firstFrom, x.firstCap
				case *nelderMead:
					return x.restarts, x.t.used, x.firstFrom, x.firstCap
				}
				t.Fatalf("%T", s)
				return
			}
			var history []Observation
			second := false
			for len(history) < budget && !second {
				batch := s.Next(history)
				if len(batch) == 0 {
					break
				}
				restarts, used, from, share := state()
				if restarts >= 2 {
					second = true
					// The second start's own configs are already counted in used.
					used -= len(batch)
				}
				if restarts >= 1 && used-from > share {
					t.Fatalf("%s seed %d: first search used %d trials, its share is %d", name, seed, used-from, share)
				}
				for _, c := range batch {
					history = append(history, l.Lookup(c))
				}
			}
			s.Close()
			if !second {
				t.Errorf("%s seed %d: %d trials without a second start", name, seed, len(history))
			}
		}
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner"
)

// TestFinalTableKeepsRoundsApart replays what a new user saw on a loaded
// 2-core machine: the default won the re-measurement at 2421.7 µs while a
// config that was never re-measured had a first-pass 1401.9 µs. The table
// must put the two rounds in separate groups, compare each config only
// with the default of its own round, and say how the winner was chosen.
func TestFinalTableKeepsRoundsApart(t *testing.T) {
	cfg := func(b int64) space.Config { return space.Config{"block": space.Int(b)} }
	res := func(c space.Config, score float64, iters int, refined bool) tuner.Result {
		return tuner.Result{Config: c, Status: tuner.StatusOK, ScoreUS: &score, Iters: iters, Refined: refined}
	}
	def, fin, other := cfg(1), cfg(2), cfg(3)
	o := &tuner.Outcome{
		Desc:  sdk.Description{Name: "matmulrs", Dims: []string{"n"}, Default: def},
		Shape: space.Shape{"n": 8},
		Results: []tuner.Result{
			res(def, 1654.3, 5, false),
			res(fin, 1300.0, 5, false),
			res(other, 1401.9, 5, false),
			res(fin, 2600.0, 15, true),
			res(def, 2421.7, 15, true),
		},
	}
	o.Best = &o.Results[4]
	var b bytes.Buffer
	printOutcome(&b, o, 5)
	out := b.String()

	for _, tc := range []struct{ name, line, want string }{
		{"the default, re-measured, leads its group as the winner", "1 2421.7", "1654.3 1.00x block=1 (default)"},
		{"a finalist shows both rounds and the speedup of the re-measured round", "2 2600.0", "1300.0 0.93x block=2"},
		{"a first-pass config is compared with the default's first pass", "1 1401.9", "1.18x block=3"},
		{"the winner's line says how it was chosen", "winner: block=1 2421.7 µs", "fastest of the 2 configs re-measured after the search; it is the default config"},
	} {
		var found string
		for _, l := range strings.Split(out, "\n") {
			// Compare words: the column widths are tabwriter's business.
			if l = strings.Join(strings.Fields(l), " "); strings.HasPrefix(l, tc.line) {
				found = l
			}
		}
		if !strings.Contains(found, tc.want) {
			t.Errorf("%s: line %q does not hold %q; table:\n%s", tc.name, found, tc.want, out)
		}
	}
	re := strings.Index(out, "re-measured after the search, 15 iterations each")
	first := strings.Index(out, "first pass only (not re-measured), 5 iterations each")
	if re < 0 || first < re || strings.Index(out, "1401.9") < first {
		t.Errorf("the first-pass config is not in its own group after the re-measured ones:\n%s", out)
	}
}

// TestHowChosenSaysWhyThereIsNoSpeedup: a default that cannot run the
// problem (a GPU GEMM's default on one rank, whose chunks need peers) is
// not a default that failed, and the winner's line says which it was.
func TestHowChosenSaysWhyThereIsNoSpeedup(t *testing.T) {
	cfg := func(b int64) space.Config { return space.Config{"block": space.Int(b)} }
	ok := func(c space.Config, score float64) tuner.Result {
		return tuner.Result{Config: c, Status: tuner.StatusOK, ScoreUS: &score, Iters: 15, Refined: true}
	}
	def, win := cfg(1), cfg(2)
	failed := tuner.Result{Config: def, Status: tuner.StatusWrong, Iters: 15, Refined: true}
	for _, tc := range []struct {
		name    string
		results []tuner.Result
		def     int // index of the default's result, -1: none
		best    int // index of the winner's result
		want    string
	}{
		{"default cannot run", []tuner.Result{ok(win, 100)}, -1, 0, "the default config cannot run this problem"},
		{"default failed", []tuner.Result{ok(win, 100), failed}, 1, 0, "the default config did not run correctly"},
		{"default ran", []tuner.Result{ok(win, 100), ok(def, 150)}, 1, 0, "1.50x the default's re-measured median"},
		{"default fastest", []tuner.Result{ok(win, 101), ok(def, 100)}, 1, 1, "; it is the default config"},
		{"default kept within the margin", []tuner.Result{ok(win, 99), ok(def, 100)}, 1, 1,
			"the default config: the fastest re-measured config is only 1.010x faster, and the default keeps its place unless beaten by 2%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &tuner.Outcome{Desc: sdk.Description{Default: def}, Results: tc.results}
			o.Best = &o.Results[tc.best]
			if tc.def >= 0 {
				o.Default = &o.Results[tc.def]
			}
			if got := howChosen(o, len(tc.results)); !strings.Contains(got, tc.want) {
				t.Errorf("howChosen = %q, want it to hold %q", got, tc.want)
			}
		})
	}
}

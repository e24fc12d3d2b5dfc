package strategy

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The bar of issue "A search that is done in minutes without a budget",
// tightened by issue 44: with a tenth of the valid configs and no floor,
// `auto` gets within 3% of the exhaustive optimum in at least
// tenthMinSeeds of seeds 1..tenthSeeds on every recorded landscape of
// minTenthValid or more valid configs that is not deliberately deceptive.
const (
	tenthSeeds    = 10
	tenthMinSeeds = 9
	// minTenthValid: below 100 valid configs a tenth is under ten trials,
	// fewer than the families and the spread sample of the first pass
	// (the 4-GPU n=2048 all-reduce: 53 configs, 6 trials). Such landscapes
	// are replayed and printed, not held. Until issue 44 the budget had a
	// floor of 20 trials instead, which hid how the search does on the
	// smallest budgets: with a tenth of the 4-GPU n=32768 all-reduce (115
	// configs, 12 trials) auto reached 3% on 21 of seeds 1..30 then, and
	// 26 with every family measured first (sampler.design).
	minTenthValid = 100
)

// tenthBudget is the budget TestTenthBudget gives a landscape of n valid
// configs: a tenth, rounded up.
func tenthBudget(n int) int {
	return (n + 9) / 10
}

// deceptiveLandscapes are recorded landscapes built to mislead a search,
// replayed and printed but not held to the bar, each with the reason. No
// landscape in tuner/testdata is one today: the synthetic GEMM models a
// real one and is held like the rest.
var deceptiveLandscapes = map[string]string{}

// tenthShortfalls are landscapes where auto misses the bar today, with the
// count it reaches on seeds 1..10 and why. The test holds auto to that
// count (a regression fails) and reports the shortfall instead of hiding
// it; a landscape that reaches the bar again should be taken off the list.
//
// The CPU agmm m=256 landscape was here (8 of 10) until the surrogate's
// model pick came every 6th pass of the pattern's loop instead of every 4th (10 of 10; seeds
// 1..50: 43, was 42). Its ranking is noise: an exhaustive re-recording
// with 100 iterations a config on the same 2-core machine (2026-11-26,
// bench/results/2026-11-26-cpu-agmm-m256-rerecord.md)
// ranked its 756 configs with a Spearman correlation of 0.008 to this
// file's, and the old top 10 came 120th to 608th in it.
//
// The 2 x H200 agmm 16384 x 3584 x 8192 landscape (recorded by a search
// without a budget, exhaustive, 2026-11-26) was here (7 of 10): a needle,
// 4 of its 3,216 configs within 3% of the optimum (the pipeline, SM copies
// of 8 blocks, chunks 1, streams 2), and the config 3.2% off (copy
// engines, one stream) two parameters away with every single step from it
// 2.7-270% slower. It reaches the bar since the surrogate restarts from
// the best measured config never yet a centre when that beats what the
// model hopes for its own pick (pattern.restart): copy-engine configs on
// two streams are among the model's picks, measured but never polled
// around before, and from one the copy_blocks step lands on the needle
// (copy engines take 4 blocks only; the nearest valid point copies by
// SM). Seeds 1..10: 10 (was 7); 1..50: 49 (34); 1..200: 193 (134). At a
// fifth: 10 of 10, 50 of 50 (45), 200 of 200 (168).
//
// The CPU matmulrs m=256 landscape fell from 9 to 8 of 10 with the
// fourteenth fit (the Gaussian process's picks outside the UCB family at
// budgets up to 100 trials, bandit), judged once on it after the fit was
// kept (bench/results/2026-12-05-heldout-search-14.md). Its seeds end
// either at the optimum or at one config 5.1% off; recorded again on the
// same 2-core machine (2026-12-05, bench/results/2026-12-05-cpu-matmulrs-
// m256-rerecord.jsonl.gz) its ranking correlates 0.56 with this file's,
// but only 5 of this file's 17 configs within 3% are among the new
// recording's 52, and this file's top ten ranked 9th to 538th there:
// which configs are within 3% is mostly noise.
var tenthShortfalls = map[string]struct {
	seeds int
	why   string
}{
	"landscape-cpu-matmulrs-w2-m256n256k256.jsonl": {8, "one seed of ten ends at the config 5.1% off; " +
		"a second recording on the same machine shares 5 of its 17 configs within 3% (tenthShortfalls)"},
}

// TestTenthBudget replays pattern, Nelder-Mead, random sampling and auto
// (AutoChoice, as the budget is below the space) on every recorded
// landscape in tuner/testdata (new files are picked up by the glob) with
// tenthBudget trials, seeds 1..10, and holds auto to tenthMinSeeds seeds
// within 3% on each landscape of minTenthValid or more valid configs,
// except deceptiveLandscapes and the measured tenthShortfalls.
// It also checks that auto reaches 3% on at least as many runs overall as
// each other strategy. Replay is deterministic, so none of this can flake.
// Run with -v for the table.
func TestTenthBudget(t *testing.T) {
	skipReplaysUnderRace(t)
	files := recordedLandscapes(t)
	names := []string{Pattern, NelderMead, Random, Auto}
	var table strings.Builder
	fmt.Fprintf(&table, "%-46s %6s %6s  %-16s %s\n", "landscape", "valid", "budget", "seeds within 3%:", strings.Join(names, " / "))
	total := map[string]int{}
	held := 0
	prefetchMemo(loadLandscapes(t, files), names, func(l Landscape) []int { return []int{tenthBudget(len(l.Valid))} }, tenthSeeds)
	for _, f := range files {
		base := filepath.Base(f)
		l, err := LoadLandscape(f)
		if err != nil {
			t.Fatal(err)
		}
		opt, ok := l.Optimum()
		if !ok {
			t.Fatalf("%s: no config passed", f)
		}
		budget := tenthBudget(len(l.Valid))
		type run struct {
			name string
			seed int64
			r    ReplayResult
			err  error
		}
		var runs []run
		for _, name := range names {
			for seed := int64(1); seed <= tenthSeeds; seed++ {
				runs = append(runs, run{name: name, seed: seed})
			}
		}
		parallelDo(len(runs), func(i int) { runs[i].r, runs[i].err = replayMemo(l, runs[i].name, budget, runs[i].seed) })
		counts := map[string]int{}
		for _, x := range runs {
			if x.err != nil {
				t.Fatal(x.err)
			}
			if x.r.TrialsUsed > budget {
				t.Errorf("%s on %s seed %d: %d trials, budget %d", x.name, base, x.seed, x.r.TrialsUsed, budget)
			}
			if x.r.BestScoreUS <= opt.ScoreUS*1.03 {
				counts[x.name]++
			}
		}
		var cells []string
		for _, name := range names {
			cells = append(cells, fmt.Sprintf("%2d", counts[name]))
		}
		note := ""
		got := counts[Auto]
		short, isShort := tenthShortfalls[base]
		why, isDeceptive := deceptiveLandscapes[base]
		switch {
		case len(l.Valid) < minTenthValid:
			note = fmt.Sprintf("not held: under %d valid configs, a tenth is fewer trials than the first pass", minTenthValid)
		case isDeceptive:
			note = "not held: deceptive: " + why
		case isShort:
			note = fmt.Sprintf("short of the bar, held to %d: %s", short.seeds, short.why)
			if got < short.seeds {
				t.Errorf("auto on %s: within 3%% in %d of %d seeds, was %d", base, got, tenthSeeds, short.seeds)
			} else if got >= tenthMinSeeds {
				t.Logf("auto on %s now reaches the bar (%d of %d seeds): take it off tenthShortfalls", base, got, tenthSeeds)
			}
		default:
			if got < tenthMinSeeds {
				t.Errorf("auto on %s: within 3%% of the optimum %.1f µs in %d of %d seeds with %d trials, want %d",
					base, opt.ScoreUS, got, tenthSeeds, budget, tenthMinSeeds)
			}
		}
		if len(l.Valid) >= minTenthValid && !isDeceptive {
			held++
			for _, name := range names {
				total[name] += counts[name]
			}
		}
		fmt.Fprintf(&table, "%-46s %6d %6d  %-16s %s  %s\n", base, len(l.Valid), budget, "", strings.Join(cells, " / "), note)
	}
	t.Logf("auto runs %s below the space\n%s", AutoChoice, table.String())
	if held == 0 {
		t.Fatal("no landscape is held to the bar: the test checks nothing")
	}
	t.Logf("runs within 3%% over %d held landscapes: %v", held, total)
	for _, name := range names {
		if total[name] > total[Auto] {
			t.Errorf("%s reached 3%% on %d runs, auto (%s) on %d: revisit AutoChoice", name, total[name], AutoChoice, total[Auto])
		}
	}
}

package strategy

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// fitEval, when set, runs TestFitEval: the fitting set's table for the
// strategies named (comma-separated), to fit knobs on (issue 57: every
// rule, threshold and order is fixed on the fitting set alone). It never
// touches the held-out landscapes or synthHeldOutRange's seeds:
// -fit-synth must stay outside them. -fit-knobs sets the bandit's knobs
// first, so one process judges one setting (replays are memoised by
// strategy name, not by knob). Seeds 1..10 take about 3 minutes on 2
// cores, with the recorded fitting set (FIT_NO_RECORDED=1 leaves it out):
//
//	go test -run TestFitEval -v ./tuner/strategy/ -fit-eval bandit -fit-synth 1..10 -fit-knobs share=0.25
//
// -fit-kinds slowdefault keeps only that kind's synthetic landscapes;
// -fit-shares 1/20,1/10 leaves out three tenths (most of the time of a
// run); -fit-max-valid 1000 only the landscapes of at most 1,000 valid configs
// (a change that acts at tiny budgets only moves nothing larger).
var (
	fitEval      = flag.String("fit-eval", "", "TestFitEval: replay these strategies (comma-separated) on the fitting set and print its table")
	fitKnobs     = flag.String("fit-knobs", "", "TestFitEval: bandit knobs to set first, as share=0.25,interject=3,min=12,every=2,c=0.8")
	fitEvalSeeds = flag.String("fit-synth", "1..20", "TestFitEval: the synthetic fitting seeds (FIRST..LAST, outside the held-out 101..110)")
	fitMaxValid  = flag.Int("fit-max-valid", 0, "TestFitEval: only landscapes of at most this many valid configs (0: all), to screen a change that acts at tiny budgets only")
	fitMinValid  = flag.Int("fit-min-valid", 0, "TestFitEval: only landscapes of at least this many valid configs, to screen a change that acts on the larger ones only")
	fitShares    = flag.String("fit-shares", "1/20,1/10,3/10", "TestFitEval: the budgets, as shares of the valid configs (some of 1/20,1/10,3/10); one left out prints -1 and counts nothing, misses included")
	fitKinds     = flag.String("fit-kinds", "", "TestFitEval, TestFitDifficulty: only these synthetic kinds (comma-separated; empty: all of synthKinds)")
)

// fitKindList is synthKinds, or the kinds -fit-kinds names (a screen of
// one weak kind over many seeds, such as slowdefault over 21..100, costs a
// sixth of every kind's).
func fitKindList(t *testing.T) []string {
	t.Helper()
	if *fitKinds == "" {
		return synthKinds
	}
	var out []string
	for _, k := range strings.Split(*fitKinds, ",") {
		if !slices.Contains(synthKinds, k) {
			t.Fatalf("-fit-kinds: unknown kind %q (want some of %v)", k, synthKinds)
		}
		out = append(out, k)
	}
	return out
}

// TestFitEval prints, per fitting landscape (split.txt "fit", 100+ valid
// configs, and the synthetic landscapes of -fit-synth), how many of seeds
// 1..10 get within 3% at a twentieth, a tenth and three tenths.
func TestFitEval(t *testing.T) {
	if *fitEval == "" {
		t.Skip("-fit-eval not set")
	}
	setKnobs(t)
	fractions := [][2]int{{1, 20}, {1, 10}, {3, 10}} // the table's columns
	var names []string
	for _, fr := range fractions {
		names = append(names, fmt.Sprintf("%d/%d", fr[0], fr[1]))
	}
	shares := strings.Split(*fitShares, ",")
	for _, sh := range shares {
		if !slices.Contains(names, sh) {
			t.Fatalf("-fit-shares: %q is none of %v", sh, names)
		}
	}
	var lo, hi int64
	// An empty range (1..0) leaves only the recorded fitting set.
	if _, err := fmt.Sscanf(*fitEvalSeeds, "%d..%d", &lo, &hi); err != nil || lo < 1 ||
		lo <= hi && hi >= synthHeldOutRange[0] && lo <= synthHeldOutRange[1] {
		t.Fatalf("-fit-synth %q: want FIRST..LAST from 1, outside the held-out seeds %d..%d", *fitEvalSeeds, synthHeldOutRange[0], synthHeldOutRange[1])
	}
	var ls []Landscape
	sets := readSplit(t)
	if os.Getenv("FIT_NO_RECORDED") == "" {
		for _, f := range recordedLandscapes(t) {
			if sets[splitName(f)] != setFit {
				continue
			}
			l, err := LoadLandscape(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Valid) >= heldOutMinValid && fitSized(l) {
				ls = append(ls, l)
			}
		}
	}
	for _, kind := range fitKindList(t) {
		for s := lo; s <= hi; s++ {
			if l := syntheticLandscape(kind, s); fitSized(l) {
				ls = append(ls, l)
			}
		}
	}
	for _, name := range strings.Split(*fitEval, ",") {
		var b strings.Builder
		tot := [3]int{}
		rtot, stot := [3]int{}, [3]int{}
		miss := 0
		for _, l := range ls {
			var got [3]int
			for k, fr := range fractions {
				if !slices.Contains(shares, names[k]) {
					got[k] = -1
					continue
				}
				n, err := seedsWithin3(l, name, share(len(l.Valid), fr[0], fr[1]), heldOutSeeds)
				if err != nil {
					t.Fatal(err)
				}
				got[k] = n
				tot[k] += n
				if strings.HasPrefix(l.Path, "synthetic") {
					stot[k] += n
				} else {
					rtot[k] += n
				}
			}
			dec := strings.Contains(l.Path, "deceptive")
			if slices.Min(got[:]) >= 0 && ((dec && (got[1] < 6 || got[2] < 9)) || (!dec && (got[0] < 7 || got[1] < 9))) {
				miss++
			}
			fmt.Fprintf(&b, "%-50s %5d  %3d %3d %3d\n", shortName(l.Path), len(l.Valid), got[0], got[1], got[2])
		}
		fmt.Fprintf(&b, "recorded %v synthetic %v total %v  misses %d\n", rtot, stot, tot, miss)
		t.Logf("%s  1/20 1/10 3/10\n%s", name, b.String())
	}
}

// fitSized reports whether l's valid configs are within -fit-min-valid and
// -fit-max-valid.
func fitSized(l Landscape) bool {
	n := len(l.Valid)
	return n >= *fitMinValid && (*fitMaxValid == 0 || n <= *fitMaxValid)
}

func shortName(p string) string {
	p = p[strings.LastIndex(p, "/")+1:]
	return strings.TrimSuffix(p, ".jsonl")
}

// fitDifficulty, when set, runs TestFitDifficulty on the synthetic
// landscapes of those seeds. It chooses nothing: it measures how hard each
// small landscape is, so a miss can be told apart from a landscape no
// strategy can be expected to win at that budget. Held-out seeds may be
// named (the report for issue 57 lists 101..110 beside the fitting ones);
// no knob may be chosen from their rows.
var fitDifficulty = flag.String("fit-difficulty", "", "TestFitDifficulty: synthetic seeds FIRST..LAST to report the difficulty of")

// difficultyMaxValid: TestFitDifficulty reports the landscapes of at most
// this many valid configs (the 190-config all-reduce-like spaces, where
// 1/20 and 1/10 are 10 and 19 trials).
const difficultyMaxValid = 200

// TestFitDifficulty prints, per small synthetic landscape: its valid
// configs, how many are within 3% of the optimum (the hits), the chance
// that a uniform random search of a twentieth and a tenth of them (without
// replacement) hits at least one (hypergeometric, exact), the expected
// seeds of 10 that follows, and how many of seeds 1..10 auto reaches.
// Reports, never fails.
func TestFitDifficulty(t *testing.T) {
	if *fitDifficulty == "" {
		t.Skip("-fit-difficulty not set")
	}
	setKnobs(t)
	var lo, hi int64
	if _, err := fmt.Sscanf(*fitDifficulty, "%d..%d", &lo, &hi); err != nil || lo > hi {
		t.Fatalf("-fit-difficulty %q: want FIRST..LAST", *fitDifficulty)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %5s %4s %6s  %6s %6s  %4s %4s  %4s %4s\n", "landscape", "valid", "hits", "share",
		"P1/20", "P1/10", "r/20", "r/10", "a/20", "a/10")
	var sumR, sumA [2]float64
	for _, kind := range fitKindList(t) {
		for s := lo; s <= hi; s++ {
			l := syntheticLandscape(kind, s)
			if len(l.Valid) > difficultyMaxValid {
				continue
			}
			hits := within3(l)
			fmt.Fprintf(&b, "%-44s %5d %4d %5.1f%%", shortName(l.Path), len(l.Valid), hits, 100*float64(hits)/float64(len(l.Valid)))
			var p, a [2]float64
			for k, den := range []int{20, 10} {
				n := share(len(l.Valid), 1, den)
				p[k] = randomHit(len(l.Valid), hits, n)
				got, err := seedsWithin3(l, Auto, n, heldOutSeeds)
				if err != nil {
					t.Fatal(err)
				}
				a[k] = float64(got)
				sumR[k] += p[k] * heldOutSeeds
				sumA[k] += a[k]
			}
			fmt.Fprintf(&b, "  %6.3f %6.3f  %4.1f %4.1f  %4.0f %4.0f\n", p[0], p[1], p[0]*heldOutSeeds, p[1]*heldOutSeeds, a[0], a[1])
		}
	}
	fmt.Fprintf(&b, "total: random (expected) %.1f %.1f, auto %.0f %.0f\n", sumR[0], sumR[1], sumA[0], sumA[1])
	t.Logf("seeds %s (P: uniform random search hits 3%%; r: its expected seeds of %d; a: auto's)\n%s", *fitDifficulty, heldOutSeeds, b.String())
}

// within3 counts l's configs that passed within 3% of its optimum.
func within3(l Landscape) int {
	opt, ok := l.Optimum()
	if !ok {
		return 0
	}
	n := 0
	for _, c := range l.Valid {
		if o := l.Lookup(c); o.OK && o.ScoreUS <= opt.ScoreUS*1.03 {
			n++
		}
	}
	return n
}

// randomHit is the chance that n configs drawn uniformly without
// replacement from total include at least one of hits: 1 - C(total-hits,
// n)/C(total, n), as a product so nothing overflows.
func randomHit(total, hits, n int) float64 {
	miss := 1.0
	for i := 0; i < n; i++ {
		miss *= float64(total-hits-i) / float64(total-i)
		if miss <= 0 {
			return 1
		}
	}
	return 1 - miss
}

// TestRandomHit checks randomHit against counts done by hand.
func TestRandomHit(t *testing.T) {
	for _, c := range []struct {
		total, hits, n int
		want           float64
	}{
		{10, 0, 5, 0},
		{10, 1, 5, 0.5},          // the one hit is in half the subsets of 5
		{10, 2, 5, 1 - 56.0/252}, // 1 - C(8,5)/C(10,5)
		{10, 6, 5, 1},            // 4 misses cannot fill 5 draws
		{190, 1, 19, 0.1},        // one hit, a tenth drawn
		{190, 2, 10, 1 - 180.0/190*179/189},
	} {
		if got := randomHit(c.total, c.hits, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("randomHit(%d, %d, %d) = %g, want %g", c.total, c.hits, c.n, got, c.want)
		}
	}
}

// setKnobs sets the bandit's knobs from -fit-knobs.
func setKnobs(t *testing.T) {
	t.Helper()
	for _, kv := range strings.Split(*fitKnobs, ",") {
		if kv == "" {
			continue
		}
		var k string
		var v float64
		if _, err := fmt.Sscanf(strings.Replace(kv, "=", " ", 1), "%s %g", &k, &v); err != nil {
			t.Fatalf("-fit-knobs %q: %v", kv, err)
		}
		switch k {
		case "share":
			banditDesignShare = v
		case "interject":
			banditInterject = int(v)
		case "min":
			banditMinTrials = int(v)
		case "every":
			banditEvery = int(v)
		case "c":
			banditC = v
		case "firstcap":
			firstPassCapped = v != 0
		case "ei":
			banditEI = v != 0
		case "probes":
			banditProbes = int(v)
		case "ts":
			banditTS = v != 0
		case "gpkappa":
			gpKappa = v
		case "famlocal":
			banditFamLocal = v != 0
		case "polish":
			gpPolish = int(v)
		case "far":
			banditFar = v != 0
		case "gpapart":
			banditGPApart = int(v)
		case "gpboxcox":
			gpBoxCox = v != 0
		case "gpoutskipfail":
			gpOutsideSkipsFailed = v != 0
		case "gpout":
			banditGPOutside = int(v)
		case "tinyclasses":
			tinyClasses = v != 0
		case "tinydefc":
			// screening only: the default's centre under tinyclasses
			tinyDefCentreOn = v != 0
		case "tinyrho":
			// a second rho besides 0.5 under tinyclasses (0: 0.5 alone)
			tinyRhoGrid = []float64{0.5}
			if v > 0 {
				tinyRhoGrid = []float64{v, 0.5}
			}
		case "tinyard":
			tinyARD = v != 0
		case "tinygp":
			banditTinyGP = int(v)
		default:
			t.Fatalf("-fit-knobs: unknown knob %q", k)
		}
	}
	t.Logf("knobs: share=%g interject=%d min=%d every=%d c=%g ei=%v firstcap=%v probes=%d ts=%v tinygp=%d gpkappa=%g famlocal=%v gpout=%d gpboxcox=%v far=%v gpapart=%d tinyclasses=%v tinyard=%v", banditDesignShare, banditInterject, banditMinTrials, banditEvery, banditC, banditEI, firstPassCapped, banditProbes, banditTS, banditTinyGP, gpKappa, banditFamLocal, banditGPOutside, gpBoxCox, banditFar, banditGPApart, tinyClasses, tinyARD)
}

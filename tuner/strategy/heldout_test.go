package strategy

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
)

// splitFile is the held-out split of the recorded landscapes (issue 57):
// which are used to fit the strategy's knobs and which only judge it. It
// says why the split is what it is.
const splitFile = "../testdata/split.txt"

// Set names in splitFile.
const (
	setFit     = "fit"
	setHeldOut = "heldout"
)

// readSplit returns splitFile's set for each landscape, keyed by the file
// name without a .gz (a landscape is the same however it is stored).
func readSplit(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(splitFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sets := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || (fields[0] != setFit && fields[0] != setHeldOut) {
			t.Fatalf("%s line %d: want \"fit|heldout FILE\", got %q", splitFile, n, line)
		}
		if _, dup := sets[fields[1]]; dup {
			t.Fatalf("%s line %d: %s listed twice", splitFile, n, fields[1])
		}
		sets[fields[1]] = fields[0]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sets
}

// splitName is a landscape file's name as splitFile lists it.
func splitName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), triallog.GzipExt)
}

// siblingGroup is the (machine, kernel) a recorded landscape belongs to,
// from its name (landscape-BACKEND-KERNEL-...): landscapes of one group
// share a space and most of their ranking.
func siblingGroup(name string) string {
	parts := strings.SplitN(strings.TrimPrefix(name, "landscape-"), "-", 3)
	if len(parts) < 2 {
		return name
	}
	return parts[0] + "/" + strings.TrimSuffix(parts[1], ".jsonl")
}

// TestSplitIsComplete checks the manifest itself: every recorded landscape
// is in one set, no listed file is missing, and no held-out landscape has
// a sibling (same machine and kernel) in the fitting set.
func TestSplitIsComplete(t *testing.T) {
	sets := readSplit(t)
	found := map[string]bool{}
	for _, f := range recordedLandscapes(t) {
		name := splitName(f)
		found[name] = true
		if _, ok := sets[name]; !ok {
			t.Errorf("%s is in no set of %s: add it with its siblings", name, splitFile)
		}
	}
	groups := map[string]map[string]bool{} // group -> sets it appears in
	for name, set := range sets {
		if !found[name] {
			t.Errorf("%s lists %s, which is not in ../testdata", splitFile, name)
		}
		g := siblingGroup(name)
		if groups[g] == nil {
			groups[g] = map[string]bool{}
		}
		groups[g][set] = true
	}
	held := 0
	for g, in := range groups {
		if in[setFit] && in[setHeldOut] {
			t.Errorf("%s has landscapes in both sets: a held-out one has a sibling in the fitting set", g)
		}
		if in[setHeldOut] {
			held++
		}
	}
	if held == 0 {
		t.Error("nothing is held out")
	}
}

// seedsWithin3 replays strategy name on l with budget trials for seeds
// 1..seeds and returns how many got within 3% of the landscape's optimum.
func seedsWithin3(l Landscape, name string, budget int, seeds int64) (int, error) {
	opt, ok := l.Optimum()
	if !ok {
		return 0, fmt.Errorf("%s: no config passed", l.Path)
	}
	got := make([]bool, seeds)
	errs := make([]error, seeds)
	parallelDo(int(seeds), func(i int) {
		r, err := replayMemo(l, name, budget, int64(i+1))
		errs[i] = err
		got[i] = err == nil && r.TrialsUsed <= budget && r.BestScoreUS <= opt.ScoreUS*1.03
	})
	n := 0
	for i := range got {
		if errs[i] != nil {
			return 0, errs[i]
		}
		if got[i] {
			n++
		}
	}
	return n, nil
}

// share is the budget of a share (1/den) of n valid configs, rounded up,
// with no floor.
func share(n, num, den int) int {
	return (n*num + den - 1) / den
}

// heldOutShares is the trials judge gives l at each of budgets.
func heldOutShares(l Landscape, budgets []heldOutBudget) []int {
	var out []int
	for _, b := range budgets {
		out = append(out, share(len(l.Valid), b.num, b.den))
	}
	return out
}

// replayRuns memoises replayMemo: TestTenthBudget and TestHeldOut replay
// auto on the same landscapes with the same tenth, and CI runs both in one
// process (Makefile REPLAY_TESTS), so the second asks for free.
var replayRuns = struct {
	sync.Mutex
	m map[string]ReplayResult
}{m: map[string]ReplayResult{}}

// replayMemo is Replay, memoised by landscape path, strategy, budget and
// seed (replay is deterministic). Errors are not memoised.
func replayMemo(l Landscape, name string, budget int, seed int64) (ReplayResult, error) {
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d", l.Path, name, budget, seed)
	replayRuns.Lock()
	r, ok := replayRuns.m[key]
	replayRuns.Unlock()
	if ok {
		return r, nil
	}
	r, err := Replay(l, name, budget, seed)
	if err != nil {
		return r, err
	}
	replayRuns.Lock()
	replayRuns.m[key] = r
	replayRuns.Unlock()
	return r, nil
}

// Issue 57's bars: with a share of the valid configs as budget and no
// floor, how many of seeds 1..heldOutSeeds get within 3% of the optimum.
const (
	heldOutSeeds     = 10
	heldOutMinValid  = 100 // as TestTenthBudget: below it a twentieth is a handful of trials
	barTenth         = 9   // of 10, at a tenth
	barTwentieth     = 7   // of 10, at a twentieth
	barDeceptive     = 6   // of 10, deceptive landscapes at a tenth
	barDeceptiveWide = 9   // of 10, deceptive landscapes at three tenths
)

// heldOutBudget is one budget a landscape is judged at, and its bar.
type heldOutBudget struct {
	name     string
	num, den int
	bar      int
}

// heldOutWide adds three tenths to every landscape's budgets (reported,
// held only on deceptive ones): `make search-heldout` sets it; CI leaves
// it off, as the GPU landscapes' 3/10 replays cost minutes.
var heldOutWide = flag.Bool("heldout-wide", false, "TestHeldOut, TestSyntheticHeldOut: also judge every landscape at three tenths of its valid configs")

func heldOutBudgets(deceptive bool) []heldOutBudget {
	if *heldOutWide && !deceptive {
		return []heldOutBudget{{"1/10", 1, 10, barTenth}, {"1/20", 1, 20, barTwentieth}, {"3/10", 3, 10, 0}}
	}
	if deceptive {
		return []heldOutBudget{{"1/10", 1, 10, barDeceptive}, {"1/20", 1, 20, 0}, {"3/10", 3, 10, barDeceptiveWide}}
	}
	return []heldOutBudget{{"1/10", 1, 10, barTenth}, {"1/20", 1, 20, barTwentieth}}
}

// heldOutShortfall is a landscape and budget where auto misses its bar
// today: the count it reaches (a regression fails) and why.
type heldOutShortfall struct {
	seeds int
	why   string
}

// heldOutShortfalls is keyed by landscape name (splitName, or a synthetic
// landscape's name) and budget name ("1/20").
//
// The GPU agmm 16384 needle was here at a twentieth (1 of 10) until the
// bandit's first pass covered the structural values instead of measuring
// all 64 families (bandit, "the first pass, learnt"): 9 of 10. The two
// 190-config ones below fell with that change (from 10 of 10 at both
// budgets): with 10 and 19 trials, the first pass now measures 4
// algorithms and spread configs instead of all 8 algorithm x graph
// families, and on these two the best family's centre, which the old
// first pass measured, was already within 3% or one step from it. The
// third fit (a first pass of at most a quarter of such budgets, bandit)
// moved them again, judged once after it was fitted: interact 101 at a
// twentieth 4 to 3, noisy 102 7 to 8 at a tenth and 4 to 3 at a
// twentieth; only 0.5-4% of those spaces' configs are within 3%, so a
// uniform random search of 10 trials reaches it on 1 to 3 seeds of 10
// (TestFitDifficulty). The fourth fit (corner probes at tiny budgets,
// bandit) took interact 101 at a twentieth to 10 and noisy 102 at a tenth
// to 10, off this list, and noisy 102 at a twentieth from 3 to 0. The
// ninth fit (a Gaussian process's picks after the first pass at tiny
// budgets, banditTinyGP) took interact 101 at a twentieth from 10 back to
// 0, judged once after it was kept (bench/results/2026-12-04-heldout-
// search-9.md: over seeds 101..110 the 190-config spaces went from 93 to 77
// runs at a twentieth and from 144 to 160 at a tenth). The tenth fit (a
// pull of the UCB family's arm steps from that family's best config,
// banditFamLocal) took slowdefault gemm 101 at a twentieth from 5 to 4,
// judged once after it was kept (bench/results/2026-12-05-heldout-search-
// 10.md: over seeds 101..110 the deceptive ones went from 81 to 90 runs at
// a tenth, and no held-out landscape missed the tenth's bar after it).
// The eleventh fit (the process's rho fixed at 0.5) moved none of the
// seeds this test holds; of seeds 101..110, seed 104's slowdefault
// all-reduce fell under the tenth's bar
// (bench/results/2026-12-05-heldout-search-11.md). Nor did the twelfth
// (a tiny budget's last two trials polish the best config; -12.md).
// The fourteenth (the process's picks outside the UCB family at budgets
// up to 100 trials) took the recorded CPU matmulrs m=256 landscape from 9
// to 8 at a tenth and 7 to 6 at a twentieth, judged once after it was
// kept; its within-3% set is mostly noise (tenthShortfalls), and of the
// synthetic seeds 101..110 it took noisy 108's and slowdefault gemm 101's
// large landscapes over the twentieth's bar (-14.md; slowdefault gemm 101,
// 4 of 10 there before, "the best family is 40% slow at its centre, where
// the first pass measures it", left this list at 8).
var heldOutShortfalls = map[string]heldOutShortfall{
	"landscape-cpu-matmulrs-w2-m256n256k256.jsonl 1/10": {8, "one seed of ten ends 5.1% off; a second " +
		"recording shares 5 of its 17 configs within 3% (see tenthShortfalls)"},
	"landscape-cpu-matmulrs-w2-m256n256k256.jsonl 1/20": {6, "four seeds of ten end 5.1-5.9% off; its " +
		"within-3% set is mostly noise (see tenthShortfalls)"},
	"synthetic-interact-allreduce-seed101 1/20": {0, "190 configs, 10 trials: the 6 configs within 3% are one_shot's " +
		"ridge (chunk x threads), and one_shot's one first-pass config, its default corner, ran 2.37x; the Gaussian " +
		"process spends its 4 picks in two_shot (1.35x there), where the descent it replaced reached one_shot on its " +
		"last trial (1.028x, 10 of 10; see above)"},
	"synthetic-noisy-allreduce-seed102 1/20": {0, "190 configs, 10 trials: fell from 10 with the value-covering " +
		"first pass, to 3 with the third fit's and 0 with the fourth's (see above); 2 of its configs are within 3%, " +
		"a random search reaches it on 1 seed of 10"},
}

// judge replays auto on l at each budget and returns the table's cells; it
// fails the test where auto is below both its bar and its recorded
// shortfall, and notes where a shortfall has reached its bar.
func judge(t *testing.T, l Landscape, name string, budgets []heldOutBudget, held bool) []int {
	t.Helper()
	var got []int
	for _, b := range budgets {
		n, err := seedsWithin3(l, Auto, share(len(l.Valid), b.num, b.den), heldOutSeeds)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
		if !held || b.bar == 0 {
			continue
		}
		short, isShort := heldOutShortfalls[name+" "+b.name]
		switch {
		case isShort && n < short.seeds:
			t.Errorf("auto on %s at %s: %d of %d seeds within 3%%, was %d", name, b.name, n, heldOutSeeds, short.seeds)
		case isShort && n >= b.bar:
			t.Logf("auto on %s at %s now reaches the bar (%d): take it off heldOutShortfalls", name, b.name, n)
		case !isShort && n < b.bar:
			t.Errorf("auto on %s at %s: %d of %d seeds within 3%%, want %d", name, b.name, n, heldOutSeeds, b.bar)
		}
	}
	return got
}

// TestHeldOut is issue 57's judge on the recorded landscapes: auto with a
// tenth and a twentieth of the valid configs, seeds 1..10, on every
// landscape of heldOutMinValid or more valid configs, reported per set of
// splitFile. Held-out landscapes are held to the bars (9 and 7 of 10, no
// floor) except the recorded heldOutShortfalls; the fitting set's totals
// must not fall below fitFloor (what auto reached there when the split
// was made). The tenth's replays are TestTenthBudget's (replayMemo).
func TestHeldOut(t *testing.T) {
	skipReplaysUnderRace(t)
	sets := readSplit(t)
	var table strings.Builder
	fmt.Fprintf(&table, "%-8s %-50s %6s  %4s %4s %4s\n", "set", "landscape", "valid", "1/10", "1/20", "3/10")
	nb := len(heldOutBudgets(false))
	total := map[string][]int{setFit: make([]int, nb), setHeldOut: make([]int, nb)}
	count := map[string]int{}
	var judged []Landscape
	for _, l := range loadLandscapes(t, recordedLandscapes(t)) {
		if len(l.Valid) >= heldOutMinValid {
			judged = append(judged, l)
		}
	}
	prefetchMemo(judged, []string{Auto}, func(l Landscape) []int { return heldOutShares(l, heldOutBudgets(false)) }, heldOutSeeds)
	for _, f := range recordedLandscapes(t) {
		name := splitName(f)
		set := sets[name]
		l, err := LoadLandscape(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Valid) < heldOutMinValid {
			continue
		}
		got := judge(t, l, name, heldOutBudgets(false), set == setHeldOut)
		count[set]++
		for i := range got {
			total[set][i] += got[i]
		}
		fmt.Fprintf(&table, "%-8s %-50s %6d  %s\n", set, name, len(l.Valid), cells(got))
	}
	for _, set := range []string{setFit, setHeldOut} {
		fmt.Fprintf(&table, "%-8s %-50s %6s  %s  (of %d each)\n", set, "total", "", cells(total[set]), heldOutSeeds*count[set])
	}
	t.Logf("auto (%s) within 3%% of the optimum, seeds 1..%d:\n%s", AutoChoice, heldOutSeeds, table.String())
	for i, floor := range fitFloor {
		if total[setFit][i] < floor {
			t.Errorf("fitting set at %s: %d runs within 3%%, was %d when the split was made", heldOutBudgets(false)[i].name, total[setFit][i], floor)
		}
	}
}

// cells formats a table row's counts, 4 wide each.
func cells(got []int) string {
	var b strings.Builder
	for i, n := range got {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%4d", n)
	}
	return b.String()
}

// fitFloor is what auto reached on the recorded fitting set (landscapes
// of 100+ valid configs, seeds 1..10) at a tenth and a twentieth since the
// fourth fit (2026-12-02: corner probes at tiny budgets took the w2 and w4
// n=32768 and n=131072 all-reduces from 4, 3, 7 and 6 to 10, 6, 10 and 10
// at a twentieth; 135 after the third fit, whose first pass took the w4
// n=131072 and n=32768 ones from 5 and 0 to 6 and 3; it was 160 and 131
// with the bandit before, and the surrogate had 159 and 131 when the split
// was made): issue 57's "no worse than today" on the
// fitting set. The synthetic fitting seeds are judged by TestFitEval
// (-fit-eval), outside CI. 200 and 191 since the four world-1 matmulrs
// landscapes of 1 x H200 joined the fitting set (2026-12-03: 10 of 10 at
// both budgets on each, the older landscapes unchanged at 160 and 151).
var fitFloor = []int{200, 191}

// Synthetic landscapes: synthFitSeeds were used to fit the bandit's
// knobs (TestFitEval; seeds 1..3 for the first fit, 1..20 for the
// second; the third and fourth confirmed on 21..100, fitting seeds too); synthHeldOutSeeds and -synth-seeds (101..110) never were, and
// judge it. CI judges two seeds
// of each kind (about 20 s on 2 cores); `make search-heldout` judges
// seeds 101..110 (-synth-seeds) and reports instead of failing.
var (
	synthFitSeeds     = seedRange(1, 20)
	synthHeldOutSeeds = []int64{101, 102}
	// synthHeldOutRange is every synthetic seed held out (make
	// search-heldout's 101..110): TestFitEval refuses fitting seeds in it.
	// Fitting seeds are below it and, since the eighth fit (2026-12-04),
	// above it too (111 on: fresh evidence once 1..100 had all been seen).
	synthHeldOutRange = [2]int64{101, 110}
	synthSeedsFlag    = flag.String("synth-seeds", "", "judge synthetic landscapes of these seeds (FIRST..LAST) and report the bars instead of holding them")
)

// seedRange is lo..hi.
func seedRange(lo, hi int64) []int64 {
	var out []int64
	for s := lo; s <= hi; s++ {
		out = append(out, s)
	}
	return out
}

// heldOutSynthSeeds is synthHeldOutSeeds, or -synth-seeds' range; report
// says the bars are reported, not held.
func heldOutSynthSeeds(t *testing.T) (seeds []int64, report bool) {
	if *synthSeedsFlag == "" {
		return synthHeldOutSeeds, false
	}
	var lo, hi int64
	// Held-out seeds only: 21..100 and 111 on have been fitted on too.
	if _, err := fmt.Sscanf(*synthSeedsFlag, "%d..%d", &lo, &hi); err != nil || lo > hi || lo < synthHeldOutRange[0] || hi > synthHeldOutRange[1] {
		t.Fatalf("-synth-seeds %q: want FIRST..LAST within the held-out seeds %d..%d", *synthSeedsFlag, synthHeldOutRange[0], synthHeldOutRange[1])
	}
	for s := lo; s <= hi; s++ {
		seeds = append(seeds, s)
	}
	return seeds, true
}

// TestSyntheticHeldOut is issue 57's judge on synthetic landscapes never
// used for fitting: every kind of synthKinds at synthHeldOutSeeds, auto at
// a tenth and a twentieth (deceptive ones also at three tenths), seeds
// 1..10, held to the bars except the recorded heldOutShortfalls.
func TestSyntheticHeldOut(t *testing.T) {
	skipReplaysUnderRace(t)
	var table strings.Builder
	fmt.Fprintf(&table, "%-44s %6s  %4s %4s %4s\n", "landscape", "valid", "1/10", "1/20", "3/10")
	seeds, report := heldOutSynthSeeds(t)
	var misses []string
	// Every landscape first, so that all their replays run in one
	// parallel batch (prefetch); judge then reads them from the memo.
	type synth struct {
		l       Landscape
		budgets []heldOutBudget
	}
	var synths []synth
	var ls []Landscape
	budgetsOf := map[string][]heldOutBudget{}
	for _, kind := range synthKinds {
		for _, seed := range seeds {
			l := syntheticLandscape(kind, seed)
			budgets := heldOutBudgets(kind == "deceptive")
			synths = append(synths, synth{l, budgets})
			ls = append(ls, l)
			budgetsOf[l.Path] = budgets
		}
	}
	prefetchMemo(ls, []string{Auto}, func(l Landscape) []int { return heldOutShares(l, budgetsOf[l.Path]) }, heldOutSeeds)
	for _, s := range synths {
		l, budgets := s.l, s.budgets
		got := judge(t, l, l.Path, budgets, len(l.Valid) >= heldOutMinValid && !report)
		for i, b := range budgets {
			if b.bar > 0 && got[i] < b.bar && len(l.Valid) >= heldOutMinValid {
				misses = append(misses, fmt.Sprintf("%s at %s: %d of %d", l.Path, b.name, got[i], b.bar))
			}
		}
		fmt.Fprintf(&table, "%-44s %6d  %s\n", l.Path, len(l.Valid), cells(got))
	}
	t.Logf("auto (%s) within 3%% of the optimum, seeds 1..%d:\n%s", AutoChoice, heldOutSeeds, table.String())
	t.Logf("below the bar: %d\n%s", len(misses), strings.Join(misses, "\n"))
}

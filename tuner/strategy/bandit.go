package strategy

import (
	"math"
)

// bandit is the surrogate strategy with a learned choice of where its
// model picks go (issue 57). The surrogate's forest ranks every unmeasured
// config by mean minus kappa standard deviations; on its own that ranking
// exploits: a family (an impl, an all-reduce algorithm, with its switches)
// whose first configs came out 30% slow gets no more trials, even when its
// best config is a narrow basin the first configs missed, and a family
// that is slow at the centre of its sizes, where the first pass measures
// it, looks slow throughout. The autotuners read for issue 57 keep a share
// of the trials for what looks worse but is little known: OpenTuner's
// bandit over its techniques (credit for recent improvements plus
// C x sqrt(2 ln N / n)), Helion's LFBO pattern search (a random-forest
// classifier of "in the best quantile", which also learns from failed
// configs, with a penalty on picks alike to those already chosen), BaCO
// (a forest or GP over categorical, ordinal and permutation parameters,
// with a feasibility model). Here the arms are the families, the unit the
// first pass already measures, and the forest stays the regression one.
//
// So every banditEvery-th model pick is made in one family, chosen by an
// upper confidence bound (UCB1) over families: a family's value is how
// close its best measured config is to the best measured overall (in log
// score, so a microsecond and a millisecond kernel are alike), plus
// banditC x sqrt(ln N / n_f) for the n_f of its configs measured out of N.
// Within the family the forest picks as before (its best fresh config by
// mean minus kappa sd), so the pick follows what the model learnt of the
// sizes from every family (the structure: a named family split on its
// value, ordinal sizes split on thresholds) and where in this family it
// is unsure. A pick that beats everything becomes the next restart's
// centre, so a basin found this way is descended by the pattern search.
// The other picks, the restarts and the polls are the surrogate's.
//
// The knobs were fitted on the fitting set alone: the recorded landscapes
// split.txt marks "fit" (100+ valid configs, the GPU ones under 3,000) and
// the synthetic landscapes of synthFitSeeds, seeds 1..10 each, at a tenth
// and a twentieth of the valid configs (deceptive ones also at three
// tenths). The rule: most synthetic runs within 3% of the optimum, with the
// recorded fitting set no worse than the surrogate's (149 and 121 runs).
//
//	C    every  restarts  synthetic 1/10 1/20 3/10(deceptive)  recorded fit 1/10 1/20
//	-      -      -       (surrogate)  138  101  13                        149  121
//	0.4    2      yes                  158  110  26                        150  121
//	0.8    2      yes                  160  109  30                        150  121  <- kept
//	1.6    2      yes                  161  104  30                        150  121
//	0.8    1      yes                  165  108  30                        150  120
//	0.8    1      no                   166  111  29                        150  120
//	0.8    1      no, a pick every 4th 166  117  30                        149  120
//
// Every pick in a bandit family (every=1) did better on the synthetic
// landscapes but lost a run on the recorded CPU agmm m=256 landscape at a
// twentieth, so it was not kept; that landscape's ranking is mostly noise
// (see tenthShortfalls), so the margin is thin either way. The held-out
// landscapes (split.txt "heldout", synthHeldOutSeeds) were not looked at
// to choose.
//
// The first pass, learnt rather than enumerated (2026-12-02, second fit).
// A family is the cross product of the structural parameters (impl x
// switches, algorithm x graph), and the first pass measured every one:
// 8 of the 10 trials of a twentieth of a 190-config all-reduce space, 64 of
// the 161 of a twentieth of a GPU agmm space. A switch (graph on or off)
// acts alike in every impl, which the forest learns from a few configs (a
// split on the switch), so measuring it in every impl is the enumeration
// the model exists to avoid. So when the families are more than
// banditDesignShare of the budget, the bandit's first pass measures only
// enough of them to cover every value of every structural parameter once
// (sampler.design's order, stopped early: each impl or algorithm, each
// switch value), and the rest of the families are reached by the UCB
// choice (a family never measured counts as 2.7x slow and earns its trial
// by its bonus) and by the descents' polls. Below 4 families per budget
// share nothing changes.
//
// Fitted with TestFitEval (-fit-eval bandit -fit-synth 1..10, then 11..20
// to confirm): the recorded fitting set (16 landscapes of 100+ configs)
// and the synthetic landscapes of seeds 1..20 (120; disjoint from the
// held-out seeds 101..110), each at a twentieth, a tenth and three tenths,
// seeds 1..10. Same rule as above: most synthetic runs, with the recorded
// fitting set no worse than before (131, 160, 160 runs).
//
//	share interject  min  acq   synthetic 1..10: 1/20 1/10 3/10  recorded: 1/20 1/10 3/10
//	-     6          24   lcb                    359  507  599             131  160  160  (before)
//	0.25  6          24   lcb                    376  513  599             131  160  160  <- kept
//	0.25  6          10   lcb                    368  517  598             131  160  160
//	0.25  6          24   EI                     365  489  578             131  159  160
//	0.25  4          24   lcb                    384  520  598             130  159  160
//	0.25  3          24   lcb                    380  529  599             130  159  160
//	0.25  2          24   lcb                    391  531  599             130  158  160
//	0.25  3, C 0.4   24   lcb                    392  506  583             130  159  160
//	0.25  3, every 3 24   lcb                    373  518  596             131  159  160
//
// (min: the trials before the model picks; acq: the model's ranking, mean
// minus 0.5 sd or expected improvement.) More model picks (interject 2-4)
// won synthetic runs, deceptive ones most (64 to 83 at a tenth with 3),
// and confirmed on seeds 11..20, but each lost a run or two on the
// recorded fitting set (the CPU agmm m=256 landscape, whose ranking is
// noise), so by the rule they were not kept. Candidly: interject 3 was
// first chosen on the synthetic totals alone and judged once on the
// held-out sets (the GPU agmm 16384 needle fell to 7 of 10 at a tenth)
// before the rule's recorded-set condition was applied; the held-out
// figures in docs/search.md are of the kept knobs, judged after that.
//
// The first pass at tiny budgets (2026-12-02, third fit; firstPassSize).
// Below 8 x dims trials the first pass was still 5 of 10 and 8 of 19
// trials besides the default (a 190-config space at a twentieth and a
// tenth), held up by sampleSize's floor of 2 x dims, and the first descent
// got 2 and 5: less than a poll. Now the spread sample only tops the value
// cover up to designShare of the budget, and is at least one config (the
// rest of the first pass is the same on every seed). TestFitDifficulty
// first measured how hard those landscapes are: 0.5-4.7% of their configs
// are within 3%, so a uniform random search of 10 and 19 trials reaches it
// on about 1.8 and 3.2 seeds of 10 (auto before it: 3.7 and 7.5). The rule as above,
// with the recorded fitting set no worse landscape by landscape.
//
//	first pass                     synthetic 1..20: 1/20 1/10 3/10  recorded: 1/20 1/10 3/10  190-config, seeds 21..100: 1/20 1/10
//	sampleSize (before)                          744 1027 1188            131  160  160                              375  743
//	at most 0.25 x budget                        778 1029 1188            135  160  160                              430  830
//	  and at least one spread config             756 1029 1188            135  160  160  <- kept                     413  830
//	family reps spread over the sizes            (190-config spaces only: 1/20 -33, 1/10 -8 against the cap alone)
//	at most 0.3 x budget                         (190-config spaces only: 1/10 +8 against 0.25; 21..100: -27)
//
// The cap alone won most runs but lost 4 of the recorded w2 n=32768
// all-reduce's runs at a twentieth (8 trials: 4 to 0): its first pass and
// descent became the same on every seed, and the one random config that
// had reached 3% on 4 seeds was gone. With one spread config kept it loses
// no recorded run (the 4-GPU n=131072 and n=32768 all-reduces gain 1 and 3
// at a twentieth). On the synthetic 190-config landscapes it is still
// close to a lottery landscape by landscape (cells move both ways by up to
// 4 seeds); the totals are what it was chosen on. Seeds 21..100 (also
// fitting seeds, below the held-out ones) were looked at beside 1..20 and
// point the same way.
//
// Corner probes at tiny budgets (2026-12-02, fourth fit; banditProbes,
// pattern.cornerProbe). At the same tiny budgets the first pass measures
// every class at the centre of its sizes, and the descent from the best of
// them has a poll or two: a class whose best sizes are at an end of their
// ranges is judged by its centre. Now the first pass's spread config gives
// way to two probes in the class of the best config so far, each the fresh
// config farthest from the class's measured ones (a corner of its sizes;
// mostly the same corner on every seed, see pattern.cornerProbe). Rule, stated before the fit: the synthetic totals
// at 1/20 and 1/10 up on seeds 1..20 and, to confirm, on 21..100, no
// recorded fitting landscape losing a run, 3/10 no worse; of the
// candidates that pass, the largest gain. Screened with TestFitDifficulty
// (the 190-config landscapes; larger ones are not tiny) and the recorded
// fitting landscapes under 1,000 configs at 1/20 (recorded 1/10 unmoved):
//
//	candidate (tiny budgets only)                 1..20: 1/20 1/10  21..100: 1/20 1/10  recorded 1/20
//	before                                              138  257           413  830            95
//	two corner probes in the best class, no spread      147  280           416  840           111  <- kept
//	first descent at step 1, not 2                      158  263           426  847            94 (w2, w4 n=131072 -1 each)
//	the first descent 0.4 of what is left, not 0.5      139  263           438  832            99
//	one seeded config of the runner-up class            147  265           414  833            96 (w2, w4 n=32768 -3, -2)
//	two corner probes in the runner-up class            169  270           436  833            97 (w2, w4 n=32768 -2, -3)
//	one corner probe, best class, no spread             160  268           406  844           110
//	the kept probes and the first descent at 0.4        147  275           416  806           111
//	a probe besides the spread config (runner-up)   118-119  262-264   374-404  823
//	the model from half the budget (tinymin 0.5)        154  270           411  814
//	  and a model pick every 2nd pass                   107  253           301  803
//	a class start's descent stays in its class           117  213           332  716
//	new-class starts at step 2                          134  248           388  807
//	new-class factor 1.5 / 1.1 / none (1.25)       142/142/140  253/254/248  412/388/387  825/842/845
//
// Most candidates moved 20-50 of the 146 landscapes each way; no gain had
// a paired z above 1.1 over seeds 1..100, and one chosen on 1..20 often
// lost on 21..100 (the model from half the budget: +13 at 1/10, then -16),
// so the recorded fitting set decided as much: the kept probes are the one
// candidate up on all four synthetic totals that loses no recorded run
// (the w2 and w4 n=32768 and n=131072 all-reduces: 4, 3, 7, 6 to 10, 6,
// 10, 10 at a twentieth). Not all gain: slowdefault doubles at 1/20 (32
// to 64 of 300) but falls at 1/10 (115 to 91), its probes going to the
// corners of a class that only looks best. The clearest effect was a
// loss: a new-class descent (tracker.newClassStart) mostly steps straight
// back to the old class's better config, measured, that its poll judges;
// kept in its class it cost 102 and 158 runs: at these budgets refining
// near the best beats a second class. Details:
// bench/results/2026-12-02-heldout-search-4.md.
//
// Thompson sampling outside the family (banditTS; seventh and eighth
// fits, 2026-12-04). The seventh tried other model picks under the fifth
// fit's rule: one random tree of the forest for every pick, for the
// picks in the UCB family, or for the others; a tree-structured Parzen
// estimator; successive halving over the families instead of UCB1. All
// failed it on seeds 1..20; the Parzen estimator and halving lost the
// deceptive kind's narrow basin (-60 to -75 runs at 1/10), which the UCB
// bound with the forest's spread inside its family keeps exploring. One
// random tree for the picks outside the family missed by one run at 3/10
// (+5, +3, -1 on 1..20) and gained +36 at 1/10 on 21..100 (z 2.5). With
// every seed below the held-out ones seen, the eighth judged it alone on
// fresh fitting seeds above them, 111..170 (rule written first: up at
// 1/20 and 1/10 together, down at none, no recorded fitting run lost):
//
//	                          111..170: 1/20 1/10 3/10   recorded 1/20 1/10 3/10
//	mean - 0.5 sd                       2487 3181 3588            191  200  200
//	one random tree, outside  (kept)    2510 3210 3590            191  200  200
//
// +23 (z 1.3), +29 (z 2.1, deceptive +21), +2; no recorded landscape
// moved. Those picks (restarts, interjected model picks) then land where
// one bootstrap tree believes the optimum is, differing from pick to pick
// and seed to seed, instead of repeating the forest mean's favourites.
// Like every model pick it acts from 24 trials, so never at 1/20 or 1/10
// of a 190-config space. Details: bench/results/2026-12-04-heldout-search-7.md
// and -8.md.
//
// A Gaussian process at tiny budgets (banditTinyGP; ninth fit,
// 2026-12-04). Where the forest never acts (a tiny budget: 10 and 19
// trials of a 190-config space), every step after the first pass and the
// corner probes is a Gaussian process's pick (gp.go: a kernel over the
// named and ordered parameters, hyperparameters by marginal likelihood),
// the fresh config of least mean minus gpKappa sd, instead of the pattern
// descent. Screened on the 190-config landscapes of seeds 1..100 (kappa
// among five values, expected improvement, every step or every other);
// judged alone on fresh fitting seeds 171..230 under the eighth fit's
// rule, written first:
//
//	                          171..230: 1/20 1/10 3/10   recorded 1/20 1/10 3/10
//	descent after the probes            2558 3233 3569            191  200  200
//	the process's picks (kept)          2586 3262 3569            191  200  200
//
// +28 (z 0.81), +29 (z 0.84), 0: slowdefault +37, +59, basins +5, -15,
// interact -10, -8, noisy -4, -7; no recorded landscape moved. Past the budget (a
// host that asks for more) the descent goes on: the fit costs the cube of
// the configs measured. Details: bench/results/2026-12-04-heldout-search-9.md.
//
// A pull steps from the arm's best (banditFamLocal; tenth fit,
// 2026-12-05). An arm is valued by its family's best config, but its pulls
// were the forest's picks in the family, which cannot extrapolate a narrow
// slope: on a deceptive landscape a pull would land on the slope of the
// best family's basin (1.27x, three steps off) and the next pulls went
// elsewhere, since a pick becomes a descent's centre only when it beats
// everything (the good families sit 5-8% off the optimum). Now a pull is
// the fresh config one move (a step or a trade) from the family's best
// that the forest ranks best, and the forest's pick in the family only
// when none is fresh (model.familyStep): each arm climbs. Screened on
// seeds 1..60 (two restrictions of it did no better), judged alone on
// fresh fitting seeds 231..290 under the same rule, written first:
//
//	pulls                                 231..290: 1/20 1/10 3/10   recorded 1/20 1/10 3/10
//	the forest's pick in the family                 2542 3237 3577            191  200  200
//	a step from the family's best (kept)            2586 3289 3580            191  200  200
//
// +44 (z 2.5), +52 (z 2.9), +3; deceptive +34, +50, slowdefault +5, +2,
// noisy +8, +1, invalid -5, 0, basins +1, -1; no recorded landscape moved.
// Details: bench/results/2026-12-05-heldout-search-10.md.
//
// The process outside the UCB family at budgets up to 100 trials
// (banditGPOutside; fourteenth fit, 2026-12-05). Above a tiny budget
// every model pick was the forest's; with a hundred measurements or fewer
// its steps cannot extrapolate a slope. There the picks outside the UCB
// family (the interjected picks and the restarts) are the Gaussian
// process's (gpPick) instead of one bootstrap tree's; the UCB family's
// pulls stay the forest's climbs (the process there too, and the process
// as every step, lost the deceptive kind in the screens). Judged alone on
// fresh fitting seeds 471..530 under a rule written first (up at a
// twentieth, down at none, no recorded fitting run lost):
//
//	                          471..530: 1/20 1/10 3/10   recorded 1/20 1/10 3/10
//	the forest's picks                  2551 3234 3562            191  200  200
//	the process's picks (kept)          2614 3234 3592            191  200  200
//
// +63 (z 3.2), 0, +30 (z 2.5): slowdefault +33 and +25, basins +20,
// invalid +8, noisy +2 and +6. At a tenth of the larger landscapes
// (120-200 trials) it gained nothing in the screens, hence the cap; the
// process's fit costs the cube of the trials. Held out, judged once: the
// synthetic seeds 101..110 435 → 445 runs at a twentieth, and the CPU
// matmulrs m=256 landscape lost one seed at a tenth and one at a twentieth
// (tenthShortfalls). Details: bench/results/2026-12-05-heldout-search-14.md.
//
// Those picks' process is fitted to the configs that passed only
// (gpOutsideSkipsFailed; seventeenth fit, 2026-12-05): +16, 0, +1 runs on
// fresh fitting seeds 651..710, the recorded fitting set unmoved; held
// out, synthetic 445 → 466 at a twentieth. Details:
// bench/results/2026-12-05-heldout-search-15-16.md.
//
// The tiny budgets' process is fitted to a Box-Cox transform of the
// scores, lambda by profile likelihood (gpBoxCox; eighteenth fit,
// 2026-12-06), instead of their log: one slow family or failed config
// among 5-17 measured sets the log's scale. Judged alone on fresh fitting
// seeds 711..770 under a rule written first (up by 5+ runs at a twentieth
// and a tenth, not down at three tenths, no recorded fitting run lost):
//
//	                          711..770: 1/20 1/10 3/10   recorded 1/20 1/10 3/10
//	the log scores                      2617 3273 3594            191  200  200
//	Box-Cox (kept)                      2634 3292 3594            191  200  200
//
// Only 190-config landscapes moved (28 of them, both ways).
//
// Far picks past the process's (banditFar; nineteenth fit, 2026-12-07).
// On the large basins landscapes the runs that missed had put 60-150 of
// their 190 trials in the right family and never one beside its narrow
// best well: the descents and the picks stay near what the forest has
// seen. Past the Gaussian process's picks (budgets over banditGPOutside,
// or past the budget) every model pick outside a UCB pull is now the
// fresh config of the family the UCB bound chooses that is farthest from
// every measured config (model.farPick), instead of one bootstrap tree's
// pick. Judged alone on fresh fitting seeds 831..890 under a rule written
// first (up by 5+ at a tenth, down at no share, no recorded fitting run
// lost):
//
//	                          831..890: 1/20 1/10 3/10   recorded 1/20 1/10 3/10
//	one tree's picks                    2720 3237 3597            191  200  200
//	far picks (kept)                    2720 3354 3599            191  200  200
//
// +0, +117 (z 4.9), +2: basins +49, deceptive +67 at a tenth; nothing
// at a twentieth, where every large space's budget is the process's.
// Details: docs/search-fits.md and bench/results/2026-12-07-heldout-search-19.md.
type bandit struct {
	*pattern
}

// The bandit's knobs, fitted on the fitting set (see bandit). banditEvery:
// every how many-th model pick is made in the bandit's family;
// banditInterject: every how many-th pass of the pattern's loop the model
// picks; banditRestarts: whether the picks that choose where a descent
// restarts count too. Variables, not constants, so a fit can vary them.
var (
	banditEvery     = 2
	banditC         = 0.8
	banditInterject = surrogateEvery
	banditRestarts  = true
	// banditDesignShare: see pattern.designShare.
	banditDesignShare = 0.25
	// banditMinTrials: the model picks from this many trials on
	// (tried: 10; kept: the surrogate's 24).
	banditMinTrials = surrogateMinTrials
	// banditEI: the model ranks fresh configs by expected improvement
	// instead of mean minus surrogateKappa sd (tried, not kept: see
	// bandit).
	banditEI = false
	// banditProbes: the corner probes (pattern.cornerProbe) after the
	// first pass at a tiny budget (pattern.tinyBudget), instead of its
	// spread config (fourth fit, see bandit; 0: as before).
	banditProbes = 2
	// banditTS: the model's picks outside a family the UCB bound chose
	// (the interjected picks and the descents' restarts) rank fresh
	// configs by one tree of the forest, drawn at random for each pick
	// (Thompson sampling from the bootstrap trees), ties by mean minus
	// surrogateKappa sd, instead of by mean minus surrogateKappa sd alone
	// (the seventh fit's "ts=3", kept by the eighth: see bandit).
	banditTS = true
	// banditTinyGP: at a tiny budget every banditTinyGP-th step after
	// the first pass is a Gaussian process's pick (0: none).
	banditTinyGP = 1
	// banditFamLocal: a pick in the family the UCB bound chose is a
	// step from that family's best config (model.familyStep) while one
	// is fresh, else the forest's pick in it (tenth fit, see bandit).
	banditFamLocal = true
	// banditGPOutside: above a tiny budget, at budgets of at most this
	// many trials, the model's picks outside the UCB family are the
	// Gaussian process's (model.gpOutsideBelow; 0: none).
	banditGPOutside = 100
	// banditFar: past the Gaussian process's picks (budgets over
	// banditGPOutside, or past the budget), the model's picks outside a
	// UCB pull are far picks (model.farPick) instead of one tree's
	// (nineteenth fit, see bandit; false: the tree's, as before).
	banditFar = true
	// banditGPApart: at budgets up to banditGPOutside, the Gaussian
	// process's picks outside a UCB pull are made among the fresh configs
	// at least this far (farDistance) from every measured one, while one
	// is (0: any fresh config). The twentieth fit judged 2 on fresh
	// seeds 951..1010: +11 runs at a twentieth (z 1.2), 0 at a tenth and
	// three tenths, and a recorded fitting run lost, so not kept (see
	// bench/results/2026-12-07-heldout-search-20.md).
	banditGPApart = 0
)

func newBandit(p Problem) (Strategy, error) {
	ps, err := newPattern(p)
	if err != nil {
		return nil, err
	}
	pt := ps.(*pattern)
	pt.model = newModel(pt.t.lat, seedFor(p.Seed, Bandit))
	pt.model.families = pt.t.lat.families()
	pt.designShare = banditDesignShare
	if pt.tinyBudget() {
		pt.probes = banditProbes
		pt.gpEvery = banditTinyGP
	} else if pt.budget <= banditGPOutside {
		pt.model.gpOutsideBelow = pt.budget
	}
	return &bandit{pt}, nil
}

func (b *bandit) Name() string { return Bandit }

// banditFamily returns the family UCB1 chooses, or -1 when fewer than two
// families have fresh configs (then the choice is the plain model pick).
func (m *model) banditFamily(t *tracker) int {
	fs := m.families
	nf := len(fs.members)
	if nf < 2 {
		return -1
	}
	best := make([]float64, nf)
	n := make([]int, nf)
	fresh := make([]bool, nf)
	for f := range best {
		best[f] = math.Inf(1)
	}
	overall, total := math.Inf(1), 0
	for i := range t.lat.valid {
		f := fs.of[i]
		if t.fresh(i) {
			fresh[f] = true
		}
		if !t.seen[i] {
			continue
		}
		n[f]++
		total++
		if t.ok[i] {
			v := t.logScore[i]
			best[f] = math.Min(best[f], v)
			overall = math.Min(overall, v)
		}
	}
	choice, choiceV, open := -1, math.Inf(-1), 0
	for f := range best {
		if !fresh[f] {
			continue
		}
		open++
		// A family with nothing measured (or nothing that passed)
		// counts as 2.7x slower than the best (a log gap of 1): the
		// first pass measures every family, so this is one whose
		// configs failed, and it must earn its trials by its bonus.
		gap := 1.0
		if !math.IsInf(best[f], 1) {
			gap = best[f] - overall
		}
		v := -gap + banditC*math.Sqrt(math.Log(float64(total+1))/float64(n[f]+1))
		if v > choiceV {
			choice, choiceV = f, v
		}
	}
	if open < 2 {
		return -1
	}
	return choice
}

package strategy

// tinyClasses: at a tiny budget (pattern.tinyBudget: 10 and 19 trials of
// a 190-config space), judge the classes (algorithm, impl) fairly (21st
// fit, issue 57; on since its second judging; -fit-knobs tinyclasses=0
// turns it off):
//
//   - where the budget is at least 4 x dims trials (a tenth of a
//     190-config space, not its twentieth), the first pass also measures
//     the centre of the default's family (lattice.centreOf) when the
//     default is not it. Every other family is judged by its centre
//     (sampler.design); the default's by the default alone, which may sit
//     at a corner of its sizes (the synthetic spaces' default is their
//     first values).
//   - the process's rho, how much one class's configs tell of another's
//     (gpFit.kernel), is chosen with the length scale and noise by the
//     marginal likelihood from tinyRhoGrid, not fixed at 0.5: where the
//     classes differ in shape, a lower rho leaves the other classes
//     uncertain, so the lower confidence bound still tries them.
//
// Why: a trace of bandit at a tenth of the 190-config spaces of used
// seeds 111..1010 (1,126 landscapes, one run each; TestTinyTrace): of the
// 262 runs that missed 3%, 174 had the best config of the first pass in
// a class with no config within 3%, and the optimum in the default's
// algorithm missed twice as often as in the others (109 of 291 against
// 153 of 835). Screened on used seeds 111..1010 at a twentieth and a
// tenth: +174 and +450 runs (z 2.1, 4.1), but -15 at a tenth on seeds
// 1..100. Judged once on fresh seeds 1011..1070 under a rule written
// first (z of 2 at a tenth): +10, +23 (z 0.86), 0 runs, the recorded
// fitting set unmoved, so not kept (see
// bench/results/2026-12-07-heldout-search-21.md). That judging had about
// 70 landscapes it could move, too few for its z; judged again, unchanged,
// on fresh seeds 1071..2070 (1,350 such landscapes) by a rule written
// first: +287, +455 (z 3.4, 3.6), 0 runs, and nothing above 200 configs
// or recorded moved on seeds 1071..1073 in full, so kept
// (bench/results/2026-12-07-heldout-search-22.md).
var tinyClasses = true

// tinyDefCentreOn: the first part of tinyClasses (a screen may turn it
// off alone).
var tinyDefCentreOn = true

// tinyRhoGrid: the rho grid of the tiny budgets' process under
// tinyClasses.
var tinyRhoGrid = []float64{0.2, 0.5}

// tinyGPFit is the tiny budgets' process (gpPick's fit) under the knobs.
func tinyGPFit(t *tracker) *gpFit {
	if !tinyClasses {
		return fitGPWith(t, false, gpBoxCox)
	}
	return fitGPGrid(t, false, gpBoxCox, tinyRhoGrid, tinyEllSets(t))
}

// defCentre returns the fresh centre of the default's family when
// tinyClasses is on at a tiny budget of at least 4 x dims trials and the
// default is not that centre; else -1.
func (p *pattern) defCentre() int {
	l := p.t.lat
	if !tinyClasses || !tinyDefCentreOn || !p.tinyBudget() || p.budget < 4*len(l.free) {
		return -1
	}
	fs := l.families()
	if len(fs.members) < 2 {
		return -1
	}
	return l.centreOf(fs.members[fs.of[l.def]], &p.t)
}

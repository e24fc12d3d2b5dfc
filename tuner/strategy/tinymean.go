package strategy

// tinyClassMean: the tiny budgets' process (tinyGPFit) takes as the prior
// mean of a config the mean of its class's measured scores (standardised,
// as the process sees them; the class: the configs sharing its named
// parameters' values, an algorithm), 0 (the mean of all) for a class not
// measured, and is fitted to the residuals (24th fit, issue 57;
// -fit-knobs tinyclassmean=1; off while judged).
//
// Why: with one prior mean for all, a class the first pass measured once,
// at its centre, is predicted away from that centre as drawn back to the
// mean of every measured config. A class whose centre is near the best
// then looks worse away from it than its centre said, and the best
// class's measured neighbourhood always wins the bound (a trace of used
// seeds 111..1010 at a tenth: where the optimum's class was second after
// the first pass, 70 of 128 runs missed 3% and put 0 or 1 of their 14
// later trials in it); a slow class's far corners look better than its
// centre, and draw trials. Its own mean tells the process what one
// measured config says of a class: its level, not its shape.
//
// Screened on used seeds 111..1010 (1,126 landscapes of 190 configs):
// -322 and -424 runs within 3% at a twentieth and a tenth (z -2.77,
// -4.55; slowdefault -146 and -406): the slow class's corners drawing
// trials is what finds a slowdefault optimum. Judged by the rule on
// bench/results/2026-12-07-heldout-search-25.md, written first.
var tinyClassMean = false

// classPrior returns the residuals of ys (the scores of the measured
// configs x) from their class's mean, and every valid config's prior mean:
// its class's mean of ys, 0 (the mean of all ys) where its class has none.
func classPrior(l *lattice, x []int, ys []float64) ([]float64, []float64) {
	of := l.classes()
	sum := map[int]float64{}
	cnt := map[int]int{}
	for k, i := range x {
		sum[of[i]] += ys[k]
		cnt[of[i]]++
	}
	prior := make([]float64, len(l.valid))
	for i := range prior {
		if n := cnt[of[i]]; n > 0 {
			prior[i] = sum[of[i]] / float64(n)
		}
	}
	res := make([]float64, len(ys))
	for k, i := range x {
		res[k] = ys[k] - prior[i]
	}
	return res, prior
}

// classes returns every valid config's class, numbered by first
// appearance: the configs that share every named parameter's value
// (sameClass).
func (l *lattice) classes() []int {
	of := make([]int, len(l.valid))
	ids := map[string]int{}
	key := make([]byte, 0, 8)
	for i := range l.valid {
		key = key[:0]
		for _, d := range l.free {
			if l.categorical(d) {
				key = append(key, byte(l.idx[i][d]), byte(l.idx[i][d]>>8), ',')
			}
		}
		c, ok := ids[string(key)]
		if !ok {
			c = len(ids)
			ids[string(key)] = c
		}
		of[i] = c
	}
	return of
}

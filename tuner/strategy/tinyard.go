package strategy

import "slices"

// tinyARD: the tiny budgets' process (tinyGPFit, under tinyClasses) gives
// every ordered parameter its own length scale, each from gpEllGrid,
// chosen together by the marginal likelihood (automatic relevance
// determination), once it holds tinyARDMin measured configs per free
// parameter (22nd fit, issue 57; on since its judging; -fit-knobs
// tinyard=0 turns it off).
//
// Why: one length scale for every size makes a parameter that barely
// moves the score (a count the kernel runs flat along, one direction of a
// ridge) as uncertain as one that moves it 40%, so the lower confidence
// bound spends trials along it, and a step along the one that matters
// looks as far as a step along the one that does not. With a scale each,
// the process learns from what it measured which sizes matter. A trace of
// used seeds 111..1010 at a tenth of the 190-config spaces: 89 of the 221
// runs that missed 3% ended in the optimum's algorithm, 72 of them one
// step from a config within 3%.
//
// Why the floor: with one scale per parameter the grid holds 27 kernels
// for 4 free parameters, and with the 7 to 9 configs of a twentieth the
// likelihood picks among them by chance (screened always on: -420 runs
// at a twentieth, +175 at a tenth); at 3 per parameter (12 of the
// tenth's 19 trials) it is on for the last 7 picks of a tenth and never
// at a twentieth.
//
// Screened at 3 on used seeds 111..1010: 0, +288 runs at a twentieth and
// a tenth (z 3.03). Judged once on fresh seeds 2071..3070 (1,329
// landscapes of 190 configs) under a rule written first: 6,649, 10,396,
// 13,191 -> 6,649, 10,763, 13,191 (+367 at a tenth, z 3.64), nothing
// larger or recorded moved on seeds 2071..2073 in full, so kept
// (bench/results/2026-12-07-heldout-search-23.md).
var tinyARD = true

// tinyARDMin: measured configs per free parameter before tinyARD acts.
const tinyARDMin = 3

// tinyARDMaxSets bounds the grid: it grows as 3 to the number of ordered
// parameters, and every pick fits the process once per set (with rho and
// noise), so a GPU space of eight sizes at a tiny budget would fit 6,561
// kernels a pick (CI's TestBudgetMeasuresEveryFamily went from 51 s to
// 168 s). Past the bound the process keeps one scale for all, as with
// tinyARD off; the 190-config spaces it was judged on have 3 ordered
// parameters (27 sets), so their judged runs are unchanged.
const tinyARDMaxSets = 81

// tinyEllSets returns the length scales' grid of the tiny budgets'
// process for t: nil (gpEllGrid, one scale for all) unless tinyARD acts,
// else every combination of gpEllGrid over the ordered free parameters
// (a categorical one takes gpEllGrid's first, unused); nil too where the
// combinations would pass tinyARDMaxSets.
func tinyEllSets(t *tracker) [][]float64 {
	if !tinyARD {
		return nil
	}
	n := 0
	for _, seen := range t.seen {
		if seen {
			n++
		}
	}
	lat := t.lat
	if n < tinyARDMin*len(lat.free) {
		return nil
	}
	combos := 1
	for _, d := range lat.free {
		if !lat.categorical(d) {
			combos *= len(gpEllGrid)
		}
	}
	if combos > tinyARDMaxSets {
		return nil
	}
	sets := [][]float64{nil}
	for _, d := range lat.free {
		grid := gpEllGrid
		if lat.categorical(d) {
			grid = gpEllGrid[:1]
		}
		var next [][]float64
		for _, s := range sets {
			for _, ell := range grid {
				next = append(next, append(slices.Clone(s), ell))
			}
		}
		sets = next
	}
	return sets
}

package tuner

import "github.com/symmtune/symmtune/space"

// DefaultMargin is how much faster than the default config a finalist's
// re-measured median must be to replace it as the winner: 2%.
//
// The default is each kernel's measured best family for the hardware,
// chosen by timing it in torch programs, and the tuner's re-measurement
// does not order configs this close the way a program does. On 2 x H200
// (2026-11-28, bench/results/2026-11-28-h200x2-matmulrs-exhaustive.md)
// four 60 s searches chose a config 1.006-1.019x faster than the default
// in the tuner; in a torch program it ran 0.2-2.2% slower than the default
// in all eight passes. The seven winners 1.03-1.12x faster in the tuner
// ran from 0.9% slower to 1.5% faster in the program, so a margin this
// small gives up little where a search does find more.
const DefaultMargin = 1.02

// Winner picks a search's winner from the finalists' re-measurements (the
// ones that ran correctly count): the fastest, unless def is among them
// and the fastest beats it by less than DefaultMargin, in which case def
// keeps its place. ok is false when none ran correctly.
func Winner(remeasured []Result, def space.Config) (winner Result, ok bool) {
	var fastest, defResult Result
	haveDef := false
	for _, r := range remeasured {
		if r.Status != StatusOK {
			continue
		}
		if !ok || r.Score() < fastest.Score() {
			fastest, ok = r, true
		}
		if r.Config.Equal(def) {
			defResult, haveDef = r, true
		}
	}
	if haveDef && fastest.Score()*DefaultMargin > defResult.Score() {
		return defResult, true
	}
	return fastest, ok
}

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
// it, looks slow throughout. Kernel Tuner's comparisons and OpenTuner's
// bandit ensemble both point at the same fix: keep a share of the trials
// for arms that look worse but are little known.
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
// banditC and banditEvery were fitted on the fitting set alone
// (tuner/testdata/split.txt, "fit", and the synthetic seeds synthFitSeeds):
// see TestHeldOut and docs/search.md.
type bandit struct {
	*pattern
}

// The bandit's knobs, fitted on the fitting set (see bandit).
var (
	banditEvery     = 2
	banditC         = 0.8
	banditInterject = surrogateEvery
	banditRestarts  = true
)

func newBandit(p Problem) (Strategy, error) {
	ps, err := newPattern(p)
	if err != nil {
		return nil, err
	}
	pt := ps.(*pattern)
	pt.model = newModel(pt.t.lat, seedFor(p.Seed, Bandit))
	pt.model.families = pt.t.lat.families()
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
			v := math.Log(t.score[i])
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

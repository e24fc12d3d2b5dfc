package strategy

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/symmtune/symmtune/space"
)

// tracker folds the history the host passes to Next into per-config state.
// Next receives the whole history every time; the tracker consumes only the
// new tail, so a search costs O(trials) overall rather than O(trials²).
type tracker struct {
	lat      *lattice
	n        int       // history entries consumed
	seen     []bool    // measured
	ok       []bool    // measured and OK
	score    []float64 // best OK score
	logScore []float64 // math.Log(score): the models read it for every OK config at every pick
	proposed []bool    // handed to the host (measured or not yet)
	used     int       // configs seen or proposed
}

func newTracker(l *lattice) tracker {
	n := len(l.valid)
	return tracker{lat: l, seen: make([]bool, n), ok: make([]bool, n), score: make([]float64, n), logScore: make([]float64, n), proposed: make([]bool, n)}
}

// setOK records OK score s for config i (ingest's best of its measurements).
func (t *tracker) setOK(i int, s float64) {
	t.ok[i], t.score[i], t.logScore[i] = true, s, math.Log(s)
}

// ingest consumes history entries not yet seen. Observations of configs
// outside Valid (a host may log what it measured for other reasons) are
// ignored. A config measured twice keeps its best OK score.
func (t *tracker) ingest(history []Observation) {
	if len(history) < t.n {
		// The host started over with a shorter history: rebuild.
		*t = newTracker(t.lat)
	}
	for _, o := range history[t.n:] {
		i, ok := t.lat.byKey[configKey(o.Config)]
		if !ok {
			continue
		}
		if !t.seen[i] && !t.proposed[i] {
			t.used++
		}
		t.seen[i] = true
		if o.OK && !math.IsNaN(o.ScoreUS) && (!t.ok[i] || o.ScoreUS < t.score[i]) {
			t.setOK(i, o.ScoreUS)
		}
	}
	t.n = len(history)
}

// fresh reports whether config i may still be proposed.
func (t *tracker) fresh(i int) bool { return !t.seen[i] && !t.proposed[i] }

// propose marks i as handed out and returns its config.
func (t *tracker) propose(i int) space.Config {
	if t.fresh(i) {
		t.used++
	}
	t.proposed[i] = true
	return t.lat.valid[i]
}

// exhausted reports whether every valid config was measured or proposed.
func (t *tracker) exhausted() bool { return t.used >= len(t.lat.valid) }

// value is the score of a measured config, +Inf when it failed.
func (t *tracker) value(i int) float64 {
	if t.ok[i] {
		return t.score[i]
	}
	return math.Inf(1)
}

// pollOrder orders a poll for first-improvement judging: configs already
// measured first, best first (judging them costs no trial, and one that
// beats the centre ends the poll for free), then the fresh ones by the
// score an additive model of the history predicts for them, best first.
// The model is the main effects of each parameter's values on the log of
// the score (a value never measured counts as average). It is crude, but
// the poll's order is all it decides: which neighbours are measured, and
// what a local optimum is, stay the pattern's.
func (t *tracker) pollOrder(poll []int) []int {
	eff := t.mainEffects()
	pred := func(i int) float64 {
		s := 0.0
		for d, v := range t.lat.idx[i] {
			s += eff[d][v]
		}
		return s
	}
	out := slices.Clone(poll)
	slices.SortStableFunc(out, func(a, b int) int {
		switch {
		case t.seen[a] != t.seen[b]:
			if t.seen[a] {
				return -1
			}
			return 1
		case t.seen[a]:
			return cmp.Compare(t.value(a), t.value(b))
		}
		return cmp.Compare(pred(a), pred(b))
	})
	return out
}

// mainEffects returns, for each parameter d and value v, the mean log
// score of the OK configs measured with that value minus the mean over all
// of them (0 where there are none).
func (t *tracker) mainEffects() [][]float64 {
	l := t.lat
	sum := make([][]float64, len(l.sp.Params))
	n := make([][]int, len(l.sp.Params))
	for d := range sum {
		sum[d] = make([]float64, l.size(d))
		n[d] = make([]int, l.size(d))
	}
	total, count := 0.0, 0
	for i, ok := range t.ok {
		if !ok {
			continue
		}
		y := t.logScore[i]
		total += y
		count++
		for d, v := range l.idx[i] {
			sum[d][v] += y
			n[d][v]++
		}
	}
	if count == 0 {
		return sum // all zeros
	}
	mean := total / float64(count)
	for d := range sum {
		for v := range sum[d] {
			if n[d][v] > 0 {
				sum[d][v] = sum[d][v]/float64(n[d][v]) - mean
			}
		}
	}
	return sum
}

// randomEvery: every randomEvery-th restart of a local search starts from
// a fresh random config instead of the restartPoint.
const randomEvery = 3

// restartPoint picks where a local search restarts: the best OK config not
// yet used that lies more than one step (in some parameter) away from
// every local optimum found so far, so a restart explores a new basin
// instead of re-polling the neighbourhood of an old one; failing that, the
// best OK config not yet used; -1 when there is none.
func (t *tracker) restartPoint(used []bool, optima []int) int {
	best, far := -1, -1
	for i := range t.seen {
		if !t.ok[i] || used[i] {
			continue
		}
		if best < 0 || t.score[i] < t.score[best] {
			best = i
		}
		if (far < 0 || t.score[i] < t.score[far]) && t.awayFrom(i, optima) {
			far = i
		}
	}
	if far >= 0 {
		return far
	}
	return best
}

// bestUnused returns the best OK config not yet used, -1 when there is
// none.
func (t *tracker) bestUnused(used []bool) int {
	best := -1
	for i, ok := range t.ok {
		if ok && !used[i] && (best < 0 || t.score[i] < t.score[best]) {
			best = i
		}
	}
	return best
}

// newClassFactor: a named class (a combination of the named parameters'
// values: an algorithm, an impl) that no local search has started in yet
// gets the next start when its best measured config is within this factor
// of the best so far. Each algorithm has its own best tiles, so a class
// whose sampled configs came close is worth a search of its own before
// another search in a class already explored; one far behind is left to
// the polish and the random restarts.
const newClassFactor = 1.25

// newClassStart returns the best measured config, not yet a start, of a
// named class no start has been in, when it is within newClassFactor of
// the best so far; -1 when there is none (or no named parameter varies).
func (t *tracker) newClassStart(starts []bool) int {
	l := t.lat
	var named []int
	for _, d := range l.free {
		if l.categorical(d) {
			named = append(named, d)
		}
	}
	if len(named) == 0 {
		return -1
	}
	classOf := func(i int) string {
		b := make([]byte, 0, 2*len(named))
		for _, d := range named {
			b = strconv.AppendInt(b, int64(l.idx[i][d]), 36)
			b = append(b, ',')
		}
		return string(b)
	}
	explored := map[string]bool{}
	for i, s := range starts {
		if s {
			explored[classOf(i)] = true
		}
	}
	best, cand := -1, -1
	for i := range l.valid {
		if !t.ok[i] {
			continue
		}
		if best < 0 || t.score[i] < t.score[best] {
			best = i
		}
		if !starts[i] && !explored[classOf(i)] && (cand < 0 || t.score[i] < t.score[cand]) {
			cand = i
		}
	}
	if cand < 0 || t.score[cand] > newClassFactor*t.score[best] {
		return -1
	}
	return cand
}

// awayFrom reports whether config i is more than one index step away, in
// some parameter, from each of the configs in others.
func (t *tracker) awayFrom(i int, others []int) bool {
	a := t.lat.idx[i]
	for _, j := range others {
		b := t.lat.idx[j]
		near := true
		for d := range a {
			if a[d]-b[d] > 1 || b[d]-a[d] > 1 {
				near = false
				break
			}
		}
		if near {
			return false
		}
	}
	return true
}

// bestOK returns the fastest config that passed, or -1.
func (t *tracker) bestOK() int {
	best := -1
	for i, ok := range t.ok {
		if ok && (best < 0 || t.score[i] < t.score[best]) {
			best = i
		}
	}
	return best
}

package strategy

import (
	"cmp"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"

	"github.com/symmtune/symmtune/space"
)

// batchSize caps how many configs the enumerating strategies (exhaustive,
// random, the initial samples) return from one Next call, so the host can
// report progress and stop between batches without the strategy planning
// far past the budget.
const batchSize = 16

// lattice is the index view of a problem: every valid config as a vector of
// value indexes, one per parameter, so that "one step" along a parameter
// means its neighbouring value in the parameter's order.
type lattice struct {
	sp    space.Space
	valid []space.Config
	idx   [][]int        // idx[i]: value indexes of valid[i]
	byKey map[string]int // Config.String() -> index into valid
	free  []int          // parameters with more than one value: the search dimensions
	def   int            // index of the default in valid
	near  map[string]int // memo of nearest(), keyed by the rounded point
}

func newLattice(p Problem) (*lattice, error) {
	l := &lattice{sp: p.Space, byKey: make(map[string]int, len(p.Valid)), near: map[string]int{}}
	for _, c := range p.Valid {
		key := c.String()
		if _, dup := l.byKey[key]; dup {
			continue // a repeated valid config adds nothing
		}
		ix, err := p.Space.Indices(c)
		if err != nil {
			return nil, inputErrorf("valid config %s: %w", key, err)
		}
		l.byKey[key] = len(l.valid)
		l.valid = append(l.valid, c)
		l.idx = append(l.idx, ix)
	}
	for d, prm := range p.Space.Params {
		if len(prm.Values) > 1 {
			l.free = append(l.free, d)
		}
	}
	// A default the kernel does not accept cannot be proposed; the first
	// valid config stands in for it.
	if i, ok := l.byKey[p.Default.String()]; ok {
		l.def = i
	}
	return l, nil
}

// neighbours lists the valid configs one move away from valid config i,
// without repeats: step positions either way along each ordered parameter
// (clamped to its ends) and every other value of a categorical one, each
// mapped to the nearest valid config when that point is invalid. rotate
// picks which parameter comes first, so that searches that take the first
// improvement do not always judge the same parameter last.
func (l *lattice) neighbours(i, step, rotate int) []int {
	c := l.idx[i]
	var out []int
	add := func(r []int) {
		if j := l.at(r, i); j >= 0 && !slices.Contains(out, j) {
			out = append(out, j)
		}
	}
	for k := range l.free {
		d := l.free[(k+rotate)%len(l.free)]
		var vals []int
		if l.categorical(d) {
			// Named alternatives (algorithms, impls) have no order:
			// every other value is one move away.
			for v := 0; v < l.size(d); v++ {
				vals = append(vals, v)
			}
		} else {
			vals = []int{clampInt(c[d]-step, 0, l.size(d)-1), clampInt(c[d]+step, 0, l.size(d)-1)}
		}
		for _, v := range vals {
			if v != c[d] {
				r := append([]int(nil), c...)
				r[d] = v
				add(r)
			}
		}
	}
	return out
}

// trades lists the valid configs one trade away from valid config i: one
// ordered parameter a step up while another goes a step down, for every
// pair, without repeats and without what neighbours(i, 1, ·) already
// lists. Kernel spaces are full of ridges along such trades: the work of a
// block is blocks × threads × elements per thread, a tile's area is
// block_m × block_n, so the best configs often sit on a diagonal that axis
// moves alone cannot follow (each single step off the ridge is worse). A
// point off the lattice is skipped rather than clamped: clamped, it would
// be an axis move.
func (l *lattice) trades(i int) []int {
	c := l.idx[i]
	axis := l.neighbours(i, 1, 0)
	var out []int
	for a, da := range l.free {
		if l.categorical(da) {
			continue
		}
		for _, db := range l.free[a+1:] {
			if l.categorical(db) {
				continue
			}
			for _, s := range [2]int{1, -1} {
				va, vb := c[da]+s, c[db]-s
				if va < 0 || va >= l.size(da) || vb < 0 || vb >= l.size(db) {
					continue
				}
				r := append([]int(nil), c...)
				r[da], r[db] = va, vb
				if j := l.at(r, i); j >= 0 && !slices.Contains(out, j) && !slices.Contains(axis, j) {
					out = append(out, j)
				}
			}
		}
	}
	return out
}

// categorical reports whether parameter d takes string values: named
// alternatives such as algorithms, whose order in the list means nothing.
func (l *lattice) categorical(d int) bool { return l.sp.Params[d].Values[0].IsStr }

// size returns the number of values of parameter d.
func (l *lattice) size(d int) int { return len(l.sp.Params[d].Values) }

// nearest returns the valid config closest (Euclidean, in index steps) to
// the point x (one coordinate per parameter, in index units, rounded to the
// lattice first); ties go to the earlier valid config so the answer is
// deterministic.
func (l *lattice) nearest(x []float64) int {
	r := make([]int, len(x))
	for d, v := range x {
		r[d] = clampInt(int(math.Round(v)), 0, l.size(d)-1)
	}
	key := pointKey(r)
	if i, ok := l.near[key]; ok {
		return i
	}
	i, ok := l.byKey[l.sp.At(r).String()]
	if !ok {
		i = l.closest(r, -1)
	}
	l.near[key] = i
	return i
}

// closest returns the valid config nearest to lattice point r other than
// skip (-1: none).
func (l *lattice) closest(r []int, skip int) int {
	best, bestD := -1, math.MaxInt
	for i, ix := range l.idx {
		if i == skip {
			continue
		}
		dist := 0
		for d, v := range ix {
			dd := v - r[d]
			dist += dd * dd
		}
		if dist < bestD {
			best, bestD = i, dist
		}
	}
	return best
}

// at returns the valid config at lattice point r, or the nearest valid one
// other than skip when r itself is not valid (or is skip).
func (l *lattice) at(r []int, skip int) int {
	if i, ok := l.byKey[l.sp.At(r).String()]; ok && i != skip {
		return i
	}
	return l.closest(r, skip)
}

func pointKey(r []int) string {
	var b strings.Builder
	for i, v := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// tracker folds the history the host passes to Next into per-config state.
// Next receives the whole history every time; the tracker consumes only the
// new tail, so a search costs O(trials) overall rather than O(trials²).
type tracker struct {
	lat      *lattice
	n        int       // history entries consumed
	seen     []bool    // measured
	ok       []bool    // measured and OK
	score    []float64 // best OK score
	proposed []bool    // handed to the host (measured or not yet)
	used     int       // configs seen or proposed
}

func newTracker(l *lattice) tracker {
	n := len(l.valid)
	return tracker{lat: l, seen: make([]bool, n), ok: make([]bool, n), score: make([]float64, n), proposed: make([]bool, n)}
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
		i, ok := t.lat.byKey[o.Config.String()]
		if !ok {
			continue
		}
		if !t.seen[i] && !t.proposed[i] {
			t.used++
		}
		t.seen[i] = true
		if o.OK && !math.IsNaN(o.ScoreUS) && (!t.ok[i] || o.ScoreUS < t.score[i]) {
			t.ok[i] = true
			t.score[i] = o.ScoreUS
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
		y := math.Log(t.score[i])
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

// sampler hands out valid configs in a seeded random order, skipping ones
// already measured or proposed.
type sampler struct {
	perm []int
	pos  int
}

func newSampler(n int, seed int64) sampler {
	return sampler{perm: rand.New(rand.NewSource(seed)).Perm(n)}
}

// next returns the next fresh config in the permutation, or -1.
func (s *sampler) next(t *tracker) int {
	for s.pos < len(s.perm) {
		i := s.perm[s.pos]
		s.pos++
		if t.fresh(i) {
			return i
		}
	}
	return -1
}

// initial is the local searches' first batch: the default (when not yet
// measured) and a spread sample of sampleSize(budget, ·) configs.
func (s *sampler) initial(t *tracker, budget int) []space.Config {
	var out []space.Config
	if t.fresh(t.lat.def) {
		out = append(out, t.propose(t.lat.def))
	}
	for _, i := range s.spread(t, sampleSize(budget, len(t.lat.free))) {
		out = append(out, t.lat.valid[i])
	}
	return out
}

// spread returns up to n fresh configs that cover the parameters' values
// evenly: each pick is, among the next few configs of the permutation, the
// one whose values were sampled least so far (the default and anything
// already measured count). A plain random sample of a dozen configs often
// misses a whole algorithm or impl; this one rarely does, so the local
// searches start from every kind of kernel the space holds.
func (s *sampler) spread(t *tracker, n int) []int {
	l := t.lat
	counts := make([][]int, len(l.sp.Params))
	for d := range counts {
		counts[d] = make([]int, l.size(d))
	}
	note := func(i int) {
		for d, v := range l.idx[i] {
			counts[d][v]++
		}
	}
	for i := range l.valid {
		if !t.fresh(i) {
			note(i)
		}
	}
	const window = 16
	var out []int
	for len(out) < n {
		best, bestScore, bestPos := -1, -1.0, -1
		seen := 0
		for k := s.pos; k < len(s.perm) && seen < window; k++ {
			i := s.perm[k]
			if !t.fresh(i) {
				continue
			}
			seen++
			score := 0.0
			for d, v := range l.idx[i] {
				score += 1 / float64(1+counts[d][v])
			}
			if score > bestScore {
				best, bestScore, bestPos = i, score, k
			}
		}
		if best < 0 {
			break
		}
		// Move the pick to the front of the unread permutation so next()
		// stays a permutation of what is left.
		s.perm[s.pos], s.perm[bestPos] = s.perm[bestPos], s.perm[s.pos]
		s.pos++
		t.propose(best)
		note(best)
		out = append(out, best)
	}
	return out
}

// firstShare is how many of the left trials the first local search (a
// pattern descent, a Nelder-Mead run with its polish) may use before it is
// cut short and the search restarts elsewhere. The first search starts
// from the best sampled config, and on a small budget finishing it, down
// to checking every neighbour of its optimum, can take the whole budget
// while a better basin the sample only grazed goes unexplored (the 4-GPU
// n=32768 all-reduce landscape: a broad one_shot basin 7% behind a narrow
// two_shot_push one, 23 trials). On budgets that dwarf a descent it never
// binds. Replayed over the recorded landscapes, seeds 1..20, it lifted the
// runs within 3% from 454 to 457 of 460 (pattern) and from 448 to 453
// (Nelder-Mead), and a third or two thirds did the same as a half.
func firstShare(left int) int { return (left + 1) / 2 }

// sampleSize is how many random configs the local searches measure before
// they start: enough to find a few good basins, a small share of the budget.
func sampleSize(budget, dims int) int {
	n := budget / 8
	if n < 2*dims {
		n = 2 * dims
	}
	if n > 64 {
		n = 64
	}
	if n > budget/2 {
		n = budget / 2
	}
	return n
}

// seedFor derives a stream-specific seed so two strategies with the same
// problem seed do not share random choices by accident.
func seedFor(seed int64, stream string) int64 {
	h := int64(1469598103934665603)
	for _, c := range stream {
		h ^= int64(c)
		h *= 1099511628211
	}
	return seed ^ h
}

package strategy

import (
	"math"
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
	idx   [][]int                 // idx[i]: value indexes of valid[i]
	byKey map[space.ConfigKey]int // Config.Key() -> index into valid
	free  []int                   // parameters with more than one value: the search dimensions
	def   int                     // index of the default in valid
	near  map[string]int          // memo of nearest(), keyed by the rounded point
	// closestMemo keeps closest()'s answers: its scans were most of a GPU
	// search's host time between trials.
	closestMemo map[closestKey]int
	fam         *familySet // families(), computed at first use
}

func newLattice(p Problem) (*lattice, error) {
	l := &lattice{sp: p.Space, byKey: make(map[space.ConfigKey]int, len(p.Valid)), near: map[string]int{}, closestMemo: map[closestKey]int{}}
	for _, c := range p.Valid {
		key := c.Key()
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
	if i, ok := l.byKey[p.Default.Key()]; ok {
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
	i, ok := l.byKey[l.sp.At(r).Key()]
	if !ok {
		i = l.closest(r, -1)
	}
	l.near[key] = i
	return i
}

// closest returns the valid config nearest to lattice point r other than
// skip (-1: none), the earliest of equals. A pattern step asks it for
// most of its polls (a GEMM space's points are mostly invalid) and again
// for the same points later, over thousands of valid configs: answers are
// kept (closestMemo), and a candidate's distance stops summing once it
// cannot win, which leaves the answer as the full scan's.
func (l *lattice) closest(r []int, skip int) int {
	key := closestKey{point: pointKey(r), skip: skip}
	if i, ok := l.closestMemo[key]; ok {
		return i
	}
	best, bestD := -1, math.MaxInt
	for i, ix := range l.idx {
		if i == skip {
			continue
		}
		dist := 0
		for d, v := range ix {
			dd := v - r[d]
			if dist += dd * dd; dist >= bestD {
				break
			}
		}
		if dist < bestD {
			best, bestD = i, dist
		}
	}
	l.closestMemo[key] = best
	return best
}

// closestKey is a closest question: a lattice point and the config to skip.
type closestKey struct {
	point string
	skip  int
}

// at returns the valid config at lattice point r, or the nearest valid one
// other than skip when r itself is not valid (or is skip).
func (l *lattice) at(r []int, skip int) int {
	if i, ok := l.byKey[l.sp.At(r).Key()]; ok && i != skip {
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

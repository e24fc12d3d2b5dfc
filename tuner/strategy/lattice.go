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
	near  map[pointKey]int        // memo of nearest(), keyed by the rounded point
	// closestMemo keeps closest()'s answers: its scans were most of a GPU
	// search's host time between trials.
	closestMemo map[closestKey]int
	fam         *familySet // families(), computed at first use

	// closest's scan: the configs grouped by their value of parameter
	// split (the one with the most values), each group in index order,
	// laid out in one slice: group v is order[start[v]:start[v+1]], and
	// the k-th config in that order has its indexes at flat[k*dims:].
	flat  []int32
	order []int32
	start []int
	split int
	dims  int
	// The point index: a lattice point's number (mixed radix, strides)
	// to its valid config, standing in for byKey[sp.At(r).Key()] without
	// building a config and its key. It is only set up when that is
	// exactly the same question (pointIndexable); stride is nil otherwise.
	stride  []int
	byPoint map[int]int32 // used when dense is nil
	dense   []int32       // point number -> index into valid, -1: none
}

func newLattice(p Problem) (*lattice, error) {
	l := &lattice{sp: p.Space, byKey: make(map[space.ConfigKey]int, len(p.Valid)), near: map[pointKey]int{}, closestMemo: map[closestKey]int{}}
	for _, c := range p.Valid {
		key := configKey(c)
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
	l.groupForClosest()
	l.indexPoints()
	// A default the kernel does not accept cannot be proposed; the first
	// valid config stands in for it.
	if i, ok := l.byKey[configKey(p.Default)]; ok {
		l.def = i
	}
	return l, nil
}

// groupForClosest sets up closest's groups (flat, order, start, split).
func (l *lattice) groupForClosest() {
	l.dims = len(l.sp.Params)
	if l.dims == 0 {
		return
	}
	for d := range l.dims {
		if l.size(d) > l.size(l.split) {
			l.split = d
		}
	}
	l.start = make([]int, l.size(l.split)+1)
	for _, ix := range l.idx {
		l.start[ix[l.split]+1]++
	}
	for v := 1; v < len(l.start); v++ {
		l.start[v] += l.start[v-1]
	}
	next := slices.Clone(l.start)
	l.order = make([]int32, len(l.idx))
	l.flat = make([]int32, len(l.idx)*l.dims)
	for i, ix := range l.idx {
		k := next[ix[l.split]]
		next[ix[l.split]]++
		l.order[k] = int32(i)
		for d, v := range ix {
			l.flat[k*l.dims+d] = int32(v)
		}
	}
}

// pointIndexable reports whether a lattice point's config key names it
// alone: parameter names distinct and free of ',' and '=', each
// parameter's values rendering distinct strings free of ','. Then
// sp.At(r).Key() == sp.At(q).Key() exactly when r == q, so looking a
// point up by its number answers what looking its key up in byKey does.
func pointIndexable(sp space.Space) bool {
	if len(sp.Params) == 0 {
		return false
	}
	names := map[string]bool{}
	for _, p := range sp.Params {
		if names[p.Name] || strings.ContainsAny(p.Name, ",=") || len(p.Values) == 0 {
			return false
		}
		names[p.Name] = true
		vals := map[string]bool{}
		for _, v := range p.Values {
			s := v.String()
			if vals[s] || strings.Contains(s, ",") {
				return false
			}
			vals[s] = true
		}
	}
	return true
}

// indexPoints sets up the point index when pointIndexable allows it.
func (l *lattice) indexPoints() {
	if !pointIndexable(l.sp) {
		return
	}
	stride := make([]int, len(l.sp.Params))
	n := 1
	for d := len(stride) - 1; d >= 0; d-- {
		stride[d] = n
		if n > (1<<62)/len(l.sp.Params[d].Values) {
			return // too many points to number in an int
		}
		n *= len(l.sp.Params[d].Values)
	}
	l.stride = stride
	if n <= 16*len(l.idx)+4096 {
		l.dense = make([]int32, n)
		for i := range l.dense {
			l.dense[i] = -1
		}
	} else {
		l.byPoint = make(map[int]int32, len(l.idx))
	}
	for i, ix := range l.idx {
		code := 0
		for d, v := range ix {
			code += v * stride[d]
		}
		if l.dense != nil {
			l.dense[code] = int32(i)
		} else {
			l.byPoint[code] = int32(i)
		}
	}
}

// pointCode returns lattice point r's number, or false when there is no
// point index or r lies off the lattice.
func (l *lattice) pointCode(r []int) (int, bool) {
	if l.stride == nil || len(r) != len(l.stride) {
		return 0, false
	}
	code := 0
	for d, v := range r {
		if v < 0 || v >= len(l.sp.Params[d].Values) {
			return 0, false
		}
		code += v * l.stride[d]
	}
	return code, true
}

// lookup returns the valid config at lattice point r (byKey[sp.At(r).Key()]).
func (l *lattice) lookup(r []int) (int, bool) {
	if code, ok := l.pointCode(r); ok {
		var i int32 = -1
		if l.dense != nil {
			i = l.dense[code]
		} else if j, found := l.byPoint[code]; found {
			i = j
		}
		return int(i), i >= 0
	}
	i, ok := l.byKey[configKey(l.sp.At(r))]
	return i, ok
}

// keyOf returns the memo key of lattice point r: its number when it has
// one, else its text.
func (l *lattice) keyOf(r []int) pointKey {
	if code, ok := l.pointCode(r); ok {
		return pointKey{code: code}
	}
	return pointKey{code: -1, text: pointText(r)}
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
	key := l.keyOf(r)
	if i, ok := l.near[key]; ok {
		return i
	}
	i, ok := l.lookup(r)
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
	key := closestKey{point: l.keyOf(r), skip: skip}
	if i, ok := l.closestMemo[key]; ok {
		return i
	}
	best := -1
	if l.dims > 0 {
		best = l.scanClosest(r, skip)
	}
	l.closestMemo[key] = best
	return best
}

// scanClosest is closest's search: the least (distance, index) over every
// config but skip, as a scan of all of them in index order keeping the
// first of the nearest finds. The groups of split are visited outward
// from r's value, k steps away holding only configs at k*k or more, and
// the search stops once that exceeds the best distance: no config left
// could win or tie.
func (l *lattice) scanClosest(r []int, skip int) int {
	best, bestD := -1, math.MaxInt
	dims, rv, groups := l.dims, r[l.split], len(l.start)-1
	scan := func(v int) {
		for k := l.start[v]; k < l.start[v+1]; k++ {
			i := int(l.order[k])
			if i == skip {
				continue
			}
			ix := l.flat[k*dims : k*dims+dims]
			dist := 0
			for d, x := range ix {
				dd := int(x) - r[d]
				if dist += dd * dd; dist > bestD {
					break
				}
			}
			if dist < bestD || (dist == bestD && i < best) {
				best, bestD = i, dist
			}
		}
	}
	for k := 0; ; k++ {
		lo, hi := rv-k, rv+k
		if (lo < 0 && hi >= groups) || k*k > bestD {
			return best
		}
		if lo >= 0 && lo < groups {
			scan(lo)
		}
		if k > 0 && hi >= 0 && hi < groups {
			scan(hi)
		}
	}
}

// closestKey is a closest question: a lattice point and the config to skip.
type closestKey struct {
	point pointKey
	skip  int
}

// pointKey names a lattice point in a memo: its number (pointCode), or
// with code -1 its text.
type pointKey struct {
	code int
	text string
}

// at returns the valid config at lattice point r, or the nearest valid one
// other than skip when r itself is not valid (or is skip).
func (l *lattice) at(r []int, skip int) int {
	if i, ok := l.lookup(r); ok && i != skip {
		return i
	}
	return l.closest(r, skip)
}

func pointText(r []int) string {
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

package strategy

import (
	"fmt"
	"strings"

	"github.com/symmtune/symmtune/space"
)

// A family is the set of valid configs that share the values of the
// space's structural parameters: the named ones (an all-reduce algorithm,
// a GEMM impl with its fused tile, copy engines or SM copies, where the
// reduction runs) and the two-valued ones (switches such as graph capture
// on or off, batched products). Configs of one family run the same code
// with other sizes, so they perform alike; configs of two families can
// differ by several times, and a search that never measures a family
// cannot know what it missed. Every budgeted search therefore measures
// one config of each family first (sampler.design), and an exhaustive
// search ordered by the space alone (all pipelines before any fused
// tile) is kept for searches sure to finish.

// structural reports whether parameter d of l decides a config's family.
func (l *lattice) structural(d int) bool {
	return l.categorical(d) || l.size(d) == 2
}

// familySet groups a lattice's valid configs by family.
type familySet struct {
	dims    []int   // the structural parameters that vary, in space order
	of      []int   // of[i]: the family of valid config i
	members [][]int // members[f]: its valid configs, in valid order
}

// families returns l's families, computed once.
func (l *lattice) families() *familySet {
	if l.fam != nil {
		return l.fam
	}
	fs := &familySet{of: make([]int, len(l.valid))}
	for _, d := range l.free {
		if l.structural(d) {
			fs.dims = append(fs.dims, d)
		}
	}
	byKey := map[string]int{}
	for i := range l.valid {
		key := l.familyKey(fs.dims, i)
		f, ok := byKey[key]
		if !ok {
			f = len(fs.members)
			byKey[key] = f
			fs.members = append(fs.members, nil)
		}
		fs.of[i] = f
		fs.members[f] = append(fs.members[f], i)
	}
	l.fam = fs
	return fs
}

func (l *lattice) familyKey(dims []int, i int) string {
	var b strings.Builder
	for _, d := range dims {
		b.WriteString(l.sp.Params[d].Values[l.idx[i][d]].String())
		b.WriteByte(',')
	}
	return b.String()
}

// familyName is the family of valid config i as "impl=fused:128x256,graph=1"
// (empty when no structural parameter varies).
func (l *lattice) familyName(i int) string {
	var parts []string
	for _, d := range l.families().dims {
		p := l.sp.Params[d]
		parts = append(parts, p.Name+"="+p.Values[l.idx[i][d]].String())
	}
	return strings.Join(parts, ",")
}

// design returns up to n fresh configs, one of each family that has no
// measured or proposed config yet, in an order that interleaves the
// families: each next family is the one whose structural values were
// measured least so far (a fused tile, then a pipeline with SM copies,
// then a graph-less one...), ties in the order of Valid. So a search cut
// short after any number of trials has spread them over the families,
// rather than measuring every pipeline before the first fused tile.
//
// A family's representative is its fresh config nearest the centre of its
// members' ordered parameters (the mean of their value indexes): with
// nothing measured, the middle of each range (a mid-sized grid, a middle
// chunk count) is the guess furthest from the worst corner, and a family
// is judged by it until a search goes there.
func (s *sampler) design(t *tracker, n int, valuesOnly bool) []int {
	l := t.lat
	fs := l.families()
	if len(fs.members) < 2 {
		return nil
	}
	counts := make([][]int, len(l.sp.Params))
	for d := range counts {
		counts[d] = make([]int, l.size(d))
	}
	covered := make([]bool, len(fs.members))
	note := func(i int) {
		covered[fs.of[i]] = true
		for _, d := range fs.dims {
			counts[d][l.idx[i][d]]++
		}
	}
	for i := range l.valid {
		if !t.fresh(i) {
			note(i)
		}
	}
	var out []int
	for len(out) < n {
		if valuesOnly && valuesCovered(fs, counts) {
			break
		}
		best, bestScore := -1, -1.0
		for f := range fs.members {
			if covered[f] {
				continue
			}
			score := 0.0
			for _, d := range fs.dims {
				score += 1 / float64(1+counts[d][l.idx[fs.members[f][0]][d]])
			}
			if score > bestScore {
				best, bestScore = f, score
			}
		}
		if best < 0 {
			break
		}
		i := l.centreOf(fs.members[best], t)
		if i < 0 {
			covered[best] = true
			continue
		}
		t.propose(i)
		note(i)
		out = append(out, i)
	}
	return out
}

// valuesCovered reports whether every value of every structural
// parameter has a measured or proposed config.
func valuesCovered(fs *familySet, counts [][]int) bool {
	for _, d := range fs.dims {
		for _, c := range counts[d] {
			if c == 0 {
				return false
			}
		}
	}
	return true
}

// centreOf returns the fresh config of members nearest (in index steps)
// the mean of the members' indexes, the earliest of equals; -1 when none
// is fresh.
func (l *lattice) centreOf(members []int, t *tracker) int {
	mean := make([]float64, len(l.sp.Params))
	for _, i := range members {
		for d, v := range l.idx[i] {
			mean[d] += float64(v)
		}
	}
	for d := range mean {
		mean[d] /= float64(len(members))
	}
	best, bestD := -1, 0.0
	for _, i := range members {
		if !t.fresh(i) {
			continue
		}
		dist := 0.0
		for d, v := range l.idx[i] {
			dd := float64(v) - mean[d]
			dist += dd * dd
		}
		if best < 0 || dist < bestD {
			best, bestD = i, dist
		}
	}
	return best
}

// FamilyCoverage says which families of a space a search measured.
type FamilyCoverage struct {
	Total    int      // families among the valid configs
	Measured []string // families with a measured config, by name, in valid order
	Missing  []string // the others
}

// Coverage returns which families of the problem's valid configs the
// measured configs cover (configs outside Valid are ignored). A space
// without structural parameters is one family.
func Coverage(p Problem, measured []space.Config) (FamilyCoverage, error) {
	l, err := newLattice(p)
	if err != nil {
		return FamilyCoverage{}, err
	}
	fs := l.families()
	seen := make([]bool, len(fs.members))
	for _, c := range measured {
		if i, ok := l.byKey[configKey(c)]; ok {
			seen[fs.of[i]] = true
		}
	}
	cov := FamilyCoverage{Total: len(fs.members)}
	for f, m := range fs.members {
		name := l.familyName(m[0])
		if seen[f] {
			cov.Measured = append(cov.Measured, name)
		} else {
			cov.Missing = append(cov.Missing, name)
		}
	}
	return cov, nil
}

// familyOrder is the exhaustive strategy's order of l's valid configs: the
// default, one config of each other family (design's order), then the
// rest a family at a time in turn, each family's in Valid's order. Every
// config comes once. Valid's own order lists a GEMM's pipelines before
// any fused tile (1,436 pipeline trials in 40 s on 2 x H200 before the
// first tile): a search that runs out of time, or whose planned budget
// was too hopeful, would never have measured the family that wins.
func familyOrder(l *lattice, seed int64) []int {
	if len(l.valid) == 0 {
		return nil
	}
	t := newTracker(l)
	s := newSampler(len(l.valid), seed)
	t.propose(l.def)
	order := append([]int{l.def}, s.design(&t, len(l.valid), false)...)
	fs := l.families()
	// Families in the order their first config came (design gives one of
	// each; any it did not, after them).
	turn := make([]int, 0, len(fs.members))
	inTurn := make([]bool, len(fs.members))
	for _, i := range order {
		if f := fs.of[i]; !inTurn[f] {
			inTurn[f] = true
			turn = append(turn, f)
		}
	}
	for f := range fs.members {
		if !inTurn[f] {
			turn = append(turn, f)
		}
	}
	pos := make([]int, len(fs.members))
	for len(order) < len(l.valid) {
		for _, f := range turn {
			m := fs.members[f]
			for pos[f] < len(m) && !t.fresh(m[pos[f]]) {
				pos[f]++
			}
			if pos[f] < len(m) {
				t.propose(m[pos[f]])
				order = append(order, m[pos[f]])
			}
		}
	}
	return order
}

// familiesShown caps the families a Note names.
const familiesShown = 6

// Note says in one line which families were measured: "every family (40)
// measured", or "measured 12 of 40 families (impl=...; ...); not measured:
// ..." with each list cut to familiesShown names.
func (c FamilyCoverage) Note() string {
	if len(c.Missing) == 0 {
		return fmt.Sprintf("every family (%d) measured", c.Total)
	}
	return fmt.Sprintf("measured %d of %d families (%s); not measured: %s",
		len(c.Measured), c.Total, shortList(c.Measured), shortList(c.Missing))
}

func shortList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= familiesShown {
		return strings.Join(names, "; ")
	}
	return strings.Join(names[:familiesShown], "; ") + fmt.Sprintf("; and %d more", len(names)-familiesShown)
}

package cache

import (
	"math"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

// Query asks for the config to run. Kernel, World, Dtype and Shape are
// required; KernelVersion, Backend and Hardware narrow the search when set
// and match anything when empty.
//
// Machine is the fingerprint of the hardware the config will run on. When
// set, entries tuned on exactly that fingerprint are used if there are any;
// only when there are none, entries tuned on the same hardware under
// another driver version are (Match.OtherDriver). Hardware, by contrast,
// matches one fingerprint ID exactly, with no such fallback.
type Query struct {
	Kernel string
	World  int
	Dtype  string
	Shape  space.Shape

	KernelVersion string
	Backend       string
	Hardware      string
	Machine       *hardware.Fingerprint

	// Skip, when set, leaves out the entries it returns true for: those
	// whose config the kernel's plugin refuses (not in its space, or not
	// valid at the asked shape), so that the next best entry answers.
	Skip func(*Entry) bool
}

// Match is a lookup result. Exact is false when the entry was tuned for a
// different (the nearest) shape. OtherDriver is true when it was tuned on
// the query's hardware under another driver version (Entry.HardwareInfo.Driver).
type Match struct {
	Entry       Entry
	Exact       bool
	OtherDriver bool
}

// Lookup finds the entry to use for q.
//
// Candidates are the entries with q's kernel, world and dtype, the optional
// fields equal where q sets them, and exactly q's set of dimension names.
//
// Hardware (q.Machine): candidates tuned on exactly q.Machine come first.
// When there are none, candidates whose fingerprint equals q.Machine in
// everything but the driver version are used and the match says
// OtherDriver: a driver upgrade keeps its tuning, because the GPU model, SM
// count, memory and link topology are what a config was tuned for. A
// different GPU, GPU count, memory size or interconnect never matches.
//
// Among the candidates, an entry with q's shape wins (Exact); among several
// (q left optional fields empty) the newest TunedAt. Otherwise the nearest
// shape wins, by distance = sum over dimensions of |log2(a/b)|, ties broken
// by the newest TunedAt and then the canonical key string. It returns false
// when there is no candidate, or when q lacks a kernel, a dtype, a world >= 1
// or a shape with all sizes positive.
//
// The Python package asks this method too, through libsymmtune
// (internal/libops' cache.lookup).
func (s *Store) Lookup(q Query) (Match, bool) {
	if s == nil || q.Kernel == "" || q.Dtype == "" || q.World < 1 || len(q.Shape) == 0 {
		return Match{}, false
	}
	for _, v := range q.Shape {
		if v <= 0 {
			return Match{}, false
		}
	}
	if q.Machine == nil {
		return s.pick(q, func(*Entry) bool { return true })
	}
	id := q.Machine.ID()
	if m, ok := s.pick(q, func(e *Entry) bool { return e.Hardware == id }); ok {
		return m, true
	}
	base := q.Machine.WithoutDriver().ID()
	m, ok := s.pick(q, func(e *Entry) bool {
		return e.HardwareInfo.Kind != "" && e.HardwareInfo.WithoutDriver().ID() == base
	})
	m.OtherDriver = ok
	return m, ok
}

// pick applies Lookup's shape rules to the candidates that hwOK accepts.
func (s *Store) pick(q Query, hwOK func(*Entry) bool) (Match, bool) {
	best := -1
	var bestDist float64
	bestExact := false
	for i := range s.entries {
		e := &s.entries[i]
		if e.Kernel != q.Kernel || e.World != q.World || e.Dtype != q.Dtype ||
			(q.KernelVersion != "" && e.KernelVersion != q.KernelVersion) ||
			(q.Backend != "" && e.Backend != q.Backend) ||
			(q.Hardware != "" && e.Hardware != q.Hardware) || !hwOK(e) || (q.Skip != nil && q.Skip(e)) {
			continue
		}
		exact := e.Shape.Equal(q.Shape)
		dist := 0.0
		if !exact {
			var ok bool
			if dist, ok = shapeDistance(e.Shape, q.Shape); !ok {
				continue
			}
		}
		if best < 0 || better(e, exact, dist, &s.entries[best], bestExact, bestDist) {
			best, bestDist, bestExact = i, dist, exact
		}
	}
	if best < 0 {
		return Match{}, false
	}
	return Match{Entry: s.entries[best].clone(), Exact: bestExact}, true
}

// distEpsilon absorbs rounding in sums of logarithms, so that shapes
// equally far in exact arithmetic tie.
const distEpsilon = 1e-9

func better(a *Entry, aExact bool, aDist float64, b *Entry, bExact bool, bDist float64) bool {
	if aExact != bExact {
		return aExact
	}
	if math.Abs(aDist-bDist) > distEpsilon {
		return aDist < bDist
	}
	if !a.TunedAt.Equal(b.TunedAt) {
		return a.TunedAt.After(b.TunedAt)
	}
	as, bs := a.Key.Slot(), b.Key.Slot()
	if at, bt := as.String(), bs.String(); at != bt {
		return at < bt
	}
	return as.Ident() < bs.Ident()
}

// shapeDistance is the sum over dimensions of |log2(a/b)|; ok is false when
// the shapes do not have the same dimension names.
func shapeDistance(a, b space.Shape) (float64, bool) {
	if len(a) != len(b) {
		return 0, false
	}
	d := 0.0
	for name, x := range a {
		y, ok := b[name]
		if !ok || x <= 0 || y <= 0 {
			return 0, false
		}
		d += math.Abs(math.Log2(float64(x)) - math.Log2(float64(y)))
	}
	return d, true
}

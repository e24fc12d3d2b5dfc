package cache

import (
	"math"
	"slices"

	"github.com/symmtune/symmtune/space"
)

// NeighbourQuery asks which winners of the store a new search may start
// from (a warm start): entries of the same kernel, kernel version, backend
// and dtype, at any shape with the query's dimension names, any world size
// and any hardware.
type NeighbourQuery struct {
	Kernel        string
	KernelVersion string
	Backend       string
	Dtype         string
	World         int
	Shape         space.Shape
	// Hardware is the ID of the hardware the search runs on; winners tuned
	// on other hardware rank lower (OtherHardwareDistance).
	Hardware string
}

// Neighbour is an entry with its distance from a NeighbourQuery.
type Neighbour struct {
	Entry    Entry
	Distance float64
}

// How far an entry is from a query, besides its shape's distance (the sum
// over dimensions of |log2(a/b)|, as Lookup's): each doubling or halving
// of the world size counts WorldDistance, and hardware other than the
// query's counts OtherHardwareDistance. A winner on another GPU is then as
// far as one at a shape 8x off in one dimension: a config's fit depends on
// SM count, memory and links more than on a moderate shape change.
const (
	WorldDistance         = 1.0
	OtherHardwareDistance = 3.0
)

// Neighbours returns the entries a search for q may start from, nearest
// first (ties: the newest TunedAt, then the canonical key). The query's own
// slot, when tuned, is among them at distance 0. Entries of another kernel
// version are left out: a changed kernel may have changed what is fast.
func (s *Store) Neighbours(q NeighbourQuery) []Neighbour {
	if s == nil || q.Kernel == "" || q.World < 1 || len(q.Shape) == 0 {
		return nil
	}
	var out []Neighbour
	for i := range s.entries {
		e := &s.entries[i]
		if e.Kernel != q.Kernel || e.KernelVersion != q.KernelVersion || e.Backend != q.Backend || e.Dtype != q.Dtype || e.World < 1 {
			continue
		}
		d, ok := shapeDistance(e.Shape, q.Shape)
		if !ok {
			continue
		}
		d += WorldDistance * math.Abs(math.Log2(float64(e.World))-math.Log2(float64(q.World)))
		if e.Hardware != q.Hardware {
			d += OtherHardwareDistance
		}
		out = append(out, Neighbour{Entry: e.clone(), Distance: d})
	}
	slices.SortStableFunc(out, func(a, b Neighbour) int {
		if math.Abs(a.Distance-b.Distance) > distEpsilon {
			if a.Distance < b.Distance {
				return -1
			}
			return 1
		}
		if !a.Entry.TunedAt.Equal(b.Entry.TunedAt) {
			if a.Entry.TunedAt.After(b.Entry.TunedAt) {
				return -1
			}
			return 1
		}
		return a.Entry.Key.Slot().Compare(b.Entry.Key.Slot())
	})
	return out
}

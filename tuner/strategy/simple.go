package strategy

import (
	"math/rand"

	"github.com/symmtune/symmtune/space"
)

// ordered proposes valid configs in a fixed order, a batch at a time. It is
// both exhaustive (default first, then the families interleaved: see
// familyOrder) and random (default first, then a seeded permutation).
type ordered struct {
	name  string
	t     tracker
	order []int
	pos   int
}

func newExhaustive(p Problem) (Strategy, error) {
	l, err := newLattice(p)
	if err != nil {
		return nil, err
	}
	return &ordered{name: Exhaustive, t: newTracker(l), order: familyOrder(l, seedFor(p.Seed, Exhaustive))}, nil
}

func newRandom(p Problem) (Strategy, error) {
	return newOrdered(p, Random, rand.New(rand.NewSource(seedFor(p.Seed, Random))).Perm)
}

// newOrdered measures the default first, then the valid configs in the
// order perm gives their indexes.
func newOrdered(p Problem, name string, perm func(n int) []int) (Strategy, error) {
	l, err := newLattice(p)
	if err != nil {
		return nil, err
	}
	var order []int
	if len(l.valid) > 0 {
		order = append(order, l.def)
	}
	for _, i := range perm(len(l.valid)) {
		if i != l.def {
			order = append(order, i)
		}
	}
	return &ordered{name: name, t: newTracker(l), order: order}, nil
}

func (o *ordered) Name() string { return o.name }

// Next returns the next batch of configs in order that nobody measured yet.
func (o *ordered) Next(history []Observation) []space.Config {
	o.t.ingest(history)
	var out []space.Config
	for o.pos < len(o.order) && len(out) < batchSize {
		i := o.order[o.pos]
		o.pos++
		if o.t.fresh(i) {
			out = append(out, o.t.propose(i))
		}
	}
	return out
}

// Close is a no-op: ordered strategies hold nothing.
func (o *ordered) Close() {}

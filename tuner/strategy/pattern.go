package strategy

import (
	"github.com/symmtune/symmtune/space"
)

// pattern is a compass (Hooke-Jeeves style) pattern search on the index
// lattice, with restarts.
//
// It measures the default and a small seeded random sample first, then
// starts at the best of them. Each poll measures the neighbours of the
// centre one step away along every parameter (index ±step in the
// parameter's ordered values, clamped to its ends, mapped to the nearest
// valid config when that point is invalid) plus, after a successful move,
// the extrapolated point one more move along the same direction. The best
// improving neighbour becomes the centre (the step widens when it was the
// extrapolated point); no improvement narrows the step. When even the one-step neighbourhood
// brings nothing the centre is a local optimum of the lattice, and the
// search restarts from the best measured config that has not yet been a
// centre, preferring one away from the optima found so far (or from a
// fresh random config), until the budget or the space runs out.
//
// Why this suits kernel spaces: parameters are short ordered lists (tile
// sizes, stages, algorithms) whose neighbours are usually similar, valid
// regions have holes (shared-memory limits), and measurements are batched
// per poll so the host can run a poll's trials back to back.
type pattern struct {
	t         tracker
	s         sampler
	budget    int
	sampled   bool
	centres   []bool // configs that have been a centre
	optima    []int  // centres where a descent ended: local optima
	restarts  int
	centre    int // current centre, -1 before a (re)start
	step      int
	maxStep   int
	move      []int // last successful move, in index steps (nil: none)
	poll      []int // configs of the current poll
	patternPt int   // the poll's extrapolated point, -1: none
	polling   bool  // poll handed out, waiting for its results
}

func newPattern(p Problem) (Strategy, error) {
	l, err := newLattice(p)
	if err != nil {
		return nil, err
	}
	maxStep := 1
	for _, d := range l.free {
		if s := (l.size(d) - 1) / 2; s > maxStep {
			maxStep = s
		}
	}
	return &pattern{
		t:       newTracker(l),
		s:       newSampler(len(l.valid), seedFor(p.Seed, Pattern)),
		budget:  p.Budget,
		centres: make([]bool, len(l.valid)),
		centre:  -1,
		maxStep: maxStep,
	}, nil
}

func (p *pattern) Name() string { return Pattern }

// Close is a no-op: pattern holds nothing.
func (p *pattern) Close() {}

// Next returns the next poll (or the initial sample, or a restart point).
// Polls whose neighbours were all measured already are settled at once,
// without a trial, so every non-nil answer holds fresh configs.
func (p *pattern) Next(history []Observation) []space.Config {
	p.t.ingest(history)
	for !p.t.exhausted() {
		if !p.sampled {
			p.sampled = true
			var out []space.Config
			if p.t.fresh(p.t.lat.def) {
				out = append(out, p.t.propose(p.t.lat.def))
			}
			for n := sampleSize(p.budget, len(p.t.lat.free)); n > 0; n-- {
				if i := p.s.next(&p.t); i >= 0 {
					out = append(out, p.t.propose(i))
				}
			}
			if len(out) > 0 {
				return out
			}
			continue
		}
		if p.centre < 0 {
			if out := p.restart(); out != nil || p.centre < 0 {
				return out // a config to measure, or nil: nothing left to start from
			}
			continue
		}
		if p.polling {
			p.settle()
			continue
		}
		if out := p.startPoll(); out != nil {
			return out
		}
	}
	return nil
}

// restart picks a new centre: usually the restartPoint (the best measured
// config not yet a centre, away from the optima found so far), but every
// randomEvery-th restart a fresh random config, so that a landscape whose
// good region the initial sample missed (a well in a plateau) still gets
// explored.
func (p *pattern) restart() []space.Config {
	p.move = nil
	// The first descent starts from a sampled config and takes bigger
	// steps; restarts refine known good configs one step at a time.
	p.step = 1
	if p.maxStep > 1 && p.restarts == 0 {
		p.step = 2
	}
	p.restarts++
	i := -1
	if p.restarts%randomEvery != 0 {
		i = p.t.restartPoint(p.centres, p.optima)
	}
	if i >= 0 {
		p.centre = i
		p.centres[i] = true
		return nil
	}
	if i = p.s.next(&p.t); i < 0 {
		if i = p.t.restartPoint(p.centres, p.optima); i >= 0 {
			p.centre = i
			p.centres[i] = true
		}
		return nil
	}
	// The fresh config is the centre; it is measured before the poll
	// around it is settled.
	p.centre = i
	p.centres[i] = true
	return []space.Config{p.t.propose(i)}
}

// startPoll builds the neighbourhood of the centre and hands out the
// configs in it that were never measured. A poll with nothing fresh is
// settled at once by the caller's loop.
func (p *pattern) startPoll() []space.Config {
	l := p.t.lat
	c := l.idx[p.centre]
	p.poll = p.poll[:0]
	add := func(r []int) {
		i := l.at(r, p.centre)
		if i < 0 {
			return
		}
		for _, j := range p.poll {
			if j == i {
				return
			}
		}
		p.poll = append(p.poll, i)
	}
	p.patternPt = -1
	if p.move != nil {
		r := make([]int, len(c))
		moved := false
		for d := range c {
			r[d] = clampInt(c[d]+p.move[d], 0, l.size(d)-1)
			moved = moved || r[d] != c[d]
		}
		if moved {
			add(r)
			if len(p.poll) > 0 {
				p.patternPt = p.poll[0]
			}
		}
	}
	for _, d := range p.t.lat.free {
		for _, sign := range []int{-1, 1} {
			v := clampInt(c[d]+sign*p.step, 0, l.size(d)-1)
			if v == c[d] {
				continue
			}
			r := append([]int(nil), c...)
			r[d] = v
			add(r)
		}
	}
	p.polling = true
	var out []space.Config
	for _, i := range p.poll {
		if p.t.fresh(i) {
			out = append(out, p.t.propose(i))
		}
	}
	return out
}

// settle moves to the best improving neighbour of the finished poll,
// widening the step, or narrows the step; at step 1 without improvement it
// ends this descent.
func (p *pattern) settle() {
	p.polling = false
	best := -1
	for _, i := range p.poll {
		if best < 0 || p.t.value(i) < p.t.value(best) {
			best = i
		}
	}
	if best >= 0 && p.t.value(best) < p.t.value(p.centre) {
		l := p.t.lat
		p.move = make([]int, len(l.idx[best]))
		for d := range p.move {
			p.move[d] = l.idx[best][d] - l.idx[p.centre][d]
		}
		// Widen only when the extrapolated pattern move paid off: the
		// descent is heading somewhere. Widening after every success
		// wastes a poll of far points whenever the optimum is near.
		if p.step < p.maxStep && best == p.patternPt {
			p.step *= 2
			if p.step > p.maxStep {
				p.step = p.maxStep
			}
		}
		p.centre = best
		p.centres[best] = true
		return
	}
	p.move = nil
	if p.step > 1 {
		p.step /= 2
		return
	}
	p.optima = append(p.optima, p.centre)
	p.centre = -1
}

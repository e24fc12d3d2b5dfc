package strategy

import (
	"math"
	"runtime"

	"gonum.org/v1/gonum/optimize"

	"github.com/symmtune/symmtune/space"
)

// Penalties the Nelder-Mead objective gives points without a score. They
// must be finite (gonum refuses an infinite starting value) and above any
// real time in microseconds; Nelder-Mead only compares values, so their
// size does not distort the search.
const (
	failedPenalty = 1e18 // a config that was measured and failed
	outOfBounds   = 1e19 // a point off the lattice, plus its distance to it
)

// nelderMead runs gonum's optimize.NelderMead over the index lattice, with
// restarts.
//
// Coordinates are continuous, one per ordered parameter with more than one
// value, normalised to [0, 1] so that one simplex spans every parameter
// alike; a point maps to value index round(x·(len-1)) and then to the
// nearest valid config. Named parameters (algorithm, impl) are not
// coordinates: their values have no order, so "halfway between two
// algorithms" means nothing, and each has its own best tiles. A run holds
// them at its start config's values; the lattice polish (where every other
// named value is one move away) and the restarts change them. The objective
// is that config's measured score (a failed one gets failedPenalty, a point
// off the lattice outOfBounds plus its distance), and each config is
// measured at most once: revisits are answered from memory without a trial.
//
// gonum's Method.Run is a blocking loop that asks for evaluations on a
// channel. Next drives that protocol directly (Init, Run in a goroutine,
// the operation/result channels) instead of optimize.Minimize: Minimize
// would need the objective to block on the host, while here each fresh
// point is simply returned from Next and the held task is answered on the
// following call. The goroutine only ever waits on a channel Next owns, so
// the search is deterministic and stops cleanly (Close, or Next returning
// nil).
//
// The search measures the default and a spread sample first (as pattern
// does), then starts runs from the best of them. A discrete lattice makes
// Nelder-Mead stall once its simplex shrinks inside one cell: after
// stallLimit revisits in a row the run is stopped, its best config is
// polished one lattice step at a time to a local optimum (polishStep), and
// a new run starts: in a named class no run has held yet when one came
// close (tracker.newClassStart), else from the best config not yet a start
// and away from the optima found so far (every third time from a fresh
// random config). The first run, polish included, is cut short once it has
// used its share of the budget (firstShare).
type nelderMead struct {
	*nmState
}

type nmState struct {
	t        tracker
	s        sampler
	budget   int
	sampled  bool
	starts   []bool // configs a run has started from
	optima   []int  // the best config of each finished run
	runBest  int    // best config evaluated by the current run, -1: none
	restarts int
	// polish is the config being polished after a run stalled, -1: none;
	// polishList its neighbours, polishPos the next one to judge.
	polish     int
	polishList []int
	polishPos  int
	run        *nmRun
	pending    int // config handed out whose score the held task waits for, -1: none
	stalls     int // revisits in a row in the current run
	simplex    *nmSimplex
	// axes are the ordered parameters the simplex moves along; the named
	// ones (algorithm, impl) are held at class, the start's values, for a
	// whole run.
	axes  []int
	class []int
	// The first run may use at most firstCap trials (counted from
	// firstFrom); firstCut: it was cut short.
	firstFrom, firstCap int
	firstCut            bool
}

// nmSimplex is an initial simplex whose vertices are being measured.
type nmSimplex struct {
	x   [][]float64 // normalised coordinates
	cfg []int       // the valid config each vertex maps to
}

func newNelderMead(p Problem) (Strategy, error) {
	l, err := newLattice(p)
	if err != nil {
		return nil, err
	}
	st := &nmState{
		t:       newTracker(l),
		s:       newSampler(len(l.valid), seedFor(p.Seed, NelderMead)),
		budget:  p.Budget,
		starts:  make([]bool, len(l.valid)),
		pending: -1,
		runBest: -1,
		polish:  -1,
	}
	for _, d := range l.free {
		if !l.categorical(d) {
			st.axes = append(st.axes, d)
		}
	}
	nm := &nelderMead{st}
	// Belt and braces: a host that drops the strategy without Close or
	// without running it to the end still gets the goroutine back.
	runtime.AddCleanup(nm, func(st *nmState) { st.stopRun() }, st)
	return nm, nil
}

func (n *nelderMead) Name() string { return NelderMead }

// Close stops the gonum goroutine, if one is running. It is idempotent;
// Next must not be called after it.
func (n *nelderMead) Close() { n.stopRun() }

func (st *nmState) dims() int { return len(st.axes) }

// Next answers the evaluation gonum is waiting for with the score of the
// config measured since the last call, then runs the optimizer until it
// asks for a config never measured, and returns that one. Initial samples
// and initial simplexes come back as batches.
func (n *nelderMead) Next(history []Observation) []space.Config {
	st := n.nmState
	st.t.ingest(history)
	if st.pending >= 0 {
		if !st.t.seen[st.pending] {
			// The host has not measured it (yet): ask again rather than
			// let the optimizer wait forever.
			return []space.Config{st.t.lat.valid[st.pending]}
		}
		st.noteRunBest(st.pending)
		st.run.answer(st.objective(st.pending))
		st.pending = -1
	}
	for {
		if st.t.exhausted() {
			st.stopRun()
			return nil
		}
		if st.restarts == 1 && !st.firstCut && st.t.used-st.firstFrom >= st.firstCap {
			// The first run, polish included, has had its share
			// (firstShare) of what the sample left: drop it, keep its
			// best as an optimum, and let the restart go elsewhere.
			st.stopRun()
			if st.polish >= 0 {
				st.optima = append(st.optima, st.polish)
				st.polish, st.polishList = -1, nil
			}
			st.simplex = nil
			st.firstCut = true
		}
		if !st.sampled {
			st.sampled = true
			if out := st.s.initial(&st.t, st.budget, false, sampleSize(st.budget, len(st.t.lat.free)), 0); len(out) > 0 {
				return out
			}
			continue
		}
		if st.polish >= 0 {
			if out := st.polishStep(); out != nil {
				return out
			}
			continue
		}
		if st.run == nil {
			if st.simplex != nil {
				st.startRun()
				continue
			}
			out, ok := st.restart()
			if !ok {
				st.stopRun()
				return nil
			}
			if len(out) > 0 {
				return out
			}
			continue
		}
		task, ok := st.run.next()
		if !ok {
			st.stopRun()
			continue
		}
		switch {
		case task.Op == optimize.MethodDone:
			st.stopRun()
		case task.Op&optimize.FuncEvaluation == 0:
			// NoOperation, MajorIteration: nothing to do but hand it back.
			st.run.reply(task)
		default:
			i, f := st.eval(task.X)
			if i >= 0 && st.t.fresh(i) {
				st.stalls = 0
				st.pending = i
				return []space.Config{st.t.propose(i)}
			}
			if i >= 0 {
				st.noteRunBest(i)
			}
			st.run.answer(f)
			if st.stalls++; st.stalls > st.stallLimit() {
				st.stopRun()
			}
		}
	}
}

// stallLimit is how many revisits in a row end a run: a few simplex
// updates' worth.
func (st *nmState) stallLimit() int { return 3 * (st.dims() + 1) }

// objective is the value gonum sees for a measured config.
func (st *nmState) objective(i int) float64 {
	if st.t.ok[i] {
		return st.t.score[i]
	}
	return failedPenalty
}

// eval maps normalised coordinates to a config and the value gonum sees
// for it. Off the lattice it returns i=-1 and a penalty growing with the
// distance, so the simplex is pushed back. A config never measured gets
// failedPenalty here; Next measures it instead when it is still fresh.
func (st *nmState) eval(x []float64) (i int, f float64) {
	l := st.t.lat
	pt := make([]float64, len(l.sp.Params))
	for d, v := range st.class {
		pt[d] = float64(v)
	}
	out := 0.0
	for k, d := range st.axes {
		hi := float64(l.size(d) - 1)
		v := x[k] * hi
		if v < -0.5 {
			out += -0.5 - v
		} else if v > hi+0.5 {
			out += v - hi - 0.5
		}
		pt[d] = v
	}
	if out > 0 || math.IsNaN(out) {
		return -1, outOfBounds + out
	}
	i = l.nearest(pt)
	return i, st.objective(i)
}

// restart builds the initial simplex of a new run around the restartPoint
// (every randomEvery-th time, or when there is none, a fresh random config):
// the
// start plus, for each parameter, the point a quarter of its range (at
// least one step) towards its interior. It returns the vertices that still
// need measuring; ok=false when nothing is left to start from.
func (st *nmState) restart() (out []space.Config, ok bool) {
	st.restarts++
	if st.restarts == 1 {
		st.firstFrom = st.t.used
		st.firstCap = firstShare(st.budget - st.t.used)
	}
	start := st.t.newClassStart(st.starts)
	if start < 0 && st.restarts%randomEvery != 0 {
		start = st.t.restartPoint(st.starts, st.optima)
	}
	if start < 0 {
		start = st.s.next(&st.t)
	}
	if start < 0 {
		start = st.t.restartPoint(st.starts, st.optima)
	}
	if start < 0 {
		return nil, false
	}
	st.starts[start] = true
	l := st.t.lat
	c := l.idx[start]
	st.class = append(st.class[:0], c...)
	sx := &nmSimplex{}
	vertex := func(r []int) {
		x := make([]float64, len(st.axes))
		for k, d := range st.axes {
			x[k] = float64(r[d]) / float64(l.size(d)-1)
		}
		sx.x = append(sx.x, x)
		sx.cfg = append(sx.cfg, l.at(r, -1))
	}
	vertex(c)
	for _, d := range st.axes {
		size := l.size(d)
		off := int(math.Round(0.25 * float64(size-1)))
		if off < 1 {
			off = 1
		}
		r := append([]int(nil), c...)
		if 2*c[d] <= size-1 {
			r[d] = clampInt(c[d]+off, 0, size-1)
		} else {
			r[d] = clampInt(c[d]-off, 0, size-1)
		}
		vertex(r)
	}
	st.simplex = sx
	for _, i := range sx.cfg {
		if st.t.fresh(i) {
			out = append(out, st.t.propose(i))
		}
	}
	return out, true
}

// startRun starts gonum's Nelder-Mead on the measured initial simplex.
func (st *nmState) startRun() {
	sx := st.simplex
	st.simplex = nil
	st.stalls = 0
	dim := st.dims()
	if dim == 0 {
		// Only named parameters vary (or none): nothing for a simplex
		// to move along. The polish walks the named alternatives.
		for _, i := range sx.cfg {
			st.noteRunBest(i)
		}
		st.stopRun()
		return
	}
	values := make([]float64, len(sx.cfg))
	for k, i := range sx.cfg {
		values[k] = st.objective(i)
		st.noteRunBest(i)
	}
	m := &optimize.NelderMead{InitialVertices: sx.x, InitialValues: values}
	st.run = startNMRun(m, dim, sx.x[0], values[0])
}

// noteRunBest records config i as evaluated by the current run.
func (st *nmState) noteRunBest(i int) {
	if st.t.ok[i] && (st.runBest < 0 || st.t.score[i] < st.t.score[st.runBest]) {
		st.runBest = i
	}
}

// stopRun ends the current gonum run, if any, and records its best config
// as a local optimum for restartPoint.
func (st *nmState) stopRun() {
	if st.run != nil {
		st.run.stop()
		st.run = nil
	}
	if st.runBest >= 0 {
		st.polish, st.polishList = st.runBest, nil
		st.runBest = -1
	}
	st.pending = -1
}

// polishStep finishes a stalled run on the lattice: Nelder-Mead's simplex
// shrinks between lattice points and stalls near, not at, a local optimum,
// so the run's best config is polled one step along each parameter, then
// along the trades between two parameters (lattice.trades), first
// improvement, one trial at a time, until none of those is better. That
// config is the run's local optimum. It returns the config to measure next,
// or nil when the polish moved or ended.
func (st *nmState) polishStep() []space.Config {
	l := st.t.lat
	if st.polishList == nil {
		st.polishPos = 0
		st.polishList = st.t.pollOrder(append(l.neighbours(st.polish, 1, 0), l.trades(st.polish)...))
	}
	for st.polishPos < len(st.polishList) {
		i := st.polishList[st.polishPos]
		if st.t.seen[i] {
			st.polishPos++
			if st.t.value(i) < st.t.value(st.polish) {
				st.polish, st.polishList = i, nil
				return nil
			}
			continue
		}
		if st.t.fresh(i) {
			return []space.Config{st.t.propose(i)}
		}
		st.polishPos++
	}
	st.optima = append(st.optima, st.polish)
	st.polish, st.polishList = -1, nil
	return nil
}

// nmRun is one gonum optimize.Method run, driven through its channel
// protocol with a single task: the method sends a task on op, and waits on
// res for it to come back. Between Next calls the run always holds one
// task (the evaluation it waits for), so Run is parked on res.
type nmRun struct {
	op   chan optimize.Task
	res  chan optimize.Task
	done chan struct{}
	held optimize.Task
	has  bool
}

func startNMRun(m optimize.Method, dim int, x0 []float64, f0 float64) *nmRun {
	tasks := m.Init(dim, 1)
	if tasks != 1 {
		panic("strategy: gonum method wants more than one task")
	}
	r := &nmRun{op: make(chan optimize.Task, 1), res: make(chan optimize.Task, 1), done: make(chan struct{})}
	loc := &optimize.Location{X: append([]float64(nil), x0...), F: f0}
	go func() {
		defer close(r.done)
		m.Run(r.op, r.res, []optimize.Task{{Op: optimize.FuncEvaluation, Location: loc}})
	}()
	return r
}

// next receives the method's next task and holds it; ok=false when the
// method has finished on its own.
func (r *nmRun) next() (optimize.Task, bool) {
	t, ok := <-r.op
	r.held, r.has = t, ok
	return t, ok
}

// reply sends a held task back unchanged.
func (r *nmRun) reply(t optimize.Task) {
	r.has = false
	r.res <- t
}

// answer completes the held evaluation with value f.
func (r *nmRun) answer(f float64) {
	t := r.held
	t.F = f
	r.reply(t)
}

// stop tells the method the optimization is over, the way Minimize does:
// a PostIteration on res, then res closed, then op drained until the
// method closes it and Run returns.
func (r *nmRun) stop() {
	select {
	case <-r.done:
		return
	default:
	}
	r.res <- optimize.Task{Op: optimize.PostIteration}
	close(r.res)
	for range r.op {
	}
	<-r.done
}

package strategy

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// TestCholeskySolves: L L^T rebuilds the matrix and cholSolve inverts it;
// a matrix that is not positive definite is refused.
func TestCholeskySolves(t *testing.T) {
	for _, c := range []struct {
		name string
		a    [][]float64
		ok   bool
	}{
		{"identity", [][]float64{{1, 0}, {0, 1}}, true},
		{"correlated", [][]float64{{4, 2, 0.4}, {2, 5, 1}, {0.4, 1, 3}}, true},
		{"singular", [][]float64{{1, 1}, {1, 1}}, false},
		{"indefinite", [][]float64{{1, 2}, {2, 1}}, false},
	} {
		l, ok := cholesky(c.a)
		if ok != c.ok {
			t.Errorf("%s: positive definite %v, want %v", c.name, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		n := len(c.a)
		for i := range n {
			for j := range n {
				s := 0.0
				for k := range n {
					s += l[i][k] * l[j][k]
				}
				if math.Abs(s-c.a[i][j]) > 1e-12 {
					t.Errorf("%s: (L L^T)[%d][%d] = %g, want %g", c.name, i, j, s, c.a[i][j])
				}
			}
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = float64(i + 1)
		}
		x := cholSolve(l, b)
		for i := range n {
			s := 0.0
			for j := range n {
				s += c.a[i][j] * x[j]
			}
			if math.Abs(s-b[i]) > 1e-9 {
				t.Errorf("%s: (A x)[%d] = %g, want %g", c.name, i, s, b[i])
			}
		}
	}
}

// TestGPFindsTheBowlsBottom: fitted to a spread sample of the bowl that
// leaves out its bottom, the process ranks an unmeasured config within one
// step (per parameter) of the bottom best, and predicts the measured
// configs close to their scores.
func TestGPFindsTheBowlsBottom(t *testing.T) {
	l := bowl()
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	opt := []int{4, 1, 3, 6}
	tr := newTracker(lat)
	s := newSampler(len(lat.valid), 1)
	for n := 0; n < 30; {
		i := s.next(&tr)
		if i < 0 {
			t.Fatal("sampler ran out")
		}
		far := false
		for d, v := range lat.idx[i] {
			far = far || absInt(v-opt[d]) > 1
		}
		if !far {
			tr.proposed[i] = true // never measured: the bottom stays unknown
			continue
		}
		tr.seen[i] = true
		tr.setOK(i, l.Lookup(lat.valid[i]).ScoreUS)
		n++
	}
	g := fitGP(&tr)
	if g == nil {
		t.Fatal("no fit")
	}
	for _, i := range g.x {
		mean, _ := g.predict(i)
		if got, want := g.mu+g.sd*mean, math.Log(tr.score[i]); math.Abs(got-want) > 0.3*g.sd {
			t.Errorf("config %v: predicted log score %.4f, measured %.4f", lat.idx[i], got, want)
		}
	}
	for i := range lat.valid {
		tr.proposed[i] = tr.seen[i] // the bottom's neighbours are fresh again
	}
	pick := gpPick(&tr, false)
	if pick < 0 {
		t.Fatal("no pick")
	}
	for d, v := range lat.idx[pick] {
		if absInt(v-opt[d]) > 1 {
			t.Fatalf("the process picks %v, the bottom is %v", lat.idx[pick], opt)
		}
	}
}

// TestGPPolishPick: the bowl's bottom is one step from each of the two
// best measured configs along different parameters (a run one step short
// on two at once); the polish pick is the bottom. Once the bottom and its
// step neighbours are measured, no neighbour is expected to beat it and
// there is no pick.
func TestGPPolishPick(t *testing.T) {
	l := bowl()
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	opt := []int{4, 1, 3, 6}
	at := func(delta ...int) int {
		r := slices.Clone(opt)
		for d := range r {
			r[d] += delta[d]
		}
		i, ok := lat.lookup(r)
		if !ok {
			t.Fatalf("%v is off the lattice", r)
		}
		return i
	}
	tr := newTracker(lat)
	measure := func(delta ...int) {
		i := at(delta...)
		tr.seen[i] = true
		tr.setOK(i, l.Lookup(lat.valid[i]).ScoreUS)
	}
	if got := gpPick(&tr, true); got >= 0 {
		t.Fatalf("pick %v with nothing measured, want none", lat.idx[got])
	}
	for _, d := range [][]int{{-1, 0, 0, 0}, {0, -1, 0, 0}, {-1, -1, 0, 0}, {-2, 0, 0, 0}, {0, -1, -1, 0}, {-1, 0, 0, 1}} {
		measure(d...)
	}
	if got, want := fitGP(&tr).polish(&tr), at(0, 0, 0, 0); got != want {
		t.Fatalf("polish pick %v, want the bottom %v", lat.idx[got], opt)
	}
	measure(0, 0, 0, 0)
	for _, d := range [][]int{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, 1}, {0, 0, 0, -1}} {
		measure(d...)
	}
	if got := fitGP(&tr).polish(&tr); got >= 0 {
		t.Fatalf("polish pick %v beside the measured bottom, want none", lat.idx[got])
	}
}

// TestBanditGPOutside: above a tiny budget and up to banditGPOutside
// trials the bandit's picks outside the UCB family are the Gaussian
// process's (fourteenth fit); at a tiny budget the process takes every
// step instead, and above the cap the forest keeps them. A pick outside
// the family is then exactly gpPick's.
func TestBanditGPOutside(t *testing.T) {
	l := syntheticLandscape("noisy", 1) // 1,990 valid configs
	for _, c := range []struct {
		budget      int
		gpOutside   bool // the process picks outside the family below the budget
		tinyGPSteps bool
	}{
		{10, false, true},
		{banditGPOutside, true, false},
		{banditGPOutside + 1, false, false},
		{len(l.Valid) / 10, false, false},
	} {
		s, err := New(Bandit, l.Problem(c.budget, 1))
		if err != nil {
			t.Fatal(err)
		}
		b := s.(*bandit)
		gpOutside := b.model.gpOutsideBelow > 0
		if gpOutside != c.gpOutside || (b.gpEvery > 0) != c.tinyGPSteps {
			t.Errorf("budget %d: gpOutside %v, gp steps %v; want %v, %v", c.budget, gpOutside, b.gpEvery > 0, c.gpOutside, c.tinyGPSteps)
		}
		s.Close()
	}
	// Drive one to 40 trials, then ask for a pick outside the UCB family.
	s, err := New(Bandit, l.Problem(banditGPOutside, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.(*bandit)
	var history []Observation
	driveTo := func(n int) {
		history = driveUntil(t, l, s, history, n)
		b.t.ingest(history)
	}
	driveTo(40)
	b.model.picks = 0 // the next pick is outside the family (every banditEvery-th is in it)
	want := gpPickFrom(&b.t, fitGPSkipping(&b.t, gpOutsideSkipsFailed), false)
	if want < 0 {
		t.Fatal("the process has no pick")
	}
	if got := b.model.pickFor(&b.t, true); got != want {
		t.Errorf("pick outside the UCB family = %d, want the process's %d", got, want)
	}

	// Past the budget (a host asking for more), the forest picks again:
	// the process's fit costs the cube of the configs measured, and a
	// drive to the whole space took CI's contract test from seconds to
	// minutes with it.
	driveTo(banditGPOutside + 20)
	forestPick := func(gpBelow int) int {
		b.model.picks, b.model.gpOutsideBelow = 0, gpBelow
		b.model.rng = rand.New(rand.NewSource(7)) // the same Thompson draw for both
		return b.model.pickFor(&b.t, true)
	}
	got, forest := forestPick(banditGPOutside), forestPick(0)
	if gp := gpPickFrom(&b.t, fitGPSkipping(&b.t, gpOutsideSkipsFailed), false); gp == forest {
		t.Fatalf("at %d trials the process and the forest pick alike (%d): the check below cannot tell them apart", b.t.used, gp)
	}
	if got != forest {
		t.Errorf("pick outside the UCB family at %d trials, past the budget of %d = %d, want the forest's %d", b.t.used, banditGPOutside, got, forest)
	}
}

// TestGPKernelTable: the kernel's looked-up squared distances give, bit for
// bit, what its formula gives (so a table changes no pick): over every
// pair of a sample of a mixed space's configs, at each length scale.
func TestGPKernelTable(t *testing.T) {
	l := syntheticLandscape("noisy", 1) // a named family and ordered sizes
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	formula := func(a, b int, ell, rho float64) float64 {
		k, r2 := 1.0, 0.0
		for _, d := range lat.free {
			ia, ib := lat.idx[a][d], lat.idx[b][d]
			if lat.categorical(d) {
				if ia != ib {
					k *= rho
				}
				continue
			}
			dx := float64(ia-ib) / float64(lat.size(d)-1) / ell
			r2 += float64(dx * dx)
		}
		return k * math.Exp(-r2/2)
	}
	step := max(1, len(lat.valid)/97)
	pairs := 0
	for _, ell := range gpEllGrid {
		g := newGPFit(lat, ell, 0.5)
		for a := 0; a < len(lat.valid); a += step {
			for b := 0; b < len(lat.valid); b += step {
				if got, want := g.kernel(a, b), formula(a, b, ell, 0.5); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("ell %g, configs %d and %d: kernel %v, formula %v", ell, a, b, got, want)
				}
				pairs++
			}
		}
	}
	if pairs < 1000 {
		t.Fatalf("only %d pairs compared", pairs)
	}
}

// TestGPSkippingFailed: fitted with skipFailed, the process holds the
// configs that passed only; without, every measured one (the failed at a
// penalty). The bandit's picks outside the UCB family use the first
// (gpOutsideSkipsFailed, seventeenth fit), checked by TestBanditGPOutside.
func TestGPSkippingFailed(t *testing.T) {
	l := syntheticLandscape("invalid", 5) // 8% of configs fail, 2% crash
	s, err := New(Bandit, l.Problem(60, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.(*bandit)
	history := driveUntil(t, l, s, nil, 60)
	b.t.ingest(history)
	passed := 0
	for _, o := range history {
		if o.OK {
			passed++
		}
	}
	if passed == len(history) {
		t.Fatal("no trial failed: the check below cannot tell the fits apart")
	}
	if g := fitGPSkipping(&b.t, true); len(g.x) != passed {
		t.Errorf("skipping failed: %d configs in the fit, want the %d that passed", len(g.x), passed)
	}
	if g := fitGP(&b.t); len(g.x) != len(history) {
		t.Errorf("counting failed: %d configs in the fit, want all %d measured", len(g.x), len(history))
	}
}

// driveUntil measures s's proposals on l after history until n trials are
// used, and returns the history.
func driveUntil(t *testing.T, l Landscape, s Strategy, history []Observation, n int) []Observation {
	t.Helper()
	for len(history) < n {
		batch := s.Next(history)
		if len(batch) == 0 {
			t.Fatal("no config proposed")
		}
		for _, c := range batch {
			history = append(history, l.Lookup(c))
		}
	}
	return history
}

// TestBoxCox: the transform is standardised; scores alike in every
// respect keep the log (lambda 0 wins a tie); a slow outlier among close
// scores is compressed (lambda below 0), so the close scores spread over
// more of the standardised scale than under the log.
func TestBoxCox(t *testing.T) {
	logs := func(s ...float64) []float64 {
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = math.Log(v)
		}
		return out
	}
	if _, lam := boxCox(logs(5, 5, 5)); lam != 0 {
		t.Errorf("equal scores: lambda %g, want 0", lam)
	}
	y := logs(100, 101, 102, 103, 104, 300)
	z, lam := boxCox(y)
	if lam >= 0 {
		t.Errorf("a slow outlier: lambda %g, want below 0", lam)
	}
	mu, sd := 0.0, 0.0
	for _, v := range z {
		mu += v
	}
	mu /= float64(len(z))
	for _, v := range z {
		sd += (v - mu) * (v - mu)
	}
	if sd = math.Sqrt(sd / float64(len(z))); math.Abs(mu) > 1e-9 || math.Abs(sd-1) > 1e-9 {
		t.Errorf("transform's mean %g and sd %g, want 0 and 1", mu, sd)
	}
	// The log's standardisation, for comparison.
	lmu, lsd := 0.0, 0.0
	for _, v := range y {
		lmu += v
	}
	lmu /= float64(len(y))
	for _, v := range y {
		lsd += (v - lmu) * (v - lmu)
	}
	lsd = math.Sqrt(lsd / float64(len(y)))
	if got, log := z[4]-z[0], (y[4]-y[0])/lsd; got <= log {
		t.Errorf("the close scores span %g, %g under the log: want more", got, log)
	}
}

// TestGPPickBoxCox: with gpBoxCox the tiny budgets' process is fitted to
// the transform (its lambda recorded), and fitGP keeps the log.
func TestGPPickBoxCox(t *testing.T) {
	l := bowl()
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	tr := newTracker(lat)
	s := newSampler(len(lat.valid), 3)
	for range 8 {
		i := s.next(&tr)
		tr.seen[i] = true
		tr.setOK(i, l.Lookup(lat.valid[i]).ScoreUS)
	}
	var y []float64
	for i, seen := range tr.seen {
		if seen {
			y = append(y, math.Log(tr.score[i]))
		}
	}
	_, want := boxCox(y)
	if g := fitGPWith(&tr, false, true); g == nil || g.lambda != want {
		t.Fatalf("transformed fit's lambda %v, want %g", g, want)
	}
	if g := fitGP(&tr); g == nil || g.lambda != 0 {
		t.Fatal("fitGP transforms the scores")
	}
	old := gpBoxCox
	defer func() { gpBoxCox = old }()
	for _, on := range []bool{false, true} {
		gpBoxCox = on
		if got, want := gpPick(&tr, false), gpPickFrom(&tr, fitGPWith(&tr, false, on), false); got != want || got < 0 {
			t.Fatalf("gpBoxCox %v: gpPick %d, want %d", on, got, want)
		}
	}
}

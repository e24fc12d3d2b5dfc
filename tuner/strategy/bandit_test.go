package strategy

import (
	"math"
	"slices"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestBanditFamily checks the UCB1 choice over families on a small space
// of three algorithms (families) and one size: which family the bandit
// sends its next pick to, given what was measured in each.
func TestBanditFamily(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a", "b", "c"), rangeParam("size", 32)}
	l := synth("families", sp, func(idx []int) outcome { return outcome{"ok", 100} })
	// scores[f] lists the scores measured in family f (sizes 0, 1, ...).
	cases := []struct {
		name   string
		c      float64
		scores [][]float64
		want   string // the family chosen, "" for none
	}{
		{"no exploration: the best family", 0, [][]float64{{120, 130}, {100, 110}, {140}}, "b"},
		{"a family never measured counts as 2.7x slow: not yet", 0.8, [][]float64{{100, 101, 102, 103, 104}, {105, 106, 107, 108}, nil}, "a"},
		{"a family never measured, once the others are well known", 0.8, [][]float64{series(100, 30), series(105, 30), nil}, "c"},
		{"a little-measured close family before a well-measured best one", 0.8, [][]float64{{100, 101, 102, 103, 104, 105, 106}, {104}, {200, 201, 202, 203}}, "b"},
		{"far too slow for its bonus", 0.1, [][]float64{{100, 101}, {100, 102}, {300}}, "a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func(c float64) { banditC = c }(banditC)
			banditC = tc.c
			lat, err := newLattice(l.Problem(0, 1))
			if err != nil {
				t.Fatal(err)
			}
			tr := newTracker(lat)
			var hist []Observation
			for f, scores := range tc.scores {
				for k, s := range scores {
					c := space.Config{"algorithm": sp[0].Values[f], "size": sp[1].Values[k]}
					hist = append(hist, Observation{Config: c, ScoreUS: s, OK: true})
				}
			}
			tr.ingest(hist)
			m := newModel(lat, 1)
			m.families = lat.families()
			f := m.banditFamily(&tr)
			got := ""
			if f >= 0 {
				got = lat.valid[m.families.members[f][0]]["algorithm"].Str
			}
			if got != tc.want {
				t.Errorf("chose %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFarPick checks the far picks (banditFar): in the family chosen (one
// algorithm here, so the best config's), the fresh size farthest from
// every measured one, kept up to date as measurements arrive.
func TestFarPick(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a"), rangeParam("size", 9)}
	l := synth("far", sp, func(idx []int) outcome { return outcome{"ok", 100} })
	cases := []struct {
		name     string
		measured [][]int // batches of sizes, each ingested before a pick
		want     []int   // the size picked after each batch
	}{
		{"one end measured: the other end", [][]int{{0}}, []int{8}},
		{"both ends: the middle", [][]int{{0, 8}}, []int{4}},
		{"updated batch by batch", [][]int{{4}, {0}, {8}}, []int{0, 8, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lat, tr, m := lineModel(t, l)
			var hist []Observation
			for k, batch := range tc.measured {
				for _, size := range batch {
					c := space.Config{"algorithm": sp[0].Values[0], "size": sp[1].Values[size]}
					hist = append(hist, Observation{Config: c, ScoreUS: 100, OK: true})
				}
				tr.ingest(hist)
				i := m.farPick(&tr)
				if i < 0 {
					t.Fatalf("batch %d: no pick", k)
				}
				if got := lat.idx[i][1]; got != tc.want[k] {
					t.Errorf("batch %d: picked size %d, want %d", k, got, tc.want[k])
				}
			}
		})
	}
}

// TestGPApartPick checks the process's picks kept apart from the measured
// configs (banditGPApart): only fresh sizes at least apart steps from
// every measured one, -1 when there is none, the plain pick at 1.
func TestGPApartPick(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a"), rangeParam("size", 9)}
	l := synth("apart", sp, func(idx []int) outcome { return outcome{"ok", 100 - 5*float64(idx[1])} })
	cases := []struct {
		name     string
		measured []int
		apart    int
		want     []int // the sizes the pick may be (nil: -1)
	}{
		{"every other size: the one 2 away", []int{0, 2, 4, 6}, 2, []int{8}},
		{"none 3 away", []int{0, 2, 4, 6}, 3, nil},
		{"ends and middle: a size 2 from each", []int{0, 4, 8}, 2, []int{2, 6}},
		{"1: the plain pick", []int{0, 2, 4, 6}, 1, []int{-1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lat, tr, m := lineModel(t, l)
			var hist []Observation
			for _, size := range tc.measured {
				c := space.Config{"algorithm": sp[0].Values[0], "size": sp[1].Values[size]}
				hist = append(hist, l.Lookup(c))
			}
			tr.ingest(hist)
			g := fitGPSkipping(&tr, true)
			if g == nil {
				t.Fatal("no process fitted")
			}
			defer func(v int) { banditGPApart = v }(banditGPApart)
			banditGPApart = tc.apart
			i := m.gpApartPick(&tr, g)
			switch {
			case tc.want == nil:
				if i >= 0 {
					t.Errorf("picked size %d, want none", lat.idx[i][1])
				}
			case tc.want[0] < 0:
				if want := gpPickFrom(&tr, g, false); i != want {
					t.Errorf("picked %d, want the plain pick %d", i, want)
				}
			case i < 0:
				t.Errorf("no pick, want one of sizes %v", tc.want)
			case !slices.Contains(tc.want, lat.idx[i][1]):
				t.Errorf("picked size %d, want one of %v", lat.idx[i][1], tc.want)
			}
		})
	}
}

// TestSyntheticLandscapes checks the generator: the same kind and seed
// give the same landscape, another seed another one, and each kind has
// the structure its name promises.
func TestSyntheticLandscapes(t *testing.T) {
	for _, kind := range synthKinds {
		t.Run(kind, func(t *testing.T) {
			a, b := syntheticLandscape(kind, 7), syntheticLandscape(kind, 7)
			if len(a.Valid) != len(b.Valid) || a.Path != b.Path {
				t.Fatalf("seed 7 twice: %d and %d valid configs", len(a.Valid), len(b.Valid))
			}
			for _, c := range a.Valid {
				if oa, ob := a.Lookup(c), b.Lookup(c); oa.OK != ob.OK || oa.ScoreUS != ob.ScoreUS {
					t.Fatalf("seed 7 twice: %s differs", c.Key())
				}
			}
			if len(a.Valid) >= a.Space.Size() {
				t.Errorf("no invalid config in %d", a.Space.Size())
			}
			opt, ok := a.Optimum()
			if !ok {
				t.Fatal("nothing passed")
			}
			// Per family (the first parameter): its best and median.
			fam := a.Space.Params[0].Name
			byFam := map[string][]float64{}
			for _, c := range a.Valid {
				if o := a.Lookup(c); o.OK {
					byFam[c[fam].Str] = append(byFam[c[fam].Str], o.ScoreUS)
				}
			}
			if len(byFam) < 4 {
				t.Errorf("%d families, want 4 or more", len(byFam))
			}
			best := byFam[opt.Config[fam].Str]
			switch kind {
			case "deceptive":
				// The optimum's family is slow on the whole, and another
				// family comes within 10% of the optimum without reaching 3%.
				if med := median(best); med < 1.25*opt.ScoreUS {
					t.Errorf("the optimum's family has median %.1f, %.2fx the optimum: not deceptive", med, med/opt.ScoreUS)
				}
				close := false
				for f, s := range byFam {
					m := minOf(s)
					if f != opt.Config[fam].Str && m < 1.10*opt.ScoreUS {
						close = true
					}
				}
				if !close {
					t.Error("no other family within 10% of the optimum: nothing to deceive")
				}
			case "slowdefault":
				// Measured at the centre of its sizes (as the first pass
				// does), the best family is at least 20% slow.
				var sizes []int
				for d := 2; d < len(a.Space.Params); d++ {
					sizes = append(sizes, len(a.Space.Params[d].Values))
				}
				centre := space.Config{fam: opt.Config[fam], "graph": opt.Config["graph"]}
				for d, n := range sizes {
					p := a.Space.Params[d+2]
					centre[p.Name] = p.Values[(n-1)/2]
				}
				if o := a.Lookup(centre); o.OK && o.ScoreUS < 1.2*opt.ScoreUS {
					t.Errorf("centre %s is %.2fx the optimum, want 1.2x or more", centre.Key(), o.ScoreUS/opt.ScoreUS)
				}
			}
			c := syntheticLandscape(kind, 8)
			if c.Path == a.Path {
				t.Errorf("seeds 7 and 8 both make %s", a.Path)
			}
		})
	}
}

// series is n scores from first up, one apart.
func series(first float64, n int) []float64 {
	var s []float64
	for i := range n {
		s = append(s, first+float64(i))
	}
	return s
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

// TestCornerProbes checks the bandit's first pass at a tiny budget (10
// trials of a 192-config all-reduce-like space): the default and the value
// cover, then two corner probes in the class of the best config so far,
// each at an end of every size's range. (The class's centre is off the
// middle of an even range, so one corner is the farthest and the probes
// are the same on every seed: see pattern.cornerProbe.)
func TestCornerProbes(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a", "b", "c", "d"), intParam("graph", 0, 1), rangeParam("chunk", 6), rangeParam("threads", 4)}
	// b is best at its centre; every size is a gentle bowl.
	l := synth("corners", sp, func(idx []int) outcome {
		s := 100 + 20*math.Abs(float64(idx[0]-1)) + float64((idx[2]-2)*(idx[2]-2)+(idx[3]-1)*(idx[3]-1))
		return outcome{"ok", s}
	})
	for seed := int64(1); seed <= 8; seed++ {
		s, err := New(Bandit, l.Problem(10, seed))
		if err != nil {
			t.Fatal(err)
		}
		first := s.Next(nil)
		var hist []Observation
		for _, c := range first {
			hist = append(hist, l.Lookup(c))
		}
		if len(first) > 1+len(sp[0].Values) {
			t.Fatalf("seed %d: first pass of %d configs, want the default and the value cover only", seed, len(first))
		}
		for k := range 2 {
			next := s.Next(hist)
			if len(next) != 1 {
				t.Fatalf("seed %d: probe %d: %d configs, want 1", seed, k+1, len(next))
			}
			c := next[0]
			if c["algorithm"].Str != "b" {
				t.Errorf("seed %d: probe %d in %s, want the best class b", seed, k+1, c.Key())
			}
			if ch, th := c["chunk"].Int, c["threads"].Int; (ch != 0 && ch != 5) || (th != 0 && th != 3) {
				t.Errorf("seed %d: probe %d at %s, not a corner of the sizes", seed, k+1, c.Key())
			}
			hist = append(hist, l.Lookup(c))
		}
		s.Close()
	}
}

// TestFamilyStep checks a pull of a family's arm (banditFamLocal): the
// fresh config one move from that family's best measured config (not the
// best overall, in another family) that the fit ranks best, never a config
// of another family or one further away however well ranked, and none once
// every move is measured.
func TestFamilyStep(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a", "b"), rangeParam("size", 8), rangeParam("block", 4)}
	l := synth("arms", sp, func(idx []int) outcome { return outcome{"ok", 100} })
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	at := func(alg, size, block int) int {
		i, ok := lat.lookup([]int{alg, size, block})
		if !ok {
			t.Fatalf("no config %d,%d,%d", alg, size, block)
		}
		return i
	}
	// Family a holds the best overall at (1, 1); family b's best is (5, 2).
	measured := map[int]float64{at(0, 1, 1): 100, at(1, 5, 2): 120, at(1, 0, 0): 150, at(1, 7, 3): 160}
	// The fit ranks family a's copy of b's best, and a far config of b,
	// above every move; among the moves, (6, 2) and then the trade (4, 3).
	predicted := make([]float64, len(lat.valid))
	for i := range predicted {
		predicted[i] = 10
	}
	predicted[at(0, 5, 2)], predicted[at(1, 2, 0)] = -5, -4
	predicted[at(1, 6, 2)], predicted[at(1, 4, 3)] = 1, 2
	moves := []int{at(1, 4, 2), at(1, 6, 2), at(1, 5, 1), at(1, 5, 3), at(1, 4, 3), at(1, 6, 1)}
	cases := []struct {
		name  string
		alsoM []int // moves measured too (slower than the family's best)
		want  int
	}{
		{"the best-ranked move", nil, at(1, 6, 2)},
		{"the best-ranked fresh move: a trade", []int{at(1, 6, 2)}, at(1, 4, 3)},
		{"every move measured", moves, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker(lat)
			var hist []Observation
			for i, s := range measured {
				hist = append(hist, Observation{Config: lat.valid[i], ScoreUS: s, OK: true})
			}
			for _, i := range tc.alsoM {
				hist = append(hist, Observation{Config: lat.valid[i], ScoreUS: 130, OK: true})
			}
			tr.ingest(hist)
			m := newModel(lat, 1)
			m.families = lat.families()
			m.predicted = predicted
			got := m.familyStep(&tr, m.families.of[at(1, 5, 2)])
			if got != tc.want {
				name := func(i int) string {
					if i < 0 {
						return "none"
					}
					return pointText(lat.idx[i])
				}
				t.Errorf("picked %s, want %s", name(got), name(tc.want))
			}
		})
	}
}

// lineModel is the lattice, tracker and model of landscape l's first
// problem, as the pick tests start them.
func lineModel(t *testing.T, l Landscape) (*lattice, tracker, *model) {
	t.Helper()
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(lat, 1)
	m.families = lat.families()
	return lat, newTracker(lat), m
}

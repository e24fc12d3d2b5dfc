package strategy

import (
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestTinyClassesDefaultCentre: with tinyClasses, a tenth of a 190-config
// space (19 trials, 4 x dims and more) measures the centre of the
// default's family in its first pass, beside the default at a corner; a
// twentieth (10 trials) and the knob off do not.
func TestTinyClassesDefaultCentre(t *testing.T) {
	l := syntheticLandscape("interact", 952) // a 190-config all-reduce space
	if len(l.Valid) > difficultyMaxValid {
		t.Fatalf("%s: %d configs, want a 190-config space", l.Path, len(l.Valid))
	}
	for _, tc := range []struct {
		on     bool
		budget int
		want   bool
	}{
		{false, 19, false}, {true, 19, true}, {true, 10, false},
	} {
		defer func(v bool) { tinyClasses = v }(tinyClasses)
		tinyClasses = tc.on
		s, err := New(Bandit, l.Problem(tc.budget, 1))
		if err != nil {
			t.Fatal(err)
		}
		p := s.(*bandit).pattern
		lat := p.t.lat
		first := s.Next(nil)
		fs := lat.families()
		centre := -1
		{
			tr := newTracker(lat)
			centre = lat.centreOf(fs.members[fs.of[lat.def]], &tr)
		}
		if centre == lat.def {
			t.Fatalf("the default %v is its family's centre", lat.idx[lat.def])
		}
		got := false
		for _, c := range first {
			if lat.byKey[configKey(c)] == centre {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("knob %v, budget %d: the first pass (%d configs) measures the default's centre %v: %v, want %v",
				tc.on, tc.budget, len(first), lat.idx[centre], got, tc.want)
		}
	}
}

// TestTinyClassesRho: with tinyClasses the tiny budgets' process chooses
// rho by the marginal likelihood from tinyRhoGrid: two classes whose sizes
// slope opposite ways share little (rho 0.2 fits better), two alike share
// much (0.5); off, rho is 0.5 either way.
func TestTinyClassesRho(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a", "b"), rangeParam("size", 6)}
	for _, tc := range []struct {
		name     string
		opposite bool
		on       bool
		want     float64
	}{
		{"opposite slopes", true, true, 0.2},
		{"alike", false, true, 0.5},
		{"opposite slopes, off", true, false, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := synth("rho", sp, func(idx []int) outcome {
				x := float64(idx[1])
				if tc.opposite && idx[0] == 1 {
					x = 5 - x
				}
				return outcome{"ok", 100 + 20*x}
			})
			lat, err := newLattice(l.Problem(12, 1))
			if err != nil {
				t.Fatal(err)
			}
			tr := newTracker(lat)
			var hist []Observation
			for _, c := range l.Valid {
				hist = append(hist, l.Lookup(c))
			}
			tr.ingest(hist)
			defer func(v bool) { tinyClasses = v }(tinyClasses)
			tinyClasses = tc.on
			g := tinyGPFit(&tr)
			if g == nil {
				t.Fatal("no process fitted")
			}
			if g.rho != tc.want {
				t.Errorf("rho %g, want %g", g.rho, tc.want)
			}
		})
	}
}

package strategy

import (
	"fmt"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestTinyEllSets: the grid of length scales is gpEllGrid's alone unless
// tinyARD is on and tinyARDMin configs per free parameter are measured;
// then one scale per ordered parameter, every combination, and a
// categorical parameter's first (unused) scale.
func TestTinyEllSets(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a", "b"), rangeParam("x", 4), rangeParam("y", 4)}
	l := synth("ells", sp, func(idx []int) outcome { return outcome{"ok", 100 + float64(idx[1]+idx[2])} })
	for _, tc := range []struct {
		name     string
		on       bool
		measured int
		want     int // sets; 0: nil
	}{
		{"off", false, 32, 0},
		{"on, too few", true, tinyARDMin*3 - 1, 0},
		{"on", true, tinyARDMin * 3, len(gpEllGrid) * len(gpEllGrid)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lat, err := newLattice(l.Problem(12, 1))
			if err != nil {
				t.Fatal(err)
			}
			tr := newTracker(lat)
			var hist []Observation
			for _, c := range l.Valid[:tc.measured] {
				hist = append(hist, l.Lookup(c))
			}
			tr.ingest(hist)
			defer func(v bool) { tinyARD = v }(tinyARD)
			tinyARD = tc.on
			sets := tinyEllSets(&tr)
			if tc.want == 0 {
				if sets != nil {
					t.Fatalf("%d sets, want nil", len(sets))
				}
				return
			}
			if len(sets) != tc.want {
				t.Fatalf("%d sets, want %d", len(sets), tc.want)
			}
			seen := map[[2]float64]bool{}
			for _, s := range sets {
				if len(s) != len(lat.free) {
					t.Fatalf("set %v: want one scale per free parameter (%d)", s, len(lat.free))
				}
				for k, d := range lat.free {
					if lat.categorical(d) && s[k] != gpEllGrid[0] {
						t.Errorf("set %v: categorical scale %g, want %g", s, s[k], gpEllGrid[0])
					}
				}
				seen[[2]float64{s[1], s[2]}] = true
			}
			if len(seen) != tc.want {
				t.Errorf("%d distinct sets, want %d", len(seen), tc.want)
			}
		})
	}
}

// TestTinyARDScales: with tinyARD, a parameter the score runs flat along
// takes a longer length scale than one it climbs steeply along; off,
// both share one.
func TestTinyARDScales(t *testing.T) {
	sp := []space.Param{strParam("algorithm", "a", "b"), rangeParam("steep", 6), rangeParam("flat", 6)}
	l := synth("ard", sp, func(idx []int) outcome {
		x := float64(idx[1]) - 2.5
		return outcome{"ok", 100 * (1 + 0.1*x*x + 0.001*float64(idx[2]))}
	})
	for _, on := range []bool{false, true} {
		lat, err := newLattice(l.Problem(12, 1))
		if err != nil {
			t.Fatal(err)
		}
		tr := newTracker(lat)
		var hist []Observation
		for k, c := range l.Valid {
			if k%3 == 0 {
				hist = append(hist, l.Lookup(c))
			}
		}
		tr.ingest(hist)
		defer func(v bool) { tinyARD = v }(tinyARD)
		tinyARD = on
		g := tinyGPFit(&tr)
		if g == nil {
			t.Fatal("no process fitted")
		}
		// The ordered terms' squared scaled distance of one step: larger
		// for a shorter length scale.
		steep, flat := g.dims[1].sq[g.dims[1].off+1], g.dims[2].sq[g.dims[2].off+1]
		if on && !(steep > flat) {
			t.Errorf("ARD: one step along steep %g, along flat %g; want steep's longer", steep, flat)
		}
		if !on && steep != flat {
			t.Errorf("off: one step along steep %g, along flat %g; want equal", steep, flat)
		}
	}
}

// TestTinyEllSetsBounded: past tinyARDMaxSets combinations (five ordered
// sizes: 243) the process keeps one scale for all, however many configs
// it holds; at four (81) it still gets a scale each.
func TestTinyEllSetsBounded(t *testing.T) {
	for _, tc := range []struct {
		sizes int
		want  int // sets; 0: nil
	}{
		{4, 81},
		{5, 0},
	} {
		t.Run(fmt.Sprintf("%d sizes", tc.sizes), func(t *testing.T) {
			var sp []space.Param
			for i := 0; i < tc.sizes; i++ {
				sp = append(sp, rangeParam(fmt.Sprintf("s%d", i), 3))
			}
			l := synth("bounded", sp, func(idx []int) outcome { return outcome{"ok", 100 + float64(idx[0])} })
			lat, err := newLattice(l.Problem(12, 1))
			if err != nil {
				t.Fatal(err)
			}
			tr := newTracker(lat)
			var hist []Observation
			for _, c := range l.Valid[:tinyARDMin*len(lat.free)] {
				hist = append(hist, l.Lookup(c))
			}
			tr.ingest(hist)
			defer func(v bool) { tinyARD = v }(tinyARD)
			tinyARD = true
			if got := len(tinyEllSets(&tr)); got != tc.want {
				t.Fatalf("%d free parameters: %d sets, want %d", len(lat.free), got, tc.want)
			}
		})
	}
}

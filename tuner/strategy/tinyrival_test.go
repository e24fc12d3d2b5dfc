package strategy

import "testing"

// TestTinyRivalPick: with tinyRival at 0.1, where a tiny budget's first
// pass leaves another class within 10% of the best, one process pick goes
// to that rival class: at a tenth right after the first pass (slowdefault
// seed 135: algorithm 0 at 1.496x the optimum, algorithm 3 at 1.509x), at
// a twentieth after the best class's two corner probes (seed 139); off,
// those trials stay in the best class.
func TestTinyRivalPick(t *testing.T) {
	defer func(v float64) { tinyRival = v }(tinyRival)
	for _, tc := range []struct {
		seed   int64
		gap    float64
		budget int
		// the algorithms of the trials right after the first pass
		want []int
	}{
		{135, 0, 19, []int{0, 0, 0}}, {135, 0.1, 19, []int{3}},
		{139, 0, 10, []int{1, 1, 1}}, {139, 0.1, 10, []int{1, 1, 2}},
	} {
		l := syntheticLandscape("slowdefault", tc.seed) // 190-config all-reduce spaces
		if len(l.Valid) > difficultyMaxValid {
			t.Fatalf("%s: %d configs, want a 190-config space", l.Path, len(l.Valid))
		}
		tinyRival = tc.gap
		s, err := New(Bandit, l.Problem(tc.budget, 1))
		if err != nil {
			t.Fatal(err)
		}
		lat := s.(*bandit).pattern.t.lat
		var history []Observation
		for _, c := range s.Next(nil) {
			history = append(history, l.Lookup(c))
		}
		var got []int
		for range tc.want {
			out := s.Next(history)
			if len(out) != 1 {
				t.Fatalf("seed %d, gap %g, budget %d: %d configs after the first pass, want 1", tc.seed, tc.gap, tc.budget, len(out))
			}
			got = append(got, lat.idx[lat.byKey[configKey(out[0])]][lat.free[0]])
			history = append(history, l.Lookup(out[0]))
		}
		for k := range got {
			if got[k] != tc.want[k] {
				t.Errorf("seed %d, gap %g, budget %d: algorithms after the first pass %v, want %v", tc.seed, tc.gap, tc.budget, got, tc.want)
				break
			}
		}
		s.Close()
	}
}

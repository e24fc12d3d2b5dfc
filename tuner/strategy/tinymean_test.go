package strategy

import (
	"math"
	"testing"
)

// TestClassPrior: under tinyClassMean the prior of a config is its
// class's mean of the measured scores, 0 for a class not measured, and the
// residuals are the scores less it; the classes are the algorithms of a
// 190-config synthetic space.
func TestClassPrior(t *testing.T) {
	defer func(v bool) { tinyClassMean = v }(tinyClassMean)
	tinyClassMean = true
	l := syntheticLandscape("slowdefault", 135)
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	of := lat.classes()
	algo := lat.free[0]
	if !lat.categorical(algo) {
		t.Fatalf("the first free parameter is not named")
	}
	for i := range lat.valid {
		for j := range lat.valid {
			if (of[i] == of[j]) != lat.sameClass(i, j) {
				t.Fatalf("configs %v and %v: same class %v, sameClass %v", lat.idx[i], lat.idx[j], of[i] == of[j], lat.sameClass(i, j))
			}
		}
	}
	// two configs of the first config's class, one of another
	var x []int
	for i := range lat.valid {
		if len(x) < 2 && of[i] == of[0] || len(x) == 2 && of[i] != of[0] {
			x = append(x, i)
		}
	}
	ys := []float64{-1, 0, 0.5}
	res, prior := classPrior(lat, x, ys)
	for i := range lat.valid {
		want := 0.0
		switch of[i] {
		case of[x[0]]:
			want = -0.5
		case of[x[2]]:
			want = 0.5
		}
		if math.Abs(prior[i]-want) > 1e-12 {
			t.Fatalf("config %v: prior %g, want %g", lat.idx[i], prior[i], want)
		}
	}
	for k, want := range []float64{-0.5, 0.5, 0} {
		if math.Abs(res[k]-want) > 1e-12 {
			t.Errorf("residual %d: %g, want %g", k, res[k], want)
		}
	}
}

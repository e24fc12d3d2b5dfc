package strategy

import (
	"math/rand"
	"reflect"
	"testing"
)

// TestForestRanksTheBowlsBottom: fitted to every config of the bowl, the
// forest's best predicted config lies within one step (per parameter) of
// the bowl's bottom.
func TestForestRanksTheBowlsBottom(t *testing.T) {
	l := bowl()
	lat, err := newLattice(l.Problem(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	var x [][]int
	var y []float64
	for i, c := range lat.valid {
		x = append(x, lat.idx[i])
		y = append(y, l.Lookup(c).ScoreUS)
	}
	f := fitForest(x, y, make([]bool, len(lat.sp.Params)), rand.New(rand.NewSource(1)))
	best, bestV := -1, 0.0
	for i := range lat.valid {
		if v, _ := f.predict(lat.idx[i]); best < 0 || v < bestV {
			best, bestV = i, v
		}
	}
	opt := []int{4, 1, 3, 6}
	for d, v := range lat.idx[best] {
		if v-opt[d] > 1 || opt[d]-v > 1 {
			t.Fatalf("forest ranks %v best, the bottom is %v", lat.idx[best], opt)
		}
	}
}

// TestSurrogateIsPatternOnSmallBudgets: below surrogateMinTrials the
// model stays silent, so the surrogate measures what pattern measures.
func TestSurrogateIsPatternOnSmallBudgets(t *testing.T) {
	l, err := LoadLandscape("../testdata/landscape-cuda-allreduce-w4-n32768.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 5; seed++ {
		_, p, err := replay(l, Pattern, surrogateMinTrials, seed)
		if err != nil {
			t.Fatal(err)
		}
		_, s, err := replay(l, Surrogate, surrogateMinTrials, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(keys(p), keys(s)) {
			t.Errorf("seed %d: surrogate %v, pattern %v", seed, keys(s), keys(p))
		}
		// With more trials the model speaks: the runs part.
		_, p, _ = replay(l, Pattern, 2*surrogateMinTrials, seed)
		_, s, _ = replay(l, Surrogate, 2*surrogateMinTrials, seed)
		if reflect.DeepEqual(keys(p), keys(s)) {
			t.Errorf("seed %d: surrogate and pattern agree on %d trials", seed, 2*surrogateMinTrials)
		}
	}
}

package strategy

import (
	"math"
	"math/rand"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestClosestIsTheFullScan: closest's grouped search answers what a scan
// of every valid config in index order does (the first of the nearest),
// ties included, for points on and off the valid configs and every skip.
func TestClosestIsTheFullScan(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 40 {
		params := []int{1 + rng.Intn(6), 1 + rng.Intn(9), 1 + rng.Intn(4), 1 + rng.Intn(7)}[:1+trial%4]
		var sp space.Space
		for d, n := range params {
			sp.Params = append(sp.Params, rangeParam(string(rune('a'+d)), n))
		}
		all := sp.Enumerate()
		var valid = all[:0:0]
		for _, c := range all {
			if rng.Float64() < 0.3 {
				valid = append(valid, c)
			}
		}
		if len(valid) == 0 {
			continue
		}
		l, err := newLattice(Problem{Space: sp, Valid: valid, Default: valid[0]})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range all {
			r, _ := sp.Indices(c)
			for skip := -1; skip < len(l.idx); skip++ {
				want, wantD := -1, math.MaxInt
				for i, ix := range l.idx {
					if i == skip {
						continue
					}
					dist := 0
					for d, v := range ix {
						dist += (v - r[d]) * (v - r[d])
					}
					if dist < wantD {
						want, wantD = i, dist
					}
				}
				if got := l.closest(r, skip); got != want {
					t.Fatalf("trial %d: closest(%v, %d) = %d, want %d", trial, r, skip, got, want)
				}
			}
		}
	}
}

package strategy

import (
	"sort"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestNeighboursTreatNamedValuesAsUnordered: an ordered parameter moves
// step positions either way; every other value of a string parameter is
// one move away, since "the next algorithm in the list" means nothing.
func TestNeighboursTreatNamedValuesAsUnordered(t *testing.T) {
	sp := space.Space{Params: []space.Param{
		{Name: "algorithm", Values: []space.Value{space.Str("a"), space.Str("b"), space.Str("c"), space.Str("d")}},
		{Name: "blocks", Values: []space.Value{space.Int(1), space.Int(2), space.Int(4), space.Int(8), space.Int(16)}},
	}}
	all := sp.Enumerate()
	l, err := newLattice(Problem{Space: sp, Valid: all, Default: all[0]})
	if err != nil {
		t.Fatal(err)
	}
	centre := l.byKey["algorithm=a,blocks=4"]
	tests := []struct {
		step int
		want []string
	}{
		{1, []string{"algorithm=a,blocks=2", "algorithm=a,blocks=8", "algorithm=b,blocks=4", "algorithm=c,blocks=4", "algorithm=d,blocks=4"}},
		{2, []string{"algorithm=a,blocks=1", "algorithm=a,blocks=16", "algorithm=b,blocks=4", "algorithm=c,blocks=4", "algorithm=d,blocks=4"}},
	}
	for _, tc := range tests {
		var got []string
		for _, i := range l.neighbours(centre, tc.step, 0) {
			got = append(got, l.valid[i].String())
		}
		sort.Strings(got)
		if len(got) != len(tc.want) {
			t.Fatalf("step %d: neighbours %v, want %v", tc.step, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("step %d: neighbours %v, want %v", tc.step, got, tc.want)
				break
			}
		}
	}
}

package strategy

import (
	"sort"
	"strings"
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

// TestTrades: one ordered parameter up a step while another goes down,
// for every pair of ordered parameters, never off the lattice, never a
// categorical one, nothing an axis move already reaches; an invalid point
// maps to the nearest valid config.
func TestTrades(t *testing.T) {
	sp := space.Space{Params: []space.Param{
		{Name: "algorithm", Values: []space.Value{space.Str("a"), space.Str("b")}},
		{Name: "blocks", Values: []space.Value{space.Int(1), space.Int(2), space.Int(4)}},
		{Name: "threads", Values: []space.Value{space.Int(128), space.Int(256), space.Int(512)}},
		{Name: "unroll", Values: []space.Value{space.Int(1), space.Int(2)}},
	}}
	all := sp.Enumerate()
	// blocks=4 with threads=128 is not valid: the trade landing there
	// maps to its nearest valid config.
	var valid []space.Config
	for _, c := range all {
		if s := c.String(); !strings.Contains(s, "blocks=4,threads=128") {
			valid = append(valid, c)
		}
	}
	l, err := newLattice(Problem{Space: sp, Valid: valid, Default: valid[0]})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		centre string
		want   []string
	}{
		{"algorithm=a,blocks=2,threads=256,unroll=1", []string{
			"algorithm=a,blocks=1,threads=256,unroll=2", // blocks down, unroll up
			"algorithm=a,blocks=1,threads=512,unroll=1", // blocks down, threads up
			"algorithm=a,blocks=2,threads=128,unroll=2", // threads down, unroll up
			// blocks up, threads down is invalid and maps to a config one axis
			// move away (blocks=4,threads=256 or blocks=2,threads=128): left out.
			// Unroll cannot go down: off the lattice.
		}},
		{"algorithm=b,blocks=1,threads=128,unroll=1", []string{}}, // every trade leaves the lattice
	}
	for _, tc := range tests {
		var got []string
		for _, i := range l.trades(l.byKey[space.ConfigKey(tc.centre)]) {
			got = append(got, l.valid[i].String())
		}
		sort.Strings(got)
		want := append([]string(nil), tc.want...)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("trades of %s:\n got %v\nwant %v", tc.centre, got, want)
		}
	}
}

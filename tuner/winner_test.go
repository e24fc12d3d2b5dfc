package tuner

import (
	"testing"

	"github.com/symmtune/symmtune/space"
)

func TestWinnerKeepsTheDefaultWithinTheMargin(t *testing.T) {
	def := space.Config{"chunks": space.Int(2)}
	a := space.Config{"chunks": space.Int(1)}
	b := space.Config{"chunks": space.Int(4)}
	ok := func(c space.Config, us float64) Result { return Result{Config: c, Status: StatusOK, ScoreUS: f64(us)} }
	failed := func(c space.Config) Result { return Result{Config: c, Status: StatusWrong} }
	tests := []struct {
		name   string
		in     []Result
		want   space.Config
		wantOK bool
	}{
		{name: "nothing ran", in: nil, wantOK: false},
		{name: "all failed", in: []Result{failed(a), failed(def)}, wantOK: false},
		{name: "the default is fastest", in: []Result{ok(a, 101), ok(def, 100)}, want: def, wantOK: true},
		// 1.01x: the matmulrs e4m3 case that ran slower in the program.
		{name: "1% faster keeps the default", in: []Result{ok(a, 99), ok(def, 100)}, want: def, wantOK: true},
		{name: "just under 2% keeps the default", in: []Result{ok(a, 98.1), ok(def, 100)}, want: def, wantOK: true},
		{name: "2.5% faster wins", in: []Result{ok(a, 97.5), ok(def, 100)}, want: a, wantOK: true},
		{name: "the fastest of several beyond the margin", in: []Result{ok(b, 97), ok(a, 90), ok(def, 100)}, want: a, wantOK: true},
		{name: "no default re-measured: the fastest", in: []Result{ok(b, 99.5), ok(a, 99)}, want: a, wantOK: true},
		{name: "the default failed: the fastest", in: []Result{ok(a, 99.5), failed(def)}, want: a, wantOK: true},
		{name: "a failed faster config does not count", in: []Result{failed(a), ok(b, 120), ok(def, 100)}, want: def, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, gotOK := Winner(tc.in, def)
			if gotOK != tc.wantOK {
				t.Fatalf("ok = %v, want %v", gotOK, tc.wantOK)
			}
			if gotOK && !got.Config.Equal(tc.want) {
				t.Errorf("winner %v, want %v", got.Config, tc.want)
			}
		})
	}
}

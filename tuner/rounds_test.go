package tuner

import (
	"reflect"
	"testing"

	"github.com/symmtune/symmtune/space"
)

func TestRotated(t *testing.T) {
	cs := []space.Config{{"x": space.Int(0)}, {"x": space.Int(1)}, {"x": space.Int(2)}}
	for _, tc := range []struct {
		by   int
		want []int64
	}{
		{0, []int64{0, 1, 2}},
		{1, []int64{1, 2, 0}},
		{2, []int64{2, 0, 1}},
		{3, []int64{0, 1, 2}},
		{4, []int64{1, 2, 0}},
	} {
		var got []int64
		for _, c := range rotated(cs, tc.by) {
			got = append(got, c["x"].Int)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("rotated by %d = %v, want %v", tc.by, got, tc.want)
		}
	}
	if cs[0]["x"].Int != 0 || cs[2]["x"].Int != 2 {
		t.Errorf("rotated changed its input: %v", cs)
	}
}

func f64(v float64) *float64 { return &v }

func round(score, min float64, ranks []float64, relErr float64) Result {
	return Result{Status: StatusOK, ScoreUS: f64(score), MinUS: f64(min), P90US: f64(score + 1), RanksUS: ranks,
		RelErr: f64(relErr), Iters: 20, ElapsedMS: 10, PrepareMS: 1, VerifyMS: 2, BenchMS: 6}
}

func TestRoundsResult(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		rounds               []Result
		score, min, p90, err float64
		ranks                []float64
	}{
		{"one round", []Result{round(10, 9, []float64{10, 9.5}, 1e-3)}, 10, 9, 11, 1e-3, []float64{10, 9.5}},
		{"median of three, the slowest first (a drifting clock)",
			[]Result{round(14, 13, []float64{14, 13}, 1e-3), round(10, 8, []float64{9, 10}, 3e-3), round(12, 11, []float64{12, 11}, 2e-3)},
			12, 8, 13, 3e-3, []float64{12, 11}},
		{"even count: the lower middle",
			[]Result{round(13, 12, []float64{13}, 0), round(11, 10, []float64{11}, 0), round(12, 11, []float64{12}, 0), round(20, 19, []float64{20}, 0)},
			12, 10, 13, 0, []float64{12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := roundsResult(tc.rounds)
			if got.Score() != tc.score || *got.MinUS != tc.min || *got.P90US != tc.p90 || *got.RelErr != tc.err {
				t.Errorf("score %v min %v p90 %v relErr %v, want %v %v %v %v", got.Score(), *got.MinUS, *got.P90US, *got.RelErr,
					tc.score, tc.min, tc.p90, tc.err)
			}
			if !reflect.DeepEqual(got.RanksUS, tc.ranks) {
				t.Errorf("ranks %v, want %v", got.RanksUS, tc.ranks)
			}
			if !got.Refined || got.Rounds != len(tc.rounds) || got.Iters != 20*len(tc.rounds) || got.ElapsedMS != 10*float64(len(tc.rounds)) {
				t.Errorf("refined %v rounds %d iters %d elapsed %v, want true, %d, %d, %v", got.Refined, got.Rounds, got.Iters,
					got.ElapsedMS, len(tc.rounds), 20*len(tc.rounds), 10*float64(len(tc.rounds)))
			}
			if n := float64(len(tc.rounds)); got.PrepareMS != n || got.VerifyMS != 2*n || got.BenchMS != 6*n {
				t.Errorf("phases %v %v %v ms, want the rounds' sums %v %v %v", got.PrepareMS, got.VerifyMS, got.BenchMS, n, 2*n, 6*n)
			}
		})
	}
	// The result's figures must not alias the rounds'.
	in := []Result{round(10, 9, []float64{10}, 0)}
	got := roundsResult(in)
	*got.MinUS, *got.ScoreUS, *got.P90US, *got.RelErr = 0, 0, 0, 1
	if *in[0].MinUS != 9 || *in[0].ScoreUS != 10 || *in[0].P90US != 11 || *in[0].RelErr != 0 {
		t.Errorf("roundsResult's figures alias its input's: %+v", in[0])
	}
}

func TestRoundsNote(t *testing.T) {
	for _, tc := range []struct {
		rounds int
		want   string
	}{{0, ""}, {1, ""}, {3, " in 3 interleaved rounds"}} {
		if got := (Result{Rounds: tc.rounds}).RoundsNote(); got != tc.want {
			t.Errorf("rounds %d: %q, want %q", tc.rounds, got, tc.want)
		}
	}
}

package tuner

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSummarizeScoresBySlowestRankPerIteration(t *testing.T) {
	tests := []struct {
		name      string
		perRank   [][]float64
		score     float64
		min, p90  float64
		ranks     []float64
		peerStyle float64
	}{
		{
			name:    "one rank",
			perRank: [][]float64{{3, 1, 2}},
			score:   2, min: 1, p90: 3, ranks: []float64{2}, peerStyle: 2,
		},
		{
			// Iteration maxes are 5, 6, 7: the slow rank alternates, so the
			// per-iteration max (7 max) differs from the max of medians.
			name:    "slowest rank alternates",
			perRank: [][]float64{{5, 1, 7}, {1, 6, 1}},
			score:   6, min: 5, p90: 7, ranks: []float64{5, 1}, peerStyle: 5,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.perRank)
			if got.ScoreUS != tc.score || got.MinUS != tc.min || got.P90US != tc.p90 || got.PeerStyleUS != tc.peerStyle {
				t.Errorf("got %+v, want score %v min %v p90 %v peer %v", got, tc.score, tc.min, tc.p90, tc.peerStyle)
			}
			for i, r := range tc.ranks {
				if got.RanksUS[i] != r {
					t.Errorf("rank %d median %v, want %v", i, got.RanksUS[i], r)
				}
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{9, 1, 8, 2, 7, 3, 6, 4, 5, 10}
	for _, tc := range []struct{ q, want float64 }{{0, 1}, {0.5, 6}, {0.9, 10}, {1, 10}} {
		if got := Quantile(xs, tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("quantile of nothing should be NaN")
	}
	if xs[0] != 9 {
		t.Error("Quantile sorted its input in place")
	}
}

func TestBenchDeadlineScalesWithWork(t *testing.T) {
	ceiling := time.Minute
	if d := benchDeadline(ceiling, 0, 10); d != ceiling {
		t.Errorf("unknown reference: %v, want the ceiling", d)
	}
	if d := benchDeadline(ceiling, 100, 10); d != 20*100*10*time.Microsecond+3*time.Second {
		t.Errorf("100µs x 10 calls: %v", d)
	}
	if d := benchDeadline(ceiling, 1e9, 10); d != ceiling {
		t.Errorf("huge reference: %v, want the ceiling", d)
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadJobFile(t *testing.T) {
	jobs, err := LoadJobFile(writeFile(t, `
backend = "cpu"
iters = 7
warm = "1s"
[timeouts]
bench = "4s"
[[job]]
kernel = "allreduce"
worlds = [2, 4]
dtypes = ["f32"]
shapes = ["n=1024", "n=4096"]
iters = 9
[[job]]
kernel = "agmm"
worlds = [2]
dtypes = ["f32"]
shapes = ["m=64,n=32,k=32"]
warmup = 0
warm = "250ms"
[job.timeouts]
verify = "2s"
[plugins]
agmm = "sha256:00"
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 5 {
		t.Fatalf("%d jobs, want 4 allreduce + 1 agmm", len(jobs))
	}
	a, g := jobs[0], jobs[4]
	if a.Kernel != "allreduce" || a.World != 2 || a.ShapeText != "n=1024" || a.Iters != 9 || a.Backend != "cpu" || a.Warmup != 3 || a.Warm != time.Second || a.Timeouts.Bench != 4*time.Second {
		t.Errorf("first job %+v", a)
	}
	if g.Kernel != "agmm" || g.Iters != 7 || g.Warmup != 0 || g.Warm != 250*time.Millisecond || g.Timeouts.Verify != 2*time.Second || g.Timeouts.Bench != 4*time.Second || g.Pin != "sha256:00" {
		t.Errorf("agmm job %+v", g)
	}
}

// TestLoadJobFileBudgets: a job without budget_trials or budget_time
// gets AutoBudget (the search plans its budget); budget_trials = 0 is every
// valid config, and a job's 0 overrides the file's budget.
func TestLoadJobFileBudgets(t *testing.T) {
	jobs, err := LoadJobFile(writeFile(t, `
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
budget_trials = 0
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
budget_trials = 12
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{jobs[0].BudgetTrials, jobs[1].BudgetTrials, jobs[2].BudgetTrials}; got[0] != AutoBudget || got[1] != 0 || got[2] != 12 || jobs[0].JobTime != DefaultJobTime {
		t.Errorf("budgets %v (job time %s), want [%d 0 12] (%s)", got, jobs[0].JobTime, AutoBudget, DefaultJobTime)
	}
	jobs, err = LoadJobFile(writeFile(t, `
budget_trials = 40
[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=1024"]
budget_trials = 0
`))
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].BudgetTrials != 0 {
		t.Errorf("a job's budget_trials = 0 under a file's 40 gave %d, want 0", jobs[0].BudgetTrials)
	}
}

func TestLoadJobFileRejects(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"unknown key", "itters = 3\n[[job]]\nkernel='a'\nworlds=[2]\ndtypes=['f32']\nshapes=['n=1']\n", "unknown key"},
		{"no jobs", "backend = 'cpu'\n", "no [[job]]"},
		{"missing kernel", "[[job]]\nworlds=[2]\ndtypes=['f32']\nshapes=['n=1']\n", "missing kernel"},
		{"empty worlds", "[[job]]\nkernel='a'\nworlds=[]\ndtypes=['f32']\nshapes=['n=1']\n", "at least one"},
		{"bad duration", "budget_time = 'soon'\n[[job]]\nkernel='a'\nworlds=[2]\ndtypes=['f32']\nshapes=['n=1']\n", "soon"},
		{"negative warm", "[[job]]\nkernel='a'\nworlds=[2]\ndtypes=['f32']\nshapes=['n=1']\nwarm='-1s'\n", "negative"},
		{"negative budget", "budget_trials = -1\n[[job]]\nkernel='a'\nworlds=[2]\ndtypes=['f32']\nshapes=['n=1']\n", "budget_trials = -1"},
		{"negative job budget", "[[job]]\nkernel='a'\nworlds=[2]\ndtypes=['f32']\nshapes=['n=1']\nbudget_trials = -3\n", "job 1 (a): budget_trials = -3"},
		{"syntax", "backend = 'cpu'\niters = = 3\n", "line 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadJobFile(writeFile(t, tc.body))
			var ie *InputError
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
			if !errors.As(err, &ie) {
				t.Errorf("err %v is not an InputError", err)
			}
		})
	}
}

// TestTimeSplit: the split's line names every phase, puts the precompile
// inside prepare and the timed work inside bench, shows restarts only
// when there were any, and its terms add up to the total.
func TestTimeSplit(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	for _, tc := range []struct {
		name  string
		split TimeSplit
		want  string
	}{
		{"the issue's GPU search", TimeSplit{Validate: s(8.1), Setup: s(2), Precompile: s(15), Prepare: s(5.3), Verify: s(3.9), Bench: s(4.7), Timed: s(1.1), Total: s(39.4)},
			"39.4 s = validate 8.1 + setup 2.0 + prepare 20.3 (precompile 15.0) + verify 3.9 + bench 4.7 (timed work 1.1) + other 0.4"},
		{"a precompile too short to show, a restart", TimeSplit{Validate: s(0.1), Setup: s(0.2), Precompile: s(0.01), Prepare: s(0.29), Verify: s(0.4), Bench: s(1), Timed: s(0.5), Restart: s(2), Total: s(4.5)},
			"4.5 s = validate 0.1 + setup 0.2 + prepare 0.3 + verify 0.4 + bench 1.0 (timed work 0.5) + restart 2.0 + other 0.5"},
		{"other never negative", TimeSplit{Bench: s(2), Total: s(1)},
			"1.0 s = validate 0.0 + setup 0.0 + prepare 0.0 + verify 0.0 + bench 2.0 (timed work 0.0) + other 0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.split.String(); got != tc.want {
				t.Errorf("split\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestSummarizeTotal: the timed work is the sum over iterations of the
// slowest rank's time, not of every rank's.
func TestSummarizeTotal(t *testing.T) {
	if got := Summarize([][]float64{{1, 5, 2}, {3, 1, 2}}).TotalUS; got != 3+5+2 {
		t.Errorf("TotalUS = %v, want 10", got)
	}
}

package tuner

import (
	"math"
	"sort"

	"github.com/symmtune/symmtune/internal/triallog"
)

// Status is how a trial ended; Result is one trial, as written to the
// trial log. Both belong to the trial log (internal/triallog); the tuner
// reports its trials in them.
type (
	Status = triallog.Status
	Result = triallog.Result
)

// Trial outcomes. Only StatusOK trials can win.
const (
	StatusOK      = triallog.StatusOK
	StatusWrong   = triallog.StatusWrong
	StatusFailed  = triallog.StatusFailed
	StatusHang    = triallog.StatusHang
	StatusCrash   = triallog.StatusCrash
	StatusInvalid = triallog.StatusInvalid
)

// Statuses lists every status in report order.
var Statuses = triallog.Statuses

// Timing is the statistics of one bench over all ranks.
type Timing struct {
	ScoreUS float64   // median over iterations of the per-iteration max across ranks
	MinUS   float64   // fastest iteration (of the per-iteration max)
	P90US   float64   // 90th percentile (of the per-iteration max)
	RanksUS []float64 // each rank's own median
	// PeerStyleUS is the max across ranks of each rank's median: the method
	// of shared/bench/peer_baselines.py, reported by GPU benchmarks.
	PeerStyleUS float64
	// TotalUS is the sum over iterations of the per-iteration max across
	// ranks: the work the bench timed, which a trial's wall time exceeds by
	// its preparation, verification, warm-up and round trips.
	TotalUS float64
}

// Summarize combines per-rank iteration times. Every rank must report the
// same number of iterations; iteration i on every rank followed the same
// cross-rank barrier, so their max is that iteration's group time.
func Summarize(perRank [][]float64) Timing {
	iters := len(perRank[0])
	maxes := make([]float64, iters)
	total := 0.0
	for i := 0; i < iters; i++ {
		for _, ts := range perRank {
			maxes[i] = math.Max(maxes[i], ts[i])
		}
		total += maxes[i]
	}
	t := Timing{ScoreUS: Quantile(maxes, 0.5), P90US: Quantile(maxes, 0.9), MinUS: Quantile(maxes, 0), TotalUS: total}
	for _, ts := range perRank {
		m := Quantile(ts, 0.5)
		t.RanksUS = append(t.RanksUS, m)
		t.PeerStyleUS = math.Max(t.PeerStyleUS, m)
	}
	return t
}

// Quantile returns the q-quantile (0..1) of xs by the nearest-rank method
// used by peer_baselines.py for the median (sorted[len/2]).
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(q * float64(len(s)))
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

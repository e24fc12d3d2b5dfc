package tuner

import (
	"fmt"
	"math"
	"sort"

	"github.com/symmtune/symmtune/space"
)

// Status is how a trial ended.
type Status string

// Trial outcomes. Only StatusOK trials can win.
const (
	StatusOK      Status = "ok"
	StatusWrong   Status = "wrong"   // ran, but some rank's output disagreed with the reference
	StatusFailed  Status = "failed"  // a plugin call returned an error (compile error, bad launch)
	StatusHang    Status = "hang"    // a plugin call missed its deadline; the group was restarted
	StatusCrash   Status = "crash"   // a plugin process died; the group was restarted
	StatusInvalid Status = "invalid" // Validate rejected it; never run
)

// Statuses lists every status in report order.
var Statuses = []Status{StatusOK, StatusWrong, StatusFailed, StatusHang, StatusCrash, StatusInvalid}

// Result is one trial, as written to the trial log.
type Result struct {
	Config  space.Config `json:"config"`
	Status  Status       `json:"status"`
	ScoreUS *float64     `json:"score_us"` // median over iterations of the max across ranks
	RanksUS []float64    `json:"ranks_us"` // each rank's median
	MinUS   *float64     `json:"min_us,omitempty"`
	P90US   *float64     `json:"p90_us,omitempty"`
	Iters   int          `json:"iters,omitempty"`
	// Warmup is the warm-up iterations before the timed ones (per round
	// of a refined result). Logs written before it was recorded lack it.
	Warmup int      `json:"warmup,omitempty"`
	RelErr *float64 `json:"rel_err,omitempty"` // worst rank's relative error at verification
	Error  string   `json:"error,omitempty"`
	// Phase says which step ended a failed trial (prepare, verify, bench).
	Phase string `json:"phase,omitempty"`
	// Refined marks a re-measurement of a finalist with more iterations.
	Refined bool `json:"refined,omitempty"`
	// Rounds is how many interleaved rounds a refined result was measured
	// in (its figures are its median round's; Iters counts all rounds).
	// Logs written before rounds lack it.
	Rounds int `json:"rounds,omitempty"`
	// Context of the trial, so one log can hold several jobs and --resume
	// can pick out the lines of its own job.
	Kernel    string  `json:"kernel"`
	Backend   string  `json:"backend"`
	World     int     `json:"world"`
	Dtype     string  `json:"dtype"`
	Shape     string  `json:"shape"`
	ElapsedMS float64 `json:"elapsed_ms"`
	// What a reader of the log needs to judge the search (symmtune
	// report): the strategy that ran (auto resolved to its choice), how many
	// configs the kernel accepted (a first pass that covered them all was
	// exhaustive), the hardware, and which config is the kernel's default.
	// Logs written before these were recorded lack them.
	Strategy     string `json:"strategy,omitempty"`
	ValidConfigs int    `json:"valid_configs,omitempty"`
	Hardware     string `json:"hardware,omitempty"`
	Default      bool   `json:"default,omitempty"`
}

// RoundsNote is " in N interleaved rounds" for a re-measurement made in
// rounds, else "": what the CLI and the report add after its iteration
// count.
func (r Result) RoundsNote() string {
	if r.Rounds > 1 {
		return fmt.Sprintf(" in %d interleaved rounds", r.Rounds)
	}
	return ""
}

// Score returns the score, +Inf when the trial did not produce one.
func (r Result) Score() float64 {
	if r.Status != StatusOK || r.ScoreUS == nil {
		return math.Inf(1)
	}
	return *r.ScoreUS
}

// Timing is the statistics of one bench over all ranks.
type Timing struct {
	ScoreUS float64   // median over iterations of the per-iteration max across ranks
	MinUS   float64   // fastest iteration (of the per-iteration max)
	P90US   float64   // 90th percentile (of the per-iteration max)
	RanksUS []float64 // each rank's own median
	// PeerStyleUS is the max across ranks of each rank's median: the method
	// of shared/bench/peer_baselines.py, reported by GPU benchmarks.
	PeerStyleUS float64
}

// Summarize combines per-rank iteration times. Every rank must report the
// same number of iterations; iteration i on every rank followed the same
// cross-rank barrier, so their max is that iteration's group time.
func Summarize(perRank [][]float64) Timing {
	iters := len(perRank[0])
	maxes := make([]float64, iters)
	for i := 0; i < iters; i++ {
		for _, ts := range perRank {
			maxes[i] = math.Max(maxes[i], ts[i])
		}
	}
	t := Timing{ScoreUS: Quantile(maxes, 0.5), P90US: Quantile(maxes, 0.9), MinUS: Quantile(maxes, 0)}
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

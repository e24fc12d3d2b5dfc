// Package triallog owns symmtune's trial log: the JSON-lines file a search
// writes, one Result per trial, and the one reader of it. The host
// (tuner) writes and resumes logs, the strategies' replay (tuner/strategy)
// rebuilds landscapes from them, and the report reads them; all of them
// read through Read, so a log means the same to each, and a last line cut
// short by a killed host is skipped everywhere. A log whose name ends in
// .gz is read gunzipped (ParseFile), so recorded logs may be stored
// compressed; logs are always written plain.
//
// The on-disk format is Result's JSON encoding, one object a line. It is
// kept compatible: logs written by earlier versions still load.
package triallog

import (
	"fmt"
	"math"

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
	// Timing is how the host asked the ranks to time the trial's bench
	// (kernel.proto's BenchRequest.timing): "" the plugin's own, "loaded"
	// (a finalist re-measured under Job.RefineTiming).
	Timing string `json:"timing,omitempty"`
	// Context of the trial, so one log can hold several jobs and --resume
	// can pick out the lines of its own job.
	Kernel    string  `json:"kernel"`
	Backend   string  `json:"backend"`
	World     int     `json:"world"`
	Dtype     string  `json:"dtype"`
	Shape     string  `json:"shape"`
	ElapsedMS float64 `json:"elapsed_ms"`
	// PrepareMS, VerifyMS and BenchMS split ElapsedMS: how long the host
	// waited for the trial's prepare (load or compile), verify and bench
	// calls on all ranks, whether they passed or not (a refined result:
	// summed over its rounds). A call not made is absent. Logs written
	// before they were recorded lack them.
	PrepareMS float64 `json:"prepare_ms,omitempty"`
	VerifyMS  float64 `json:"verify_ms,omitempty"`
	BenchMS   float64 `json:"bench_ms,omitempty"`
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

// Job names the job a trial belongs to: kernel, backend, world, dtype and
// shape. Lines of one job share it; a log may hold several jobs.
func (r Result) Job() string {
	return fmt.Sprintf("kernel=%q backend=%q world=%d dtype=%q shape=%q", r.Kernel, r.Backend, r.World, r.Dtype, r.Shape)
}

// RoundsNote is " in N interleaved rounds" for a re-measurement made in
// rounds, else "", then ", timed loaded" where the host asked for a
// timing (Timing): what the CLI and the report add after its iteration
// count.
func (r Result) RoundsNote() string {
	note := ""
	if r.Rounds > 1 {
		note = fmt.Sprintf(" in %d interleaved rounds", r.Rounds)
	}
	if r.Timing != "" {
		note += fmt.Sprintf(", timed %s", r.Timing)
	}
	return note
}

// Score returns the score, +Inf when the trial did not produce one.
func (r Result) Score() float64 {
	if r.Status != StatusOK || r.ScoreUS == nil {
		return math.Inf(1)
	}
	return *r.ScoreUS
}

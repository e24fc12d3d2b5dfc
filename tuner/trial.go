package tuner

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// Timeouts bound each plugin call of a trial; a call that misses its
// deadline makes the trial a hang.
type Timeouts struct {
	Setup   time.Duration `toml:"setup"`
	Prepare time.Duration `toml:"prepare"`
	Verify  time.Duration `toml:"verify"`
	Bench   time.Duration `toml:"bench"`
}

// DefaultTimeouts are generous: GPU compiles and large CPU problems take
// seconds. Bench's is tightened once the default config's time is known
// (see benchDeadline).
var DefaultTimeouts = Timeouts{Setup: 60 * time.Second, Prepare: 120 * time.Second, Verify: 60 * time.Second, Bench: 120 * time.Second}

// withDefaults fills zero fields from DefaultTimeouts.
func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts
	if t.Setup > 0 {
		d.Setup = t.Setup
	}
	if t.Prepare > 0 {
		d.Prepare = t.Prepare
	}
	if t.Verify > 0 {
		d.Verify = t.Verify
	}
	if t.Bench > 0 {
		d.Bench = t.Bench
	}
	return d
}

// benchDeadline scales the bench deadline to the expected work: a config
// slower than 20 times the reference per iteration is not worth waiting
// for, and deadlocks are caught in seconds rather than minutes. calls is
// the bench's warm-up plus timed iterations, so a finalist re-measured with
// more iterations gets a longer deadline. The configured bench timeout
// stays the ceiling.
func benchDeadline(ceiling time.Duration, refUS float64, calls int) time.Duration {
	if refUS <= 0 || math.IsInf(refUS, 0) || math.IsNaN(refUS) {
		return ceiling
	}
	d := time.Duration(20*refUS*float64(calls))*time.Microsecond + 3*time.Second
	return min(d, ceiling)
}

// trialSpec is what one measurement needs.
type trialSpec struct {
	Config        space.Config
	Warmup, Iters int
	// Timing is how the ranks are asked to time the bench (sdk.Timing;
	// "" their own).
	Timing        string
	Timeouts      Timeouts
	BenchDeadline time.Duration
}

// phaseTimes is how long the host waited for each call of a trial
// (fanned out to every rank; zero for a call not made), whether it
// succeeded or not, and the work its bench timed (Timing.TotalUS; zero
// without a bench that passed). They go into the job's time split and the
// trial's log line; deadlines scaled to the work take them only from
// trials that passed.
type phaseTimes struct {
	Prepare, Verify, Bench time.Duration
	Timed                  time.Duration
}

// runTrial prepares, verifies and benches one config on every rank in
// lockstep. It never returns an error: every outcome is a Result. restart
// reports whether the group must be replaced before the next trial (a rank
// died, hung, or failed mid-way through a cross-rank step and left the
// others' synchronization state unknown).
func (g *group) runTrial(ctx context.Context, t trialSpec) (res Result, restart bool, took phaseTimes) {
	start := time.Now()
	res = Result{Config: t.Config}
	defer func() { res.ElapsedMS = float64(time.Since(start).Microseconds()) / 1e3 }()
	cfg := sdk.ConfigToProto(t.Config)
	fail := func(err error) (Result, bool, phaseTimes) {
		res.Status, res.Error = StatusFailed, err.Error()
		if ce, ok := err.(*callError); ok {
			res.Status, res.Phase = ce.Status, ce.Phase
		}
		return res, true, took
	}

	// Prepare involves no cross-rank step, so a plain error there leaves the
	// group usable.
	began := time.Now()
	err := g.fanout(ctx, "prepare", t.Timeouts.Prepare, func(ctx context.Context, r *rankProc) error {
		_, err := r.kernel.Prepare(ctx, &pb.PrepareRequest{Config: cfg})
		return err
	})
	took.Prepare = time.Since(began)
	if err != nil {
		res, restart, took = fail(err)
		if ce, ok := err.(*callError); ok && ce.Status == StatusFailed {
			restart = false
		}
		return res, restart, took
	}

	seed := rand.Uint64()
	verdicts := make([]*pb.VerifyResponse, len(g.ranks))
	began = time.Now()
	err = g.fanout(ctx, "verify", t.Timeouts.Verify, func(ctx context.Context, r *rankProc) error {
		v, err := r.kernel.Verify(ctx, &pb.VerifyRequest{Config: cfg, Seed: seed})
		verdicts[r.rank] = v
		return err
	})
	took.Verify = time.Since(began)
	if err != nil {
		return fail(err)
	}
	worst := 0.0
	finite := true
	var wrong []string
	for r, v := range verdicts {
		// A NaN or infinite error (an output element never written, the
		// output poisoned with NaN) is a wrong result whatever the plugin
		// says; it cannot be logged as a number, so the detail names it.
		if e := v.GetRelErr(); !isFinite(e) {
			finite = false
			wrong = append(wrong, fmt.Sprintf("rank %d: relative error %v is not a finite number (an output element never written?)", r, e))
			continue
		}
		worst = math.Max(worst, v.GetRelErr())
		if !v.GetOk() {
			d := v.GetDetail()
			if d == "" {
				d = fmt.Sprintf("rank %d: relative error %.3g", r, v.GetRelErr())
			}
			wrong = append(wrong, d)
		}
	}
	if finite {
		res.RelErr = &worst
	}
	if len(wrong) > 0 {
		res.Status, res.Phase, res.Error = StatusWrong, "verify", strings.Join(wrong, "; ")
		return res, false, took
	}

	times := make([][]float64, len(g.ranks))
	deadline := t.BenchDeadline
	if deadline <= 0 {
		deadline = t.Timeouts.Bench
	}
	began = time.Now()
	err = g.fanout(ctx, "bench", deadline, func(ctx context.Context, r *rankProc) error {
		b, err := r.kernel.Bench(ctx, &pb.BenchRequest{Config: cfg, Warmup: int32(t.Warmup), Iters: int32(t.Iters), Timing: t.Timing})
		if err != nil {
			return err
		}
		if len(b.GetTimesUs()) != t.Iters {
			return fmt.Errorf("rank %d returned %d times for %d iterations", r.rank, len(b.GetTimesUs()), t.Iters)
		}
		for i, us := range b.GetTimesUs() {
			if !isFinite(us) || us < 0 {
				return fmt.Errorf("rank %d returned time %v µs for iteration %d: want a finite time of 0 or more", r.rank, us, i+1)
			}
		}
		times[r.rank] = b.GetTimesUs()
		return nil
	})
	took.Bench = time.Since(began)
	if err != nil {
		return fail(err)
	}
	tm := Summarize(times)
	took.Timed = time.Duration(tm.TotalUS * float64(time.Microsecond))
	res.Status = StatusOK
	res.ScoreUS, res.MinUS, res.P90US = &tm.ScoreUS, &tm.MinUS, &tm.P90US
	res.RanksUS = tm.RanksUS
	res.Iters = t.Iters
	res.Warmup = t.Warmup
	return res, false, took
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

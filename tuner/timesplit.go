package tuner

import (
	"fmt"
	"strings"
	"time"
)

// TimeSplit is where a search's wall time went, phase by phase, summed
// over the job. A trial costs far more than the work its bench times
// (compiling, verifying against a float64 reference, warming up, round
// trips to every rank); the split shows where. Each phase is the host's
// wait for its plugin calls, fanned out to every rank at once, so it is
// the slowest rank's time.
type TimeSplit struct {
	// Validate is describing the kernel and the hardware, asking for the
	// default config, enumerating the space and asking Validate about
	// every config.
	Validate time.Duration
	// Setup is starting the plugin processes and setting up and
	// connecting the first group of ranks.
	Setup time.Duration
	// Precompile is rank 0's ahead-of-time build of every valid config.
	Precompile time.Duration
	// Prepare, Verify and Bench are the trials' calls, the finalists'
	// re-measurements and any unlogged warm-up run included; a call that
	// failed or hung counts until the host gave up on it.
	Prepare, Verify, Bench time.Duration
	// Timed is the work the benches timed: each bench's sum over its
	// timed iterations of the slowest rank's time. Part of Bench, which
	// also holds the warm-up iterations and the calls' round trips.
	Timed time.Duration
	// Restart is replacing the group after a hang or a crash (killing the
	// ranks, starting new ones, retries included).
	Restart time.Duration
	// Total is the search's wall time (Outcome.Elapsed).
	Total time.Duration
}

// Other is what Total holds beyond the phases: choosing configs, writing
// the trial log, checking the cache, the host's own bookkeeping.
func (t TimeSplit) Other() time.Duration {
	return max(0, t.Total-t.Validate-t.Setup-t.Precompile-t.Prepare-t.Verify-t.Bench-t.Restart)
}

// String gives the split in seconds, on one line:
//
//	39.4 s = validate 8.1 + setup 2.0 + prepare 20.3 (precompile 15.0) + verify 3.9 + bench 4.7 (timed work 1.1) + other 0.4
//
// prepare holds the precompile (shown when it rounds to 0.1 s or more),
// bench the timed work; restart appears when the group was replaced. The
// terms add up to the total (to rounding).
func (t TimeSplit) String() string {
	s := func(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }
	prepare := "prepare " + s(t.Precompile+t.Prepare)
	if t.Precompile >= 50*time.Millisecond {
		prepare += " (precompile " + s(t.Precompile) + ")"
	}
	parts := []string{"validate " + s(t.Validate), "setup " + s(t.Setup), prepare,
		"verify " + s(t.Verify), "bench " + s(t.Bench) + " (timed work " + s(t.Timed) + ")"}
	if t.Restart > 0 {
		parts = append(parts, "restart "+s(t.Restart))
	}
	parts = append(parts, "other "+s(t.Other()))
	return s(t.Total) + " s = " + strings.Join(parts, " + ")
}

// addTrial adds one trial's calls.
func (t *TimeSplit) addTrial(took phaseTimes) {
	t.Prepare += took.Prepare
	t.Verify += took.Verify
	t.Bench += took.Bench
	t.Timed += took.Timed
}

// ms is d in milliseconds, as the trial log records times.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

package sdk

import (
	"context"
	"fmt"
)

// Timing is how the host asks the ranks to time one Bench
// (kernel.proto's BenchRequest.timing). Instance.Bench reads it from its
// context (TimingOf); an instance with no such mode times as it always
// does.
type Timing string

const (
	// TimingOwn is the plugin's own way: its default, or what its
	// environment sets (the CUDA plugins' SYMMTUNE_TRIAL_TIMING).
	TimingOwn Timing = ""
	// TimingLoaded asks for each timed call after a fixed load, at the
	// clock a busy GPU holds rather than the boost an idle one gives a
	// short burst (the host's Job.TrialTiming, Job.RefineTiming): in a
	// torch program at 8192 x 3584 x 8192 on 1 x H200 it ordered 26 of 27
	// pairs of configs 2% or more apart as the program did, the barrier
	// timing 19 of 27 (bench/results/2026-12-02-h200-search-order-loaded.md).
	// The host asks it for the finalists' re-measurements by default.
	TimingLoaded Timing = "loaded"
)

// ParseTiming checks a requested timing: "" or "loaded".
func ParseTiming(s string) (Timing, error) {
	switch t := Timing(s); t {
	case TimingOwn, TimingLoaded:
		return t, nil
	}
	return "", fmt.Errorf("timing %q: want %q (the plugin's own) or %q", s, TimingOwn, TimingLoaded)
}

type timingKey struct{}

// WithTiming is ctx carrying the timing the host asked for (Serve sets it
// on each Bench's context).
func WithTiming(ctx context.Context, t Timing) context.Context {
	return context.WithValue(ctx, timingKey{}, t)
}

// TimingOf is the timing the host asked for this call (TimingOwn where it
// asked for none).
func TimingOf(ctx context.Context) Timing {
	t, _ := ctx.Value(timingKey{}).(Timing)
	return t
}

package cudamem

import (
	"fmt"
	"os"
	"time"
)

// TimingEnv selects how Team.Time times a trial's calls (see Timing).
const TimingEnv = "SYMMTUNE_TRIAL_TIMING"

// LoadWarmEnv sets how long a loaded trial's fixed load runs before its
// warm-up (a Go duration, "0s" for none; default DefaultLoadWarm).
const LoadWarmEnv = "SYMMTUNE_LOAD_WARM"

// DefaultLoadWarm is a loaded trial's load before its warm-up where
// LoadWarmEnv is unset.
const DefaultLoadWarm = 150 * time.Millisecond

// LoadWarmFromEnv reads LoadWarmEnv.
func LoadWarmFromEnv() (time.Duration, error) {
	v := os.Getenv(LoadWarmEnv)
	if v == "" {
		return DefaultLoadWarm, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > 10*time.Second {
		return 0, fmt.Errorf("%s=%q: want a duration from 0s to 10s, such as 150ms", LoadWarmEnv, v)
	}
	return d, nil
}

// Timing is how Team.Time places a trial's calls on the stream.
type Timing string

const (
	// TimingBarrier puts the team barrier before every timed call: each
	// call starts on every rank together, and its time is its own work.
	TimingBarrier Timing = "barrier"
	// TimingStream puts the barrier once, before the first timed call,
	// and queues the calls back to back, as a program does: each call's
	// time runs from the previous call's end, so waits on a peer that
	// fell behind and gaps while the host is still launching count.
	TimingStream Timing = "stream"
	// TimingLoaded is TimingBarrier with a fixed load (load.go) run for
	// about LoadWarmFromEnv's time before the warm-up and once before every call: each
	// config is timed at the clock a busy, power-capped GPU holds, not at
	// the boost an idle one gives a short burst. Each trial costs that
	// much more, and the GPU holds the load's operands (about 128 MiB).
	TimingLoaded Timing = "loaded"
)

// TimingFromEnv reads TimingEnv: empty means TimingBarrier.
func TimingFromEnv() (Timing, error) {
	switch v := Timing(os.Getenv(TimingEnv)); v {
	case "":
		return TimingBarrier, nil
	case TimingBarrier, TimingStream, TimingLoaded:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q, %q or %q", TimingEnv, string(v), TimingBarrier, TimingStream, TimingLoaded)
	}
}

// TimingRequested is the timing of a bench the host asked to be timed as
// requested (sdk.TimingOf's value): "" is TimingFromEnv's, "loaded"
// TimingLoaded.
func TimingRequested(requested string) (Timing, error) {
	switch Timing(requested) {
	case "":
		return TimingFromEnv()
	case TimingLoaded:
		return TimingLoaded, nil
	}
	return "", fmt.Errorf("timing %q requested: want \"\" or %q", requested, TimingLoaded)
}

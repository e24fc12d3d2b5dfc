package cudamem

import (
	"fmt"
	"os"
)

// TimingEnv selects how Team.Time times a trial's calls (see Timing).
const TimingEnv = "SYMMTUNE_TRIAL_TIMING"

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
)

// TimingFromEnv reads TimingEnv: empty means TimingBarrier.
func TimingFromEnv() (Timing, error) {
	switch v := Timing(os.Getenv(TimingEnv)); v {
	case "":
		return TimingBarrier, nil
	case TimingBarrier, TimingStream:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", TimingEnv, string(v), TimingBarrier, TimingStream)
	}
}

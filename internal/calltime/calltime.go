// Package calltime times the host steps of the runtime's calls, for
// developers asking where a call's host time goes inside another
// process (a Python program calling libsymmtune), where no Go profiler
// runs. It owns one process-wide table of step durations. Off unless
// $SYMMTUNE_CALL_TIMES is set (read once, at the first Begin): then each
// Mark costs one clock read and a map update under a mutex; off, a load.
package calltime

import (
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Env turns the timing on when set (to anything but "" or "0").
const Env = "SYMMTUNE_CALL_TIMES"

// maxSamples bounds the samples kept per step: a median needs no more.
const maxSamples = 1 << 14

var (
	once sync.Once
	on   atomic.Bool

	mu    sync.Mutex
	last  time.Time
	steps = map[string][]time.Duration{}
)

// Begin starts a call's timing: the next Mark measures from now.
func Begin() {
	once.Do(func() { on.Store(os.Getenv(Env) != "" && os.Getenv(Env) != "0") })
	if !on.Load() {
		return
	}
	mu.Lock()
	last = time.Now()
	mu.Unlock()
}

// Mark records the time since the last Begin or Mark as step label's.
// Calls of several threads interleave their marks: time one thread's
// calls at a time (the runtime's GEMM calls hold one lock).
func Mark(label string) {
	if !on.Load() {
		return
	}
	now := time.Now()
	mu.Lock()
	if s := steps[label]; len(s) < maxSamples {
		steps[label] = append(s, now.Sub(last))
	}
	last = now
	mu.Unlock()
}

// Step is one step's samples: how many, and their median and sum in µs.
type Step struct {
	N        int     `json:"n"`
	MedianUs float64 `json:"median_us"`
	SumUs    float64 `json:"sum_us"`
}

// Take returns every step's figures since the last Take and forgets them.
func Take() map[string]Step {
	mu.Lock()
	got := steps
	steps = map[string][]time.Duration{}
	mu.Unlock()
	out := make(map[string]Step, len(got))
	for label, s := range got {
		slices.Sort(s)
		var sum time.Duration
		for _, d := range s {
			sum += d
		}
		out[label] = Step{N: len(s), MedianUs: us(s[len(s)/2]), SumUs: us(sum)}
	}
	return out
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

package cudamem

import (
	"testing"
	"time"
)

func TestTimingFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want Timing
		bad  bool
	}{
		{"", TimingBarrier, false},
		{"barrier", TimingBarrier, false},
		{"stream", TimingStream, false},
		{"loaded", TimingLoaded, false},
		{"graph", "", true},
		{"Stream", "", true},
	} {
		t.Setenv(TimingEnv, tc.env)
		got, err := TimingFromEnv()
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s=%q: got %q, %v; want %q, error %v", TimingEnv, tc.env, got, err, tc.want, tc.bad)
		}
	}
}

// TestTimingRequested: a bench the host asks nothing of is timed as the
// environment says; one it asks to be loaded is loaded whatever the
// environment says; anything else is an error.
func TestTimingRequested(t *testing.T) {
	for _, tc := range []struct {
		env, requested string
		want           Timing
		bad            bool
	}{
		{"", "", TimingBarrier, false},
		{"stream", "", TimingStream, false},
		{"", "loaded", TimingLoaded, false},
		{"stream", "loaded", TimingLoaded, false},
		{"graph", "", "", true},
		{"", "stream", "", true},
		{"", "Loaded", "", true},
	} {
		t.Setenv(TimingEnv, tc.env)
		got, err := TimingRequested(tc.requested)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s=%q, requested %q: got %q, %v; want %q, error %v", TimingEnv, tc.env, tc.requested, got, err, tc.want, tc.bad)
		}
	}
}

func TestLoadWarmFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
		bad  bool
	}{
		{"", DefaultLoadWarm, false},
		{"0s", 0, false},
		{"20ms", 20 * time.Millisecond, false},
		{"-1ms", 0, true},
		{"11s", 0, true},
		{"150", 0, true},
	} {
		t.Setenv(LoadWarmEnv, tc.env)
		got, err := LoadWarmFromEnv()
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s=%q: got %v, %v; want %v, error %v", LoadWarmEnv, tc.env, got, err, tc.want, tc.bad)
		}
	}
}

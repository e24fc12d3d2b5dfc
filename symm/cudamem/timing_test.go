package cudamem

import "testing"

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

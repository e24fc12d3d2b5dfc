package calltime

import (
	"testing"
	"time"
)

func TestMarksAndTake(t *testing.T) {
	t.Setenv(Env, "1")
	on.Store(true) // Begin's once may have run in another test of this binary
	for _, tc := range []struct {
		label string
		sleep time.Duration
	}{{"a", 0}, {"b", 2 * time.Millisecond}} {
		Begin()
		time.Sleep(tc.sleep)
		Mark(tc.label)
	}
	got := Take()
	if len(got) != 2 || got["a"].N != 1 || got["b"].N != 1 {
		t.Fatalf("Take = %+v, want one sample each of a and b", got)
	}
	if got["b"].MedianUs < 2000 {
		t.Errorf("b's median %.0f µs, want at least the 2 ms slept", got["b"].MedianUs)
	}
	if again := Take(); len(again) != 0 {
		t.Errorf("a second Take = %+v, want nothing: Take forgets", again)
	}
}

func TestOffRecordsNothing(t *testing.T) {
	on.Store(false)
	Begin()
	Mark("x")
	if got := Take(); len(got) != 0 {
		t.Fatalf("off: Take = %+v, want nothing", got)
	}
}

package cudamem

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchLoop: the loop reports the first word it finds poisoned, once,
// with the error a call would return, and reports nothing while every
// word is clear.
func TestWatchLoop(t *testing.T) {
	var clear, late atomic.Uint32
	words := func() []WatchedWord {
		return []WatchedWord{
			{Load: clear.Load, Rank: 0, Timeout: time.Minute},
			{Load: late.Load, Rank: 1, Timeout: time.Minute},
		}
	}
	reports := make(chan error, 2)
	done := make(chan struct{})
	go func() {
		WatchLoop(nil, time.Millisecond, words, func(err error) { reports <- err })
		close(done)
	}()
	select {
	case err := <-reports:
		t.Fatalf("a report while every word is clear: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	late.Store(uint32(MakePoison(KindLamport, 0, 1)))
	var err error
	select {
	case err = <-reports:
	case <-time.After(10 * time.Second):
		t.Fatal("no report 10 s after a word turned poisoned")
	}
	<-done // it returns after its report
	var pe *PoisonedError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "rank 0's Lamport wait for rank 1 timed out after 1m0s (seen by rank 1's watchdog)") {
		t.Errorf("report %v", err)
	}
	if len(reports) != 0 {
		t.Errorf("%d more reports", len(reports))
	}
}

// TestWatchLoopStops: closing stop ends a loop that found nothing.
func TestWatchLoopStops(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		WatchLoop(stop, time.Millisecond, func() []WatchedWord { return nil }, func(error) { t.Error("a report") })
		close(done)
	}()
	close(stop)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not stop")
	}
}

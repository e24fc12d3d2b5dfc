package gpu

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLaterQueue: everything added runs once, on the queue's thread,
// whether it comes while the thread polls or after it parked, from
// several goroutines; close runs what is pending; an add after close runs
// at once and returns its error.
func TestLaterQueue(t *testing.T) {
	for _, c := range []struct {
		name      string
		parkAfter int
		pause     time.Duration // between bursts: longer than parkAfter polls parks the thread
	}{
		{"polling", 1 << 30, 0},
		{"parks between bursts", 2, 5 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			var setups, ran atomic.Int64
			q := startLaterQueue(func() bool { setups.Add(1); return true }, 200*time.Microsecond, c.parkAfter)
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for burst := 0; burst < 5; burst++ {
						for i := 0; i < 50; i++ {
							if err := q.add(func() error { ran.Add(1); return nil }); err != nil {
								t.Error(err)
							}
						}
						time.Sleep(c.pause)
					}
				}()
			}
			wg.Wait()
			q.close()
			if got := ran.Load(); got != 4*5*50 {
				t.Fatalf("ran %d of %d", got, 4*5*50)
			}
			if setups.Load() != 1 {
				t.Fatalf("setup ran %d times", setups.Load())
			}
			want := errTest
			if err := q.add(func() error { ran.Add(1); return want }); err != want {
				t.Fatalf("add after close: %v, want %v", err, want)
			}
			q.close() // a second close returns
		})
	}
}

// TestLaterQueueDropsWithoutSetup: a thread whose setup failed runs
// nothing it is handed, and close still returns.
func TestLaterQueueDropsWithoutSetup(t *testing.T) {
	var ran atomic.Int64
	q := startLaterQueue(func() bool { return false }, time.Millisecond, 1)
	for i := 0; i < 10; i++ {
		_ = q.add(func() error { ran.Add(1); return nil })
	}
	q.close()
	if ran.Load() != 0 {
		t.Fatalf("ran %d after a failed setup", ran.Load())
	}
}

type testErr string

func (e testErr) Error() string { return string(e) }

const errTest = testErr("test")

package gpu

import (
	"runtime"
	"sync"
	"time"
)

// laterQueue runs functions handed to it (a closed runner's graph
// destructions) on a goroutine locked to an OS thread of its own. A
// caller's add costs a mutex and an append: the thread polls every poll
// while work comes, and parks only after parkAfter idle polls, so that
// only the first add after a lull wakes it. A wake-up is a futex call on
// the caller's thread: 6.6 µs a send measured on a 2-core VM (Go 1.26),
// most of what an eviction cost a first call at a new row count.
type laterQueue struct {
	mu      sync.Mutex
	pending []func() error
	parked  bool // the thread waits for kick
	closed  bool
	kick    chan struct{}
	done    chan struct{}
}

// Polling while busy, parking after a second without work.
const (
	laterPoll      = 5 * time.Millisecond
	laterParkAfter = 200
)

// startLaterQueue starts the queue's thread; setup runs on it first (it
// makes the CUDA context current), and when it returns false the thread
// drops what it is handed (a graph that cannot be destroyed leaks: no
// caller is left to tell).
func startLaterQueue(setup func() bool, poll time.Duration, parkAfter int) *laterQueue {
	q := &laterQueue{kick: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run(setup, poll, parkAfter)
	return q
}

func (q *laterQueue) run(setup func() bool, poll time.Duration, parkAfter int) {
	runtime.LockOSThread()
	defer close(q.done)
	ok := setup()
	idle := 0
	for {
		q.mu.Lock()
		work, closed := q.pending, q.closed
		q.pending = nil
		if len(work) == 0 && !closed {
			if idle++; idle >= parkAfter {
				q.parked = true
				q.mu.Unlock()
				<-q.kick
				idle = 0
				continue
			}
		}
		q.mu.Unlock()
		if len(work) > 0 {
			idle = 0
		}
		for _, f := range work {
			if ok {
				_ = f()
			}
		}
		if closed {
			return
		}
		time.Sleep(poll)
	}
}

// add hands f to the thread; after close it runs f now, on the caller's
// thread, and returns its error.
func (q *laterQueue) add(f func() error) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return f()
	}
	q.pending = append(q.pending, f)
	wake := q.parked
	q.parked = false
	q.mu.Unlock()
	if wake {
		q.kick <- struct{}{} // buffered: one kick per park
	}
	return nil
}

// close runs what is pending and stops the thread, waiting for it.
func (q *laterQueue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	wake := q.parked
	q.parked = false
	q.mu.Unlock()
	if wake {
		q.kick <- struct{}{}
	}
	<-q.done
}

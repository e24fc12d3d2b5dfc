package cudamem

import (
	"sync"
	"time"
)

// The watchdog (symmtune.torch's runtime, issue 54): a poison seen by a
// kernel reaches the host word at once, but only an eager call reads it,
// and a serving engine may replay CUDA graphs for minutes with no eager
// call, every replay's kernels skipping their work. So a thread of the
// runtime reads every workspace's host word a few times a second and
// reports the first poison it sees, as NCCL's watchdog reports a
// collective that timed out. This file builds without the cuda tag: the
// loop runs over words any caller can fake.

// A WatchedWord is a workspace's host word as the watchdog reads it, with
// what its error names: the rank whose word it is and the waits' bound.
type WatchedWord struct {
	Load    func() uint32
	Rank    int
	Timeout time.Duration
}

// WatchLoop reads words() every interval until stop is closed, and calls
// report once, with the error a call on that workspace would return
// (PoisonError; the op named "watchdog"), for the first
// word it finds poisoned. It returns after reporting.
func WatchLoop(stop <-chan struct{}, interval time.Duration, words func() []WatchedWord, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, w := range words() {
			if v := w.Load(); v != 0 {
				report(PoisonError(v, w.Rank, "watchdog", w.Timeout))
				return
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// watchedWords are the words the runtime's watchdog reads (watchWord adds
// them; host words are never freed, so neither are these).
var watchedWords struct {
	sync.Mutex
	byPads map[uint64]WatchedWord
}

// watchWord adds (or renews, for new pads at an old address) the host
// word of the workspace whose own pads are at pads.
func watchWord(pads uint64, w WatchedWord) {
	watchedWords.Lock()
	defer watchedWords.Unlock()
	if watchedWords.byPads == nil {
		watchedWords.byPads = map[uint64]WatchedWord{}
	}
	watchedWords.byPads[pads] = w
}

// WatchedWords are every workspace host word the process has opened.
func WatchedWords() []WatchedWord {
	watchedWords.Lock()
	defer watchedWords.Unlock()
	out := make([]WatchedWord, 0, len(watchedWords.byPads))
	for _, w := range watchedWords.byPads {
		out = append(out, w)
	}
	return out
}

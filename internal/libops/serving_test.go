package libops

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
)

// TestServingThreadsFake runs the runtime as a serving engine's two
// threads do, on the fake device, for the race detector and the fake's
// checks: a decode thread warms up a few row counts on its stream,
// captures them, keeps some graphs alive, replays every live graph and
// destroys old ones; meanwhile a prefill thread makes first calls at
// hundreds of new row counts on another stream (each evicting the least
// recently used unit, the decode thread's too) and retires and reopens an
// all-reduce handle. What must hold:
//   - no replay touches a closed runner (the fake's replay checks it);
//   - no close waits on a point inside a capture (the fake's close fails,
//     which would stop the runtime);
//   - every error is a CaptureError (a warm-up evicted by the prefill's
//     first calls before the capture came: the capture is dropped);
//   - once every graph is destroyed, a reap leaves no zombie and at most
//     the bounds open.
func TestServingThreadsFake(t *testing.T) {
	h, f := openFake(t, "bf16")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	const decodeStream, prefillStream = 7, 1
	wg.Add(2)
	go func() { // decode: capture, keep, replay, destroy
		defer wg.Done()
		rng := rand.New(rand.NewSource(1))
		var live []uint64
		for i := 0; i < 300; i++ {
			rows := []int{2 + 2*rng.Intn(8), 2 + 2*rng.Intn(8)}
			for _, m := range rows {
				if _, err := GemmEnqueue(h, decodeStream, m, 1, 2, 3, 0); err != nil {
					errs <- fmt.Errorf("decode warm-up m=%d: %w", m, err)
					return
				}
			}
			id := f.beginCapture(decodeStream)
			var capErr error
			for _, m := range rows {
				if _, err := GemmEnqueue(h, decodeStream, m, 1, 2, 3, 0); err != nil {
					capErr = err
					break
				}
			}
			f.endCapture(decodeStream)
			var ce *CaptureError
			switch {
			case capErr == nil:
				live = append(live, id)
			case errors.As(capErr, &ce):
				f.destroy(id) // the program drops the failed capture
			default:
				errs <- fmt.Errorf("decode capture %d: %w", i, capErr)
				return
			}
			for _, g := range live {
				if err := f.replay(g); err != nil {
					errs <- err
					return
				}
			}
			if len(live) > 5 {
				f.destroy(live[0])
				live = live[1:]
			}
		}
		for _, g := range live {
			f.destroy(g)
		}
	}()
	go func() { // prefill: first calls at new row counts, an all-reduce's growth
		defer wg.Done()
		ar, _ := openFakeARFenced(t, f)
		for i := 0; i < 1500; i++ {
			if _, err := GemmEnqueue(h, prefillStream, 1000+2*i, 1, 2, 3, 0); err != nil {
				errs <- fmt.Errorf("prefill m=%d: %w", 1000+2*i, err)
				return
			}
			if err := AllreduceEnqueue(ar, prefillStream, 16, 8); err != nil {
				errs <- fmt.Errorf("all-reduce: %w", err)
				return
			}
			if i%50 == 49 { // its region grew: the old handle retires, a new one opens
				if _, err := Retire([]uint64{ar}); err != nil {
					errs <- err
					return
				}
				ar, _ = openFakeARFenced(t, f)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if p := poisoned.Load(); p != nil {
		t.Fatalf("the runtime stopped: %s", *p)
	}
	Reap()
	s := Stats()
	if s.GraphHeld != 0 || s.Units > maxUnits+1 { // +1: the all-reduce's unit
		t.Fatalf("after every graph was destroyed: %+v, want no zombie and at most %d units", s, maxUnits+1)
	}
}

// arFake is an all-reduce runner on the fake device, with fakeRunner's
// fence and close: its close fails where it would wait on a point it
// marks on a stream being captured (on a GPU: it invalidates that
// capture). Its calls check the runtime's eager flag.
type arFake struct{ fakeRunner }

func (r *arFake) enqueue(stream, _ uint64, _ int64, eager bool) error {
	return r.fakeRunner.enqueue(stream, gemmPtrs{}, !eager)
}

// openFakeARFenced opens an all-reduce handle whose runner is an arFake.
func openFakeARFenced(t *testing.T, f *fakeDevice) (uint64, *arFake) {
	t.Helper()
	r := &arFake{fakeRunner{d: f, m: -1}}
	c, _ := dev.newCounter()
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	f.open[&r.fakeRunner] = true
	return addHandle(&liveRunner{ar: &arUnit{unit: unit{closeFn: r.close, fenceFn: r.fence, held: c}, r: r}, dtype: "bf16"}), r
}

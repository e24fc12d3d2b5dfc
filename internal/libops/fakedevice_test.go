package libops

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// The fake device the runtime's tests run its lifetime rules against
// (split from runtime_test.go). Its graphs fault as a GPU would: a replay
// of a graph that touches a closed runner's memory fails the test
// (TestFakeFaults shows the fake can fail); so do an open or close outside
// the relaxed capture mode while a stream is being captured.

const fakeOpenReq = `{"kernel":"matmulrs","m":1048576,"n":1024,"k":1024,"world":2,"rank":1,"dtype":"bf16","device":0,"config":{"algo":0,"batch":0,"chunks":2,"graph":1,"impl":"pipeline","push":"ce","reduce":"kernel","reduce_blocks":132,"sm_reserve":0,"streams":1}}`

// fakeDevice: streams in capturing are being captured, each by its own
// capture (ids from 1); a capture's graph holds the counters it was given
// and remembers the runners whose calls it recorded.
type fakeDevice struct {
	mu        sync.Mutex
	capturing map[uint64]uint64 // stream -> capture id
	graphs    map[uint64]*fakeGraph
	nextID    uint64
	calls     []fakeCall
	open      map[*fakeRunner]bool
	bytes     int64 // each runner's
	refuse    bool  // opening a runner fails
	err       error // every call's error (a poisoned workspace)
	// deferLater: closeLater queues its closes in later until runLater
	// (the engine's thread, which runs whenever it likes).
	deferLater bool
	later      []func() error
	// relaxedDepth: opens and closes under way in the relaxed capture
	// mode. One outside it while any stream is being captured fails: a GPU
	// refuses a graph's destroy or a module's unload then in the default
	// mode (another thread's global capture), and the runtime keeps its
	// opens (module loads) to the same rule.
	relaxedDepth int
}

func (f *fakeDevice) relaxed(fn func() error) error {
	f.mu.Lock()
	f.relaxedDepth++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.relaxedDepth--
		f.mu.Unlock()
	}()
	return fn()
}

// defaultModeWork is the error of an open or close (what: "m=8 closed")
// outside the relaxed mode while a stream is being captured; f.mu held.
func (f *fakeDevice) defaultModeWork(what string) error {
	if f.relaxedDepth > 0 {
		return nil
	}
	for s := range f.capturing {
		return fmt.Errorf("%s in the default capture mode while stream %d is being captured: refused, and that capture invalidated", what, s)
	}
	return nil
}

// runLater runs the closes closeLater queued, as the engine's thread
// would at this moment.
func (f *fakeDevice) runLater(t *testing.T) {
	t.Helper()
	work := f.later
	f.later = nil
	for _, close := range work {
		if err := close(); err != nil {
			t.Fatalf("the engine's thread: %v", err)
		}
	}
}

type fakeGraph struct {
	counters  []*goCounter
	runners   []*fakeRunner
	destroyed bool
}

type fakeCall struct {
	m      int
	stream uint64
	p      gemmPtrs
}

// fakeRunner: last is the stream of its latest eager call, after which
// its memory is freed: at close, where no fence marked that point before
// (as a GPU's runner records it then), which a capture on that stream
// would take into its graph.
type fakeRunner struct {
	d       *fakeDevice
	m       int
	closed  bool
	last    uint64
	hasLast bool
	fenced  bool
}

// useFake makes a fake the device, with a runtime of its own, for t.
func useFake(t *testing.T) *fakeDevice {
	t.Helper()
	f := &fakeDevice{capturing: map[uint64]uint64{}, graphs: map[uint64]*fakeGraph{}, open: map[*fakeRunner]bool{}, bytes: 1 << 20}
	runtimeMu.Lock()
	old, oldRunners, oldZombies, oldLRU := dev, runners, zombies, lru
	oldUnits, oldBytes := maxUnits, maxUnitBytes
	dev, runners, zombies, closedHandles, lru = f, map[uint64]*liveRunner{}, nil, nil, unitLRU{}
	poisoned.Store(nil)
	runtimeMu.Unlock()
	t.Cleanup(func() {
		runtimeMu.Lock()
		maxUnits, maxUnitBytes = oldUnits, oldBytes
		dev, runners, zombies, closedHandles, lru = old, oldRunners, oldZombies, nil, oldLRU
		poisoned.Store(nil)
		runtimeMu.Unlock()
	})
	return f
}

// beginCapture starts a capture on stream: its id.
func (f *fakeDevice) beginCapture(stream uint64) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.capturing[stream] = f.nextID
	f.graphs[f.nextID] = &fakeGraph{}
	return f.nextID
}

func (f *fakeDevice) endCapture(stream uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.capturing, stream)
}

// destroy destroys capture id's graph: its holds are released.
func (f *fakeDevice) destroy(id uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.graphs[id]
	g.destroyed = true
	for _, c := range g.counters {
		c.n.Add(-1)
	}
}

// replay replays capture id's graph: an error where it touches a closed
// runner (on a GPU: an illegal memory access, or silently wrong results).
func (f *fakeDevice) replay(id uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.graphs[id]
	if g.destroyed {
		return fmt.Errorf("graph %d: destroyed", id)
	}
	for _, r := range g.runners {
		if r.closed {
			return fmt.Errorf("graph %d replays the m=%d runner, freed under it", id, r.m)
		}
	}
	return nil
}

func (f *fakeDevice) capture(stream uint64) (bool, uint64, func(counter) error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.capturing[stream]
	if !ok {
		return false, 0, nil, nil
	}
	return true, id, func(c counter) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		gc := c.(*goCounter)
		gc.n.Add(1)
		f.graphs[id].counters = append(f.graphs[id].counters, gc)
		return nil
	}, nil
}

func (f *fakeDevice) newCounter() (counter, error) { return &goCounter{}, nil }

func (f *fakeDevice) openGemm(gemmOpen) (gemmOpDevice, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.defaultModeWork("a GEMM op opened"); err != nil {
		return nil, err
	}
	return fakeOp{f}, nil
}

func (f *fakeDevice) engineBytes() (int64, int64) { return 96 << 20, 0 }

func (f *fakeDevice) watchCode() func() { return func() {} }

func (f *fakeDevice) closeLater(_ int, close func() error, onErr func(error)) {
	if f.deferLater {
		f.later = append(f.later, close)
		return
	}
	if err := close(); err != nil {
		onErr(err)
	}
}

type fakeOp struct{ d *fakeDevice }

func (o fakeOp) open(m int) (gemmUnitRunner, string, error) {
	if o.d.refuse {
		return nil, "", errors.New("out of memory")
	}
	o.d.mu.Lock()
	defer o.d.mu.Unlock()
	if err := o.d.defaultModeWork(fmt.Sprintf("m=%d opened", m)); err != nil {
		return nil, "", err
	}
	r := &fakeRunner{d: o.d, m: m}
	o.d.open[r] = true
	return r, "", nil
}

func (o fakeOp) close() error {
	o.d.mu.Lock()
	defer o.d.mu.Unlock()
	return o.d.defaultModeWork("a GEMM op (its peers' barrier module) closed")
}

func (r *fakeRunner) enqueue(stream uint64, p gemmPtrs, capturing bool) error {
	if r.d.err != nil {
		return r.d.err
	}
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	if r.closed {
		return fmt.Errorf("m=%d: enqueue on a closed runner", r.m)
	}
	if _, ok := r.d.capturing[stream]; ok != capturing {
		return fmt.Errorf("m=%d on stream %d: told capturing %v, captured %v", r.m, stream, capturing, ok)
	}
	r.d.calls = append(r.d.calls, fakeCall{r.m, stream, p})
	if id, ok := r.d.capturing[stream]; ok {
		r.d.graphs[id].runners = append(r.d.graphs[id].runners, r)
	} else {
		r.last, r.hasLast, r.fenced = stream, true, false
	}
	return nil
}

func (r *fakeRunner) fence() (bool, error) {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	if _, capturing := r.d.capturing[r.last]; r.hasLast && capturing {
		return false, nil
	}
	r.fenced = true
	return true, nil
}

func (r *fakeRunner) deviceBytes() int64 { return r.d.bytes }

func (r *fakeRunner) close() error {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	if r.closed {
		return fmt.Errorf("m=%d: closed twice", r.m)
	}
	if err := r.d.defaultModeWork(fmt.Sprintf("m=%d closed", r.m)); err != nil {
		return err
	}
	if _, capturing := r.d.capturing[r.last]; r.hasLast && !r.fenced && capturing {
		return fmt.Errorf("m=%d: its free waits for a point on stream %d, which is being captured: the capture takes it in", r.m, r.last)
	}
	r.closed = true
	delete(r.d.open, r)
	return nil
}

// openFakeAR opens an all-reduce handle on the fake device.
func openFakeAR(t *testing.T) uint64 {
	t.Helper()
	c, _ := dev.newCounter()
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	return addHandle(&liveRunner{ar: &arUnit{unit: unit{closeFn: func() error { return nil }, held: c}, r: &fakeARRunner{}}, dtype: "bf16"})
}

// fakeARRunner is an all-reduce runner whose calls return err.
type fakeARRunner struct{ err error }

func (f *fakeARRunner) enqueue(uint64, uint64, int64, bool) error { return f.err }
func (f *fakeARRunner) deviceBytes() int64                        { return 0 }
func (f *fakeARRunner) fence() (bool, error)                      { return true, nil }
func (f *fakeARRunner) close() error                              { return nil }

func enq(t *testing.T, h, stream uint64, m int) {
	t.Helper()
	if _, err := GemmEnqueue(h, stream, m, 1, 2, 3, 0); err != nil {
		t.Fatalf("m=%d on stream %d: %v", m, stream, err)
	}
}

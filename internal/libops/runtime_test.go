package libops

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The runtime's lifetime rules against a fake device whose graphs fault
// as a GPU would: a replay of a graph that touches a closed runner's
// memory fails the test (TestFakeFaults shows the fake can fail).

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

// TestUnitsBoundedAcrossShapes: a thousand row counts, as chunked prefill
// brings, keep at most maxUnits runners open, each call on its own m's.
func TestUnitsBoundedAcrossShapes(t *testing.T) {
	h, f := openFake(t, "bf16")
	for i := 1; i <= 1000; i++ {
		enq(t, h, 1, 2*i)
		if got := f.calls[len(f.calls)-1].m; got != 2*i {
			t.Fatalf("call %d ran the m=%d runner", 2*i, got)
		}
	}
	s := Stats()
	if s.Units > maxUnits || s.UnitBytes > maxUnitBytes || len(f.open) != s.Units {
		t.Errorf("stats %+v with %d runners open: want at most %d units, %d bytes", s, len(f.open), maxUnits, maxUnitBytes)
	}
	if s.DeviceBytes != s.EngineBytes+s.UnitBytes {
		t.Errorf("stats %+v: device bytes are not the engine's and the units'", s)
	}
}

// TestGraphKeepsItsRunners: a graph captured at one m replays right while
// a thousand other row counts come and go, and what it holds is freed at
// the first eager call after the graph is destroyed, not before.
func TestGraphKeepsItsRunners(t *testing.T) {
	cases := []struct {
		name    string
		retire  bool // the handle is retired (its region grew) after the capture
		destroy bool
	}{
		{"kept, evicted", false, false},
		{"kept, retired", true, false},
		{"destroyed, evicted", false, true},
		{"destroyed, retired", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, f := openFake(t, "bf16")
			enq(t, h, 1, 64) // the warm-up
			id := f.beginCapture(7)
			enq(t, h, 7, 64)
			enq(t, h, 7, 64) // a second call in the same capture takes no second hold
			f.endCapture(7)
			other := h
			if c.retire {
				if _, err := Retire([]uint64{h}); err != nil {
					t.Fatal(err)
				}
				other, _, _ = GemmOpen([]byte(fakeOpenReq), []uint64{1 << 20, 2 << 20}, 4096)
			}
			for i := 1; i <= 300; i++ {
				enq(t, other, 1, 128+2*i)
				if err := f.replay(id); err != nil {
					t.Fatalf("after %d other calls: %v", i, err)
				}
			}
			if s := Stats(); s.GraphHeld != 1 {
				t.Fatalf("stats %+v: want the captured runner held by its graph", s)
			}
			if !c.destroy {
				return
			}
			f.destroy(id)
			enq(t, other, 1, 4096) // an eager call reaps
			s := Stats()
			if s.GraphHeld != 0 || s.ZombieBytes != 0 {
				t.Errorf("stats %+v after the graph was destroyed: want nothing kept for it", s)
			}
			if c.retire {
				if _, err := liveHandle(h); err == nil {
					t.Errorf("retired handle %d still open", h)
				}
			}
		})
	}
}

// TestReapReportsRetiredHandles: runtime.reap names a retired handle once
// the graphs holding it are gone, so Python frees its region then.
func TestReapReportsRetiredHandles(t *testing.T) {
	h, f := openFake(t, "bf16")
	enq(t, h, 1, 64)
	id := f.beginCapture(7)
	enq(t, h, 7, 64)
	f.endCapture(7)
	ans, err := Retire([]uint64{h})
	if err != nil || len(ans.Kept) != 1 || ans.Kept[0] != h {
		t.Fatalf("retire: %+v, %v; want %d kept", ans, err, h)
	}
	if r := Reap(); len(r.Closed) != 0 {
		t.Fatalf("reap with the graph alive: %+v", r)
	}
	var b *BadInputError
	if _, err := GemmEnqueue(h, 1, 64, 1, 2, 3, 0); !errors.As(err, &b) || !strings.Contains(b.Msg, "retired") {
		t.Errorf("call on a retired handle: %v", err)
	}
	f.destroy(id)
	if r := Reap(); len(r.Closed) != 1 || r.Closed[0] != h {
		t.Errorf("reap after the graph was destroyed: %+v, want [%d]", r, h)
	}
	if r := Reap(); len(r.Closed) != 0 {
		t.Errorf("second reap: %+v, want nothing", r)
	}
}

// TestFirstCallInCaptureRefused: a row count never called eagerly cannot
// open inside a capture; it says so, and the capture can carry on.
func TestFirstCallInCaptureRefused(t *testing.T) {
	h, f := openFake(t, "bf16")
	f.beginCapture(7)
	_, err := GemmEnqueue(h, 7, 96, 1, 2, 3, 0)
	var ce *CaptureError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "m=96") {
		t.Fatalf("first call in a capture: %v, want a CaptureError naming m=96", err)
	}
	if len(f.calls) != 0 || len(f.open) != 0 {
		t.Errorf("%d calls and %d runners after the refusal", len(f.calls), len(f.open))
	}
}

// TestRowsChecked: m past the handle's, or not divisible by the world.
func TestRowsChecked(t *testing.T) {
	h, _ := openFake(t, "bf16")
	for _, m := range []int{0, -2, 3, 1048578} {
		var b *BadInputError
		if _, err := GemmEnqueue(h, 1, m, 1, 2, 3, 0); !errors.As(err, &b) || !strings.Contains(b.Msg, fmt.Sprintf("m=%d", m)) {
			t.Errorf("m=%d: %v, want bad input naming it", m, err)
		}
	}
}

// TestFakeFaults: the fake device can fail. A runner closed under a graph
// that holds it makes the replay fail, as a GPU's would.
func TestFakeFaults(t *testing.T) {
	h, f := openFake(t, "bf16")
	enq(t, h, 1, 64)
	id := f.beginCapture(7)
	enq(t, h, 7, 64)
	f.endCapture(7)
	for r := range f.open {
		if err := r.close(); err != nil { // what the runtime must never do
			t.Fatal(err)
		}
	}
	if err := f.replay(id); err == nil {
		t.Fatal("a graph replayed over a freed runner without a fault: the fake cannot catch the bug it exists for")
	}
}

// TestThreadsShareTheRuntime: two threads calling at once (each its own
// row counts, and some of the same) are serialized, every call on its m.
func TestThreadsShareTheRuntime(t *testing.T) {
	h, f := openFake(t, "bf16")
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 1; i <= 200; i++ {
				m := 2 * (i%50 + 1 + w*25)
				if _, err := GemmEnqueue(h, uint64(10+w), m, 1, 2, 3, 0); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(f.calls) != 400 {
		t.Errorf("%d calls, want 400", len(f.calls))
	}
}

// TestRetireClosesWhatNoGraphHolds: a handle whose runners no graph
// holds closes at once, every runner of it closed once.
// With another stream being captured meanwhile (a decode thread capturing
// while the prefill thread's workspace grows), the same: the units' and
// the op's closes run in the relaxed capture mode, which the fake's
// closes check (in the default mode a GPU refuses them and invalidates
// that capture).
func TestRetireClosesWhatNoGraphHolds(t *testing.T) {
	for _, otherCapture := range []bool{false, true} {
		t.Run(fmt.Sprintf("another stream captured %v", otherCapture), func(t *testing.T) {
			h, f := openFake(t, "bf16")
			for _, m := range []int{64, 128, 256} {
				enq(t, h, 1, m)
			}
			if otherCapture {
				f.beginCapture(9)
			}
			ans, err := Retire([]uint64{h})
			if err != nil || len(ans.Closed) != 1 || ans.Closed[0] != h || len(ans.Kept) != 0 {
				t.Fatalf("retire: %+v, %v; want %d closed", ans, err, h)
			}
			if p := poisoned.Load(); p != nil {
				t.Fatalf("the runtime stopped: %s", *p)
			}
			if len(f.open) != 0 {
				t.Errorf("%d runners still open", len(f.open))
			}
			if s := Stats(); s.Runners != 0 || s.Units != 0 {
				t.Errorf("stats %+v: want nothing left", s)
			}
		})
	}
}

// TestGrowthKeepsWarmRows: an op opened on a grown workspace with
// warm_from opens the row counts the old one ran, so a capture after the
// growth finds them (one warm-up per shape, in any order), least recently
// used first, so the eviction order carries over.
func TestGrowthKeepsWarmRows(t *testing.T) {
	h, f := openFake(t, "bf16")
	for _, m := range []int{4096, 64, 80} {
		enq(t, h, 1, m)
	}
	req := strings.Replace(fakeOpenReq, `"config"`, fmt.Sprintf(`"warm_from":%d,"config"`, h), 1)
	h2, _, err := GemmOpen([]byte(req), []uint64{1 << 20, 2 << 20}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for u := lru.front; u != nil; u = u.newer {
		if u.op == runners[h2].gemm {
			order = append(order, u.m)
		}
	}
	if !slices.Equal(order, []int{4096, 64, 80}) {
		t.Errorf("warmed row counts in the list %v, want the old handle's call order [4096 64 80]", order)
	}
	if _, err := Retire([]uint64{h}); err != nil {
		t.Fatal(err)
	}
	f.beginCapture(7)
	for _, m := range []int{64, 80, 4096} {
		enq(t, h2, 7, m)
	}
	if _, err := GemmEnqueue(h2, 7, 96, 1, 2, 3, 0); err == nil {
		t.Error("a row count never run opened inside the capture")
	}
	var b *BadInputError
	if _, _, err := GemmOpen([]byte(strings.Replace(req, fmt.Sprint(h), "99999", 1)), []uint64{1 << 20, 2 << 20}, 4096); !errors.As(err, &b) {
		t.Errorf("warm_from an unknown handle: %v, want bad input", err)
	}
}

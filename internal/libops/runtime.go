package libops

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/symmtune/symmtune/internal/calltime"
)

// This file owns the lifetime of everything the runtime holds on the
// device for symmtune.torch (docs/runtime.md): one place, in Go, decides
// when each thing is freed.
//
//   - A handle (symmtune_gemm_open, symmtune_allreduce_open) is one op on
//     one symmetric region that Python allocated: a GEMM op is a (kernel,
//     N, K, dtype, config) for every row count up to its M; an all-reduce
//     op a config for every size its region holds.
//   - A unit is what a handle opened on the device for one shape: a GEMM
//     op opens one per row count at its first call (its tables, plans and
//     staging rows; the streams, workspaces and kernels are the device's
//     engine's, shared), an all-reduce op one in all.
//   - A unit that a CUDA graph capture used is held by that graph: the
//     capture's graph gets a CUDA user object whose destructor takes one
//     off the unit's hold count when the last graph made from it is
//     destroyed. A unit is closed only when nothing uses it and its count
//     is 0; until then it is a zombie, and the next eager call (or
//     runtime.reap) closes it once the graphs are gone.
//   - GEMM units are evicted least recently used past maxUnits or
//     maxUnitBytes, so memory does not grow with the number of shapes.
//   - Retiring a handle (its region's generation was replaced) closes its
//     units as above; once all are closed the handle is closed and
//     runtime.reap reports it, so Python may free the region.
//
// Every entry point takes runtimeMu: calls into the runtime are one at a
// time (they only enqueue, microseconds each), which also keeps the
// device's shared engine to one call at a time.

// Bounds of the GEMM units kept open that no graph holds (what graphs
// hold stays, however much): the defaults, and what a program's
// environment sets (unitBoundsFromEnv, read at each GEMM op's open).
const (
	defaultMaxUnits   = 64
	defaultMaxUnitMiB = 256
)

var (
	maxUnits           = defaultMaxUnits
	maxUnitBytes int64 = defaultMaxUnitMiB << 20
)

// counter is a unit's hold count: the graphs holding it. The cuda build's
// lives in C memory, where the driver's destructor thread decrements it.
type counter interface {
	Load() int32
	Free()
}

// device is what the runtime asks of the GPU; the cuda build sets it
// (gemmrun_cuda.go), tests fake it.
type device interface {
	// capture says whether stream is being captured, and then the
	// capture's id and a function that makes its graph hold c.
	capture(stream uint64) (capturing bool, id uint64, hold func(c counter) error, err error)
	newCounter() (counter, error)
	// openGemm opens what op o needs on the device whatever its rows
	// (the peers' view of the region; the device's shared engine).
	openGemm(o gemmOpen) (gemmOpDevice, error)
	// engineBytes is what the shared engines hold on the device: their
	// own buffers and modules, and what their memory pools hold (the
	// runners' memory, and freed blocks kept for reuse; 0 without pools).
	engineBytes() (own, pool int64)
	// watchCode is called after a unit opens, before its first launch;
	// the function it returns, after that launch: what the device lost
	// between them (the kernels cuBLASLt loads lazily at a first launch)
	// counts as the engines' own.
	watchCode() func()
	// closeLater runs f, the closing of a unit of device ordinal's that
	// nothing uses any more, off the caller's thread where the device
	// has one for it (the engine's), else now; onErr gets its error.
	closeLater(ordinal int, f func() error, onErr func(error))
	// relaxed runs f, an open or a close, in the relaxed capture mode on
	// its thread: while another thread captures in torch's global mode, a
	// close that destroys graphs or unloads modules in the default mode is
	// refused and invalidates that capture (seen on 1 x H100, 2026-12-06);
	// an open loads modules and plans, which that mode may refuse too (not
	// measured; the relaxed mode permits them either way). Every open and
	// close of a GEMM op or unit goes through it. Not the all-reduce's
	// open: it synchronizes the device, which no mode permits during a
	// capture (docs/runtime.md: warm up before any capture).
	relaxed(f func() error) error
}

var dev device = noDevice{}

// gemmOpDevice is a GEMM op's part on the device.
type gemmOpDevice interface {
	// open opens the runner for m rows, and a warning when the config had
	// to change (the op's config does not run at m: m's default runs).
	open(m int) (gemmUnitRunner, string, error)
	close() error
}

// gemmUnitRunner is a GEMM runner for one row count.
type gemmUnitRunner interface {
	// enqueue runs one call; capturing: stream is being captured (the
	// runtime asked the driver already).
	enqueue(stream uint64, p gemmPtrs, capturing bool) error
	deviceBytes() int64
	// fence marks, now, the point on the stream of its latest eager call
	// after which its memory may be freed, for a close that may run later
	// on another thread; false while that stream is being captured (no
	// point can be marked: try at a later call).
	fence() (bool, error)
	close() error
}

// unit is one thing a handle opened on the device, with the graphs that
// hold it.
type unit struct {
	closeFn func() error
	fenceFn func() (bool, error) // nil: its close needs no fence
	bytes   int64
	held    counter
	capture uint64 // the latest capture that took a hold (ids start at 1)
}

// closable says whether u can be closed now: no graph holds it and its
// fence is marked. A fence that fails stops the runtime (closeFailed):
// the unit stays open, so nothing is freed under work in flight.
func (u *unit) closable() bool {
	if u.heldByGraph() {
		return false
	}
	if u.fenceFn == nil {
		return true
	}
	ok, err := u.fenceFn()
	if err != nil {
		closeFailed(err)
		return false
	}
	return ok
}

// note takes a hold for the capture of stream, once per capture.
func (u *unit) note(capturing bool, id uint64, hold func(counter) error) error {
	if !capturing || id == u.capture {
		return nil
	}
	if err := hold(u.held); err != nil {
		return fmt.Errorf("keep the runner alive for the CUDA graph being captured: %w", err)
	}
	u.capture = id
	return nil
}

func (u *unit) heldByGraph() bool { return u.held.Load() > 0 }

func (u *unit) close() error {
	err := dev.relaxed(u.closeFn)
	u.held.Free()
	return err
}

// The runtime's state, under runtimeMu.
var (
	runtimeMu  sync.Mutex
	runners    = map[uint64]*liveRunner{}
	nextHandle uint64
	// zombies are units no handle uses any more that graphs still hold.
	zombies []*zombie
	// closedHandles are retired handles closed since the last reap.
	closedHandles []uint64
	// poisoned, once set, is every later call's error (fail-stop).
	poisoned atomic.Pointer[string]
)

type zombie struct {
	u      *unit
	handle uint64 // the retired handle it belonged to (0: evicted from a live one)
}

// liveRunner is one handle: a GEMM op (units by rows) or an all-reduce
// runner (one unit). scaled: an FP8 GEMM's (dtype e4m3 or e4m3_row),
// whose calls carry scales. retired: its region was replaced; it takes no
// calls and closes once no graph holds its units.
type liveRunner struct {
	gemm    *gemmOp
	ar      *arUnit
	dtype   string
	scaled  bool
	retired bool
}

// gemmOp is a GEMM handle: the checked open request (its problem at the
// largest M) and the units opened so far, by M.
type gemmOp struct {
	o     gemmOpen
	dev   gemmOpDevice
	units map[int]*gemmUnit
	warn  map[int]string // each M's warning, given once
	// evicted: the row counts whose unit the bounds closed (not opened
	// since), so that a capture that meets one can say why it is gone.
	evicted map[int]bool
}

// gemmUnit is a GEMM handle's unit for m rows, in lru.
type gemmUnit struct {
	unit
	r            gemmUnitRunner
	op           *gemmOp
	m            int
	older, newer *gemmUnit // lru's neighbours
}

type arUnit struct {
	unit
	r allreduceRunner
}

func addHandle(lr *liveRunner) uint64 {
	nextHandle++
	runners[nextHandle] = lr
	return nextHandle
}

func liveHandle(h uint64) (*liveRunner, error) {
	lr := runners[h]
	if lr == nil {
		return nil, bad("handle %d: not open", h)
	}
	return lr, nil
}

// errCapture is the error of a call that would open a runner inside a
// capture (cmd/libsymmtune's code SYMMTUNE_CAPTURE).
var errCapture = errors.New("needs a warm-up")

// CaptureError is a call that cannot run inside a CUDA graph capture.
type CaptureError struct{ Msg string }

func (e *CaptureError) Error() string { return e.Msg }

// gemmCall enqueues one call of op at m rows on stream: its unit for m is
// opened first (never inside a capture), and a capture takes a hold on
// it. An eager call first closes the zombies graphs no longer hold.
func gemmCall(h uint64, op *gemmOp, m int, stream uint64, p gemmPtrs) (string, error) {
	capturing, id, hold, err := dev.capture(stream)
	if err != nil {
		return "", err
	}
	calltime.Mark("capture query")
	if !capturing {
		reap()
		calltime.Mark("reap")
	}
	u := op.units[m]
	warning := ""
	if u == nil {
		if capturing {
			return "", captureError(op, m)
		}
		if u, warning, err = openUnit(op, m); err != nil {
			return "", err
		}
		calltime.Mark("open unit")
		defer func() { evict(u); calltime.Mark("evict") }()
		defer dev.watchCode()() // around the unit's first launch
		calltime.Mark("watch code")
	}
	lru.touch(u)
	if err := u.note(capturing, id, hold); err != nil {
		return "", err
	}
	calltime.Mark("note")
	if err := u.r.enqueue(stream, p, capturing); err != nil {
		return "", enqueueErr(err)
	}
	calltime.Mark("enqueue rest")
	return warning, nil
}

// captureError is the error of op's call at m rows inside a capture,
// where m's unit is not open: never warmed up, or closed since by the
// bounds (more row counts were warmed up than they keep).
func captureError(op *gemmOp, m int) *CaptureError {
	call := fmt.Sprintf("%s call with m=%d (n=%d, k=%d)", op.o.kernel, m, op.o.prob.N, op.o.prob.K)
	if op.evicted[m] {
		return &CaptureError{fmt.Sprintf("the %s came during a CUDA graph capture after its runner was closed: its warm-up was followed by first calls at more row counts than are kept open (%d, or %d MiB; graphs keep theirs), so the least recently used closed, and a capture cannot open one; warm up each shape right before its capture, or raise $%s (or $%s)",
			call, maxUnits, maxUnitBytes>>20, UnitsEnv, UnitMiBEnv)}
	}
	return &CaptureError{fmt.Sprintf("the first %s came during a CUDA graph capture, where its runner cannot be opened; make the same call once before the capture (a warm-up)", call)}
}

// openUnit opens op's unit for m rows: the warning of its open, the
// first time (empty: none).
func openUnit(op *gemmOp, m int) (*gemmUnit, string, error) {
	var r gemmUnitRunner
	var w string
	err := dev.relaxed(func() (err error) {
		r, w, err = op.dev.open(m)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	delete(op.evicted, m)
	c, err := dev.newCounter()
	if err != nil {
		return nil, "", errors.Join(err, dev.relaxed(r.close))
	}
	u := &gemmUnit{unit: unit{closeFn: r.close, fenceFn: r.fence, bytes: r.deviceBytes(), held: c}, r: r, op: op, m: m}
	op.units[m] = u
	lru.push(u)
	warning := ""
	if w != "" && op.warn[m] == "" {
		op.warn[m], warning = w, w
	}
	return u, warning, nil
}

// warmFrom opens on op the row counts handle from has open (a workspace
// grew: from's op moves to new memory, and a capture after the growth
// finds its warmed-up row counts open), least recently used first.
func warmFrom(op *gemmOp, from uint64) error {
	lr := runners[from]
	if lr == nil || lr.gemm == nil || lr.retired {
		return bad("warm_from %d: not an open GEMM handle", from)
	}
	// The list holds every open unit, oldest first; a handle's units are
	// its op's (Retire takes a retired handle's out).
	ms := make([]int, 0, len(lr.gemm.units))
	for u := lru.front; u != nil; u = u.newer {
		if u.op == lr.gemm {
			ms = append(ms, u.m)
		}
	}
	for _, m := range ms {
		if _, _, err := openUnit(op, m); err != nil {
			return err
		}
	}
	return nil
}

// evict closes the least recently used GEMM units past the bounds (those
// graphs hold become zombies), keeping keep, the one just opened.
func evict(keep *gemmUnit) {
	for lru.count > maxUnits || lru.bytes > maxUnitBytes {
		u := lru.front
		if u == keep {
			u = u.newer
		}
		if u == nil {
			return
		}
		lru.remove(u)
		delete(u.op.units, u.m)
		if len(u.op.evicted) >= maxEvictedRemembered {
			clear(u.op.evicted) // a bound; a capture after it only words its error as a first call's
		}
		u.op.evicted[u.m] = true
		// Closed on the engine's thread: a first call's eviction costs
		// its caller a hand-over, not the runner's teardown. Its fence is
		// marked here, on the caller's thread in an eager call: marked on
		// the engine's thread later, it could land in a capture the
		// program began meanwhile on the runner's last stream.
		if u.closable() {
			dev.closeLater(u.op.o.device, u.close, closeFailed)
		} else {
			zombies = append(zombies, &zombie{u: &u.unit})
		}
	}
}

// dispose closes u, or keeps it as a zombie while graphs hold it or its
// last stream is being captured: whether it kept it.
func dispose(u *unit, handle uint64) (kept bool) {
	if !u.closable() {
		zombies = append(zombies, &zombie{u: u, handle: handle})
		return true
	}
	if err := u.close(); err != nil {
		closeFailed(err)
	}
	return false
}

// reap closes the zombies no graph holds any more, and the retired
// handles left without units.
func reap() {
	if len(zombies) == 0 {
		return
	}
	var kept []*zombie
	for _, z := range zombies {
		if !z.u.closable() {
			kept = append(kept, z)
			continue
		}
		if err := z.u.close(); err != nil {
			closeFailed(err)
		}
	}
	still := map[uint64]bool{}
	for _, z := range kept {
		still[z.handle] = true
	}
	for _, z := range zombies {
		if z.handle != 0 && !still[z.handle] {
			closeRetired(z.handle)
		}
	}
	zombies = kept
}

// closeRetired closes retired handle h, whose units are all closed, and
// keeps it for runtime.reap's answer.
func closeRetired(h uint64) {
	if closeHandle(h) {
		closedHandles = append(closedHandles, h)
	}
}

// closeHandle closes retired handle h: whether it was open.
func closeHandle(h uint64) bool {
	lr := runners[h]
	if lr == nil || !lr.retired {
		return false
	}
	delete(runners, h)
	if lr.gemm != nil && lr.gemm.dev != nil {
		if err := dev.relaxed(lr.gemm.dev.close); err != nil {
			poison(fmt.Sprintf("closing a GEMM op failed: %v", err))
		}
	}
	return true
}

// closeFailed poisons the runtime after a failed close (the device's
// state is unknown); any thread may call it.
func closeFailed(err error) { poison(fmt.Sprintf("closing a runner failed: %v", err)) }

// poison makes every later call fail: the device's state is unknown.
func poison(msg string) { poisoned.CompareAndSwap(nil, &msg) }

func checkPoisoned() error {
	if p := poisoned.Load(); p != nil {
		return fmt.Errorf("symmtune runtime stopped after an earlier failure: %s", *p)
	}
	return nil
}

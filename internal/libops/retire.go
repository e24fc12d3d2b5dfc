package libops

import (
	"errors"
	"sort"
	"sync/atomic"

	"github.com/symmtune/symmtune/internal/calltime"
)

// This file is the runtime's lifetime operations (runtime.retire,
// runtime.reap, runtime.stats) over runtime.go's state, and the device
// without CUDA.

// RetireAnswer is runtime.retire's answer: the handles closed now, and
// those kept until the CUDA graphs holding them are destroyed (then
// runtime.reap reports them).
type RetireAnswer struct {
	Closed []uint64 `json:"closed"`
	Kept   []uint64 `json:"kept"`
}

// Retire retires each handle: it takes no more calls, its units close
// now or, where graphs hold them, once those graphs are destroyed.
func Retire(handles []uint64) (RetireAnswer, error) {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	ans := RetireAnswer{Closed: []uint64{}, Kept: []uint64{}}
	var first error
	for _, h := range handles {
		lr, err := liveHandle(h)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		lr.retired = true
		held := false
		for _, u := range lr.units() {
			held = dispose(u, h) || held
		}
		if lr.gemm != nil {
			for _, u := range lr.gemm.units {
				lru.remove(u)
			}
			lr.gemm.units = map[int]*gemmUnit{}
		}
		if held {
			ans.Kept = append(ans.Kept, h)
		} else {
			closeHandle(h) // answered here, not by a later reap
			ans.Closed = append(ans.Closed, h)
		}
	}
	sort.Slice(ans.Kept, func(i, j int) bool { return ans.Kept[i] < ans.Kept[j] })
	return ans, first
}

func (lr *liveRunner) units() []*unit {
	var out []*unit
	if lr.ar != nil {
		out = append(out, &lr.ar.unit)
	}
	if lr.gemm != nil {
		ms := make([]int, 0, len(lr.gemm.units))
		for m := range lr.gemm.units {
			ms = append(ms, m)
		}
		sort.Ints(ms)
		for _, m := range ms {
			out = append(out, &lr.gemm.units[m].unit)
		}
	}
	return out
}

// ReapAnswer is runtime.reap's answer: the retired handles closed since
// the last reap (their regions may be freed now).
type ReapAnswer struct {
	Closed []uint64 `json:"closed"`
}

// Reap closes what no graph holds any more.
func Reap() ReapAnswer {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	reap()
	ans := ReapAnswer{Closed: append([]uint64{}, closedHandles...)}
	closedHandles = nil
	sort.Slice(ans.Closed, func(i, j int) bool { return ans.Closed[i] < ans.Closed[j] })
	return ans
}

// RuntimeStats is runtime.stats's answer: the handles open and of them
// retired, the units open (GEMM runners by row count, all-reduce
// runners), those kept only for graphs, and the device bytes the runtime
// holds beyond the symmetric regions: the shared engines', and the units'.
type RuntimeStats struct {
	Runners      int    `json:"runners"`
	Retired      int    `json:"retired"`
	Units        int    `json:"units"`
	GraphHeld    int    `json:"graph_held"`
	EngineBytes  int64  `json:"engine_bytes"`
	UnitBytes    int64  `json:"unit_bytes"`
	ZombieBytes  int64  `json:"zombie_bytes"`
	PoolBytes    int64  `json:"pool_bytes"`
	DeviceBytes  int64  `json:"device_bytes"`
	PoisonedWith string `json:"poisoned,omitempty"`
}

// Stats is runtime.stats's answer (after a reap).
func Stats() RuntimeStats {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	reap()
	s := RuntimeStats{Runners: len(runners)}
	s.EngineBytes, s.PoolBytes = dev.engineBytes()
	for _, lr := range runners {
		if lr.retired {
			s.Retired++
		}
		for _, u := range lr.units() {
			s.Units++
			s.UnitBytes += u.bytes
		}
	}
	for _, z := range zombies {
		s.Units++
		s.GraphHeld++
		s.ZombieBytes += z.u.bytes
	}
	// The pool holds the units' memory (rounded up to its granularity)
	// and freed blocks it keeps; without a pool (fakes) the units count.
	s.DeviceBytes = s.EngineBytes + max(s.PoolBytes, s.UnitBytes+s.ZombieBytes)
	if p := poisoned.Load(); p != nil {
		s.PoisonedWith = *p
	}
	return s
}

func runtimeOps() map[string]op {
	return map[string]op{
		"runtime.retire": handler("{handles}: the handles take no more calls; their runners close now, or once the CUDA graphs holding them are destroyed; answers {closed, kept}",
			func(r struct {
				Handles []uint64 `json:"handles"`
			}) (any, error) {
				return Retire(r.Handles)
			}),
		"runtime.reap": handler("closes what no CUDA graph holds any more; answers {closed}: the retired handles closed since the last reap",
			func(struct{}) (any, error) { return Reap(), nil }),
		"runtime.stats": handler("the handles, runners and device bytes the runtime holds (beyond the symmetric regions)",
			func(struct{}) (any, error) { return Stats(), nil }),
		"runtime.call_times": handler("with $SYMMTUNE_CALL_TIMES set: each host step of the GEMM calls since the last call_times, {step: {n, median_us, sum_us}}, then forgets them; {} when off",
			func(struct{}) (any, error) { return calltime.Take(), nil }),
	}
}

// noDevice is the device without CUDA.
type noDevice struct{}

func (noDevice) capture(uint64) (bool, uint64, func(counter) error, error) {
	return false, 0, nil, nil
}
func (noDevice) newCounter() (counter, error)            { return &goCounter{}, nil }
func (noDevice) openGemm(gemmOpen) (gemmOpDevice, error) { return nil, errNoCUDA }
func (noDevice) engineBytes() (int64, int64)             { return 0, 0 }
func (noDevice) watchCode() func()                       { return func() {} }
func (noDevice) closeLater(_ int, f func() error, onErr func(error)) {
	if err := f(); err != nil {
		onErr(err)
	}
}
func (noDevice) relaxed(f func() error) error { return f() }

// goCounter is a counter in Go memory (tests, and the device without
// CUDA, where no graph ever holds one). Like the cuda build's C memory it
// must not be read once freed: it panics, so tests catch such a read.
type goCounter struct {
	n     atomic.Int32
	freed atomic.Bool
}

func (c *goCounter) Load() int32 {
	if c.freed.Load() {
		panic("a runner's hold count read after it was freed")
	}
	return c.n.Load()
}

func (c *goCounter) Free() { c.freed.Store(true) }

// errNoCUDA is open's answer in a library that cannot run kernels.
var errNoCUDA = errors.New("this libsymmtune was built without CUDA (go build -tags cuda): it answers the rules but runs no kernel")

//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"strings"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// Engine is what every GEMM runner of one rank shares on its device: the
// cuBLASLt handle and its workspaces (96 MiB, what made each
// runner cost ~124 MiB before), the product, side, reduce and capture
// streams, the fork, join and chunk events, the helper kernels of each
// dtype, the fused GEMMs compiled per tile, the fused status word and the
// local flags. None of it depends on the problem, so a runner per problem
// (per row count M) costs only its plans, its small tables and, for
// matmulrs's copy-engine push, its staging rows.
//
// Sharing is safe because a runner's call forks its streams from the
// caller's stream and joins them back before it returns, and the
// product streams run products one after another: calls ordered on the
// GPU (one caller stream, or streams that wait on each other, as every
// collective of a group must be) never overlap, whichever runners they
// come from. One call is enqueued on an engine at a time (its user holds a
// lock).
//
// A shared engine (NewSharedEngine) allocates its runners' memory from a
// stream-ordered pool of its own on a private stream, and frees it on
// another once the runner's last call is done: opening and closing a
// runner never synchronizes the device nor waits for a caller's stream.
// The pool never makes an allocation wait for GPU work (its reuse follows
// no event dependencies): a block still in use by queued calls is not
// reused until they are done. What it holds, runners' memory and up to
// poolKeepBytes of freed blocks kept for the next runners, is
// PoolBytes.
// A runner made by NewRunner has an engine of its own (the plugin's
// trials), closed with it.
type Engine struct {
	// shared: runners' memory comes from the stream-ordered pool, on
	// allocs (then waited for: the memory is then ready on any stream),
	// and goes back on frees after an event of the runner's last stream
	// (freeEv). A runner's own engine allocates with cuMemAlloc.
	shared bool
	pool   cu.MemPool
	// later runs closed runners' graph destructions on a thread of their
	// own (a shared engine's; done is closed when it has run them all).
	later         chan func() error
	done          chan struct{}
	allocs, frees cu.Stream
	freeEv        cu.Event

	lt      *cublaslt.Handle
	gemm    [maxStreams]cu.Stream
	ws      [maxStreams]cu.DevicePtr
	side    []cu.Stream // MaxWorld-1: a runner takes one per peer
	reduce  cu.Stream
	capture cu.Stream
	fork    cu.Event
	joins   []cu.Event
	chunkEv []cu.Event

	utils      map[string]*utilFns
	fusedGEMMs map[string]*FusedGEMM
	// ranked: a shared engine's cuBLASLt rankings, per product at a
	// power-of-two bucket's top rows (planFor).
	ranked   map[cublaslt.Matmul]*cublaslt.Plan
	rankings int

	status     *cudamem.HostWord
	localFlags cu.DevicePtr

	// What the engine itself holds on the device (OwnBytes): its fixed
	// buffers and its modules, each measured as the driver's free memory
	// moved when it was made. Its runners count their own (Runner.mem).
	fixedBytes, moduleBytes int64
}

// utilFns are gemm_util.cu's kernels, compiled for one dtype.
type utilFns struct {
	mod                                     cu.Module
	fill, fillT, check, bad, copy, red, end cu.Function
	fillScales                              cu.Function // FP8 only
}

// NewSharedEngine makes the engine the runners of a device share, in the
// current context (the device's).
func NewSharedEngine() (*Engine, error) {
	e, err := newEngine()
	if err != nil {
		return nil, err
	}
	e.shared = true
	if err := e.makePool(); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	if err := e.startLater(); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	for _, s := range []*cu.Stream{&e.allocs, &e.frees} {
		if *s, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return nil, errors.Join(fmt.Errorf("create stream: %w", err), e.Close())
		}
	}
	if e.freeEv, err = cu.MakeEvent(cu.DisableTiming); err != nil {
		return nil, errors.Join(fmt.Errorf("create event: %w", err), e.Close())
	}
	return e, nil
}

// poolKeepBytes is what a shared engine's pool keeps of freed blocks for
// the next runners (its release threshold): opening a runner at a new row
// count then maps no new memory, and the bound on what symmtune holds
// (issue 54: 512 MiB beyond the symmetric bytes) keeps room.
const poolKeepBytes = 32 << 20

// makePool makes the shared engine's pool on the current device.
func (e *Engine) makePool() error {
	d, err := cu.CurrentDevice()
	if err != nil {
		return fmt.Errorf("memory pool: %w", err)
	}
	if e.pool, err = cu.MemPoolCreate(int(d)); err != nil {
		return fmt.Errorf("memory pool: %w", err)
	}
	for _, a := range []struct {
		attr  int
		value uint64
	}{
		{cu.PoolReuseFollowEventDependencies, 0},
		{cu.PoolReuseAllowInternalDependencies, 0},
		{cu.PoolReleaseThreshold, poolKeepBytes},
	} {
		if err := e.pool.Set(a.attr, a.value); err != nil {
			return fmt.Errorf("memory pool: %w", err)
		}
	}
	return nil
}

// startLater starts the thread that destroys closed runners' graphs.
// cuGraphExecDestroy waited, on 1 x H200, for the GPU's queued work (a
// first call at a new row count that evicted a unit with a graph took 2.5
// ms behind two queued GEMMs, against 0.25 ms with none): so a runner
// closed on a caller's thread (an eviction at a first call) hands its
// graphs here and returns. The thread has the engine's context current.
func (e *Engine) startLater() error {
	ctx, err := cu.CurrentContext()
	if err != nil {
		return fmt.Errorf("graph destroyer: %w", err)
	}
	e.later, e.done = make(chan func() error, 4096), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(e.done)
		ok := cu.SetCurrentContext(ctx) == nil
		for f := range e.later {
			if ok {
				_ = f() // a graph that cannot be destroyed leaks: no caller is left to tell
			}
		}
	}()
	return nil
}

// destroyLater runs f, a closed runner's graph destruction, on the
// engine's destroyer thread; on an engine of a runner's own, now.
func (e *Engine) destroyLater(f func() error) error {
	if e.later == nil {
		return f()
	}
	e.later <- f
	return nil
}

// maxRanked bounds a shared engine's ranked plans (one per product
// shape and power-of-two row bucket, a few hundred bytes of host memory
// and four descriptors each).
const maxRanked = 1024

// planFor returns a plan of m whose algo-th algorithm runs it. An
// engine of a runner's own (the tuner's trials) ranks algorithms for m
// itself. A shared engine (symmtune.torch's runtime, where a first call
// at a new row count must cost about what a warm call does) ranks them
// once per power-of-two bucket of rows, at its top, and plans every row
// count of the bucket with that ranking: the algorithm a config's algo
// names is then the one ranked at the row count the config was chosen
// for (the bucket's top). Where that algorithm does not run m, m is
// ranked for itself.
func (e *Engine) planFor(m cublaslt.Matmul, algo int) (*cublaslt.Plan, error) {
	if !e.shared || m.Batch > 1 {
		return e.rank(m)
	}
	// Strides mean nothing to one product: the ranking's key has none.
	m.StrideA, m.StrideD = 0, 0
	top := m
	top.M = 1 << bits.Len(uint(m.M-1))
	from := e.ranked[top]
	if from == nil {
		if len(e.ranked) >= maxRanked {
			return e.rank(m)
		}
		var err error
		if from, err = e.rank(top); err != nil {
			return nil, err
		}
		e.ranked[top] = from
	}
	if algo >= from.Algos() {
		return e.rank(m)
	}
	// The runner's own plan (it closes it), with the bucket's ranking.
	p, err := e.lt.PlanFrom(m, from)
	if err != nil {
		return nil, err
	}
	if top.M != m.M {
		if p.Check(algo) != nil { // the bucket's algorithm does not run m: rank m's own
			if err := p.Close(); err != nil {
				return nil, err
			}
			return e.rank(m)
		}
	}
	return p, nil
}

// rank plans m with a heuristic query of its own, counted (Rankings).
func (e *Engine) rank(m cublaslt.Matmul) (*cublaslt.Plan, error) {
	e.rankings++
	return e.lt.Plan(m)
}

// Rankings is how many heuristic queries the engine has made: only a
// new one can name algorithms (cuBLASLt kernels, loaded at their first
// launch) that no call has run yet.
func (e *Engine) Rankings() int { return e.rankings }

// PoolBytes is the device memory a shared engine's pool holds (its
// runners' memory, and freed blocks kept for reuse); 0 for an engine of a
// runner's own.
func (e *Engine) PoolBytes() int64 {
	if !e.shared {
		return 0
	}
	n, err := e.pool.Bytes(cu.PoolReservedMemCurrent)
	if err != nil {
		return 0
	}
	return n
}

func newEngine() (*Engine, error) {
	e := &Engine{utils: map[string]*utilFns{}, fusedGEMMs: map[string]*FusedGEMM{}, ranked: map[cublaslt.Matmul]*cublaslt.Plan{}}
	free0, _, _ := cu.MemGetInfo()
	if err := e.setup(); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	if free1, _, err := cu.MemGetInfo(); err == nil && free0 > free1 {
		e.fixedBytes = free0 - free1
	}
	return e, nil
}

func (e *Engine) setup() error {
	var err error
	if e.lt, err = cublaslt.NewHandle(); err != nil {
		return err
	}
	mk := func() (cu.Stream, error) { return cu.MakeStream(cu.NonBlocking) }
	for i := range e.gemm {
		if e.gemm[i], err = mk(); err != nil {
			return fmt.Errorf("create stream: %w", err)
		}
		if e.ws[i], err = cu.MemAlloc(workspaceBytes); err != nil {
			return fmt.Errorf("allocate cuBLASLt workspace: %w", err)
		}
	}
	for q := 1; q < MaxWorld; q++ {
		s, err := mk()
		if err != nil {
			return fmt.Errorf("create stream: %w", err)
		}
		e.side = append(e.side, s)
	}
	if e.reduce, err = mk(); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	if e.capture, err = mk(); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	ev := func() (cu.Event, error) { return cu.MakeEvent(cu.DisableTiming) }
	if e.fork, err = ev(); err != nil {
		return fmt.Errorf("create event: %w", err)
	}
	// A call joins each stream it forked: the product streams, one side
	// stream per peer and the reduce stream.
	for i := 0; i < maxStreams+MaxWorld; i++ {
		j, err := ev()
		if err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		e.joins = append(e.joins, j)
	}
	for i := 0; i < MaxWorld*MaxChunks; i++ {
		c, err := ev()
		if err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		e.chunkEv = append(e.chunkEv, c)
	}
	if e.status, err = cudamem.NewHostWord(); err != nil {
		return fmt.Errorf("fused status: %w", err)
	}
	if e.localFlags, err = cu.MemAlloc(MaxWorld * MaxChunks * FlagStride); err != nil {
		return fmt.Errorf("allocate local flags: %w", err)
	}
	if err := cu.MemsetD8(e.localFlags, 0, MaxWorld*MaxChunks*FlagStride); err != nil {
		return fmt.Errorf("clear local flags: %w", err)
	}
	return nil
}

// load loads a module, counting what it took of the device's memory.
func (e *Engine) load(cubin []byte) (cu.Module, error) {
	free0, _, _ := cu.MemGetInfo()
	m, err := cu.LoadData(string(cubin))
	if err == nil {
		if free1, _, err := cu.MemGetInfo(); err == nil && free0 > free1 {
			e.moduleBytes += free0 - free1
		}
	}
	return m, err
}

// util is gemm_util.cu's kernels for dtype, compiled and loaded at first
// use.
func (e *Engine) util(dtype string, c nvrtc.Compiler) (*utilFns, error) {
	if u := e.utils[dtype]; u != nil {
		return u, nil
	}
	opts, err := UtilOptions(dtype)
	if err != nil {
		return nil, err
	}
	// After the barrier's source: end_barrier meets the peers with it.
	cubin, err := c.Compile(nvrtc.Source{Name: "gemm_util.cu", Text: cudamem.DeviceSource + UtilSource, Options: opts})
	if err != nil {
		return nil, err
	}
	u := &utilFns{}
	if u.mod, err = e.load(cubin); err != nil {
		return nil, fmt.Errorf("load gemm_util: %w", err)
	}
	fns := []struct {
		name string
		dst  *cu.Function
	}{{"fill", &u.fill}, {"fill_t", &u.fillT}, {"check_rows", &u.check}, {"count_bad", &u.bad}, {"copy_chunk", &u.copy}, {"reduce_chunk", &u.red}, {"end_barrier", &u.end}}
	if strings.HasPrefix(dtype, "e4m3") {
		fns = append(fns, struct {
			name string
			dst  *cu.Function
		}{"fill_scales", &u.fillScales})
	}
	for _, f := range fns {
		if *f.dst, err = u.mod.Function(f.name); err != nil {
			return nil, errors.Join(fmt.Errorf("gemm_util function %s: %w", f.name, err), u.mod.Unload())
		}
	}
	e.utils[dtype] = u
	return u, nil
}

// fused is tile t's fused GEMM for operand format f with the extra NVRTC
// options, compiled and loaded once per engine: every runner of every
// problem shares it (the problem is a launch argument).
func (e *Engine) fused(c nvrtc.Compiler, t hopper.Tile, f hopper.Format, extra []string) (*FusedGEMM, error) {
	key := fmt.Sprintf("%s|%v|%s", t, f, strings.Join(extra, " "))
	if g := e.fusedGEMMs[key]; g != nil {
		return g, nil
	}
	free0, _, _ := cu.MemGetInfo()
	g, err := CompileFusedWith(c, t, f, extra)
	if err != nil {
		return nil, err
	}
	if free1, _, err := cu.MemGetInfo(); err == nil && free0 > free1 {
		e.moduleBytes += free0 - free1
	}
	e.fusedGEMMs[key] = g
	return g, nil
}

// alloc allocates n bytes for a runner, and with b, copies b there: from
// the stream-ordered pool for a shared engine (waiting only for its own
// private stream, so the memory is ready on every stream), else with
// cuMemAlloc.
func (e *Engine) alloc(n int64, b []byte) (cu.DevicePtr, error) {
	if !e.shared {
		d, err := cu.MemAlloc(n)
		if err == nil && b != nil {
			if err = cu.MemcpyHtoD(d, unsafe.Pointer(&b[0]), int64(len(b))); err != nil {
				err = errors.Join(err, cu.MemFree(d))
			}
		}
		return d, err
	}
	d, err := e.pool.AllocAsync(n, e.allocs)
	if err != nil {
		return 0, err
	}
	if b != nil {
		err = cu.MemcpyHtoDAsync(d, unsafe.Pointer(&b[0]), int64(len(b)), e.allocs)
	}
	if err == nil {
		err = e.allocs.Synchronize()
	}
	if err != nil {
		return 0, errors.Join(err, cu.MemFreeAsync(d, e.allocs))
	}
	return d, nil
}

// upload copies b into new runner memory.
func (e *Engine) upload(b []byte) (cu.DevicePtr, error) {
	d, err := e.alloc(int64(len(b)), b)
	if err != nil {
		return 0, fmt.Errorf("fused tables: %w", err)
	}
	return d, nil
}

// free frees runner memory d of n bytes (the runner counts them): on a shared engine once the work
// enqueued on after so far is done (after zero: at once, in the pool's
// order), nothing waiting; on an own engine at once (its runner
// synchronized first).
func (e *Engine) free(d cu.DevicePtr, _ int64, after cu.Stream) error {
	if d == 0 {
		return nil
	}
	if !e.shared {
		return cu.MemFree(d)
	}
	if after != (cu.Stream{}) {
		if err := e.freeEv.Record(after); err != nil {
			return fmt.Errorf("free after the last call: %w", err)
		}
		if err := e.frees.Wait(e.freeEv, 0); err != nil {
			return fmt.Errorf("free after the last call: %w", err)
		}
	}
	return cu.MemFreeAsync(d, e.frees)
}

// Close frees everything, after the GPU's work is done.
func (e *Engine) Close() error {
	var errs []error
	if e.later != nil {
		close(e.later)
		<-e.done
		e.later = nil
	}
	errs = append(errs, cu.Synchronize())
	for _, g := range e.fusedGEMMs {
		errs = append(errs, g.Close())
	}
	e.fusedGEMMs = nil
	for _, p := range e.ranked {
		errs = append(errs, p.Close())
	}
	e.ranked = nil
	for _, u := range e.utils {
		errs = append(errs, u.mod.Unload())
	}
	e.utils = nil
	for _, p := range []*cu.DevicePtr{&e.localFlags, &e.ws[0], &e.ws[1], &e.ws[2]} {
		if *p != 0 {
			errs = append(errs, cu.MemFree(*p))
			*p = 0
		}
	}
	errs = append(errs, e.status.Free())
	e.status = nil
	for _, ev := range append(append([]cu.Event{e.fork, e.freeEv}, e.joins...), e.chunkEv...) {
		if ev != (cu.Event{}) {
			errs = append(errs, cu.DestroyEvent(&ev))
		}
	}
	e.joins, e.chunkEv = nil, nil
	for _, s := range append(append(append([]cu.Stream{}, e.gemm[:]...), e.side...), e.reduce, e.capture, e.allocs, e.frees) {
		if s != (cu.Stream{}) {
			errs = append(errs, s.Destroy())
		}
	}
	e.side = nil
	if e.shared {
		errs = append(errs, e.pool.Destroy())
		e.pool = cu.MemPool{}
	}
	if e.lt != nil {
		errs = append(errs, e.lt.Close())
		e.lt = nil
	}
	return errors.Join(errs...)
}

// OwnBytes is what the engine itself holds on the device: its fixed
// buffers and its modules (its runners' memory is theirs: Runner.DeviceBytes).
func (e *Engine) OwnBytes() int64 { return e.fixedBytes + e.moduleBytes }

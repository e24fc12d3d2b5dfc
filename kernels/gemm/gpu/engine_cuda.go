//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"strings"
	"sync"

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
	// own (a shared engine's).
	later         *laterQueue
	allocs, frees cu.Stream
	freeEv        cu.Event
	freeMu        sync.Mutex

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
	wait                                    cu.Function // wait_flags: Runner.consume's bounded wait
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
// use: one module per dtype, so the runners' end barriers and flag waits
// cost their calls no compile or load.
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
	}{{"fill", &u.fill}, {"fill_t", &u.fillT}, {"check_rows", &u.check}, {"count_bad", &u.bad}, {"copy_chunk", &u.copy}, {"reduce_chunk", &u.red}, {"end_barrier", &u.end}, {"wait_flags", &u.wait}}
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

// Close frees everything, after the GPU's work is done.
func (e *Engine) Close() error {
	var errs []error
	if e.later != nil {
		e.later.close()
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

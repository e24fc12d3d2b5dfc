//go:build cuda

package gpu

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/internal/calltime"
	"github.com/symmtune/symmtune/kernels/internal/graphcache"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// maxStreams is the largest streams value of the space.
const maxStreams = 3

// workspaceBytes is each product stream's cuBLASLt workspace: what cuBLAS
// itself uses on Hopper.
const workspaceBytes = 32 << 20

// Peers is what a Runner needs of the ranks it runs with: this rank's place,
// every rank's symmetric region as mapped here (flag words, then the
// payload: layout.go), the team barrier (barrier.cuh's, on the pointer
// table), and the GPU. cudamem.Team implements it for the plugins;
// cudamem.Mapped for callers whose symmetric memory another runtime made
// (symmtune.torch's, torch's symm_mem).
type Peers interface {
	Rank() int
	World() int
	Data(q int) cu.DevicePtr
	Barrier(stream cu.Stream) error
	// PtrTable is the team's device table of data regions and signal
	// pads that barrier.cuh's block barrier reads (end_barrier).
	PtrTable() cu.DevicePtr
	SMs() int
	ComputeCapability() (major, minor int)
	Compiler() nvrtc.Compiler
}

// poisonWorder is Peers with a poison word (cudamem.Mapped, the runtime's):
// a fused kernel's timed-out wait writes it there instead of the Runner's
// status, so that its end barrier poisons the peers at once (barrier.cuh)
// and the caller reads the workspace's host word (Mapped.Poisoned).
type poisonWorder interface{ PoisonWord() cu.DevicePtr }

// Ptrs are one call's operands. agmm: A the own shard [M/W, K], B stored
// [N, K], C [M, N], Extra (0: none) where the gathered A [M, K] goes.
// matmulrs: A [M, K], B stored [N, K], C this rank's rows of the sum
// [M/W, N], Extra unused. A fused config whose tile is not K-major reads
// B stored [K, N]. Every operand has dense rows at a 16-byte aligned start.
// A and B hold the problem's dtype, C bf16 or f16 (bf16 for FP8).
//
// ScaleA and ScaleB are FP8's fp32 scales (unused otherwise). e4m3: one
// float each (agmm: the same on every rank). e4m3_row: ScaleA one per row
// of A as the caller holds it (agmm: the own shard's [M/W], gathered with
// the rows; matmulrs: [M]), ScaleB one per row of B stored [N, K] ([N]).
type Ptrs struct{ A, B, C, Extra, ScaleA, ScaleB cu.DevicePtr }

// kernel is what differs between the two kernels' launch sequences.
type kernel interface {
	// products lists the steps of c's plan, to prepare their cuBLASLt plans.
	products(c Config) []Step
	// launch enqueues one call on r.main with r.ptr's operands.
	launch(c Config) error
	// tables builds the fused GEMM's device tables of c (fusedRun.comm).
	tables(fr *fusedRun, c Config) error
	// maps points the fused GEMM's tensor maps at r.ptr's operands.
	maps(fr *fusedRun, c Config) error
}

type planKey struct {
	rows, batch, smTarget int
	slow                  bool // fast_accum=0
}

// Runner is the launch sequence of one rank's GPU GEMM (kernel, problem,
// dtype, peers), for any config of the kernel: its streams, events,
// cuBLASLt plans and workspaces, helper kernels, fused GEMMs and graphs,
// made once and kept. Enqueue runs one call on the caller's stream, in the
// context current on the caller's thread; it starts no goroutine. A Runner
// serves one caller at a time.
type Runner struct {
	v     Variant
	peers Peers
	prob  Problem
	kern  kernel

	lt      *cublaslt.Handle
	plans   map[planKey]*cublaslt.Plan
	gemm    [maxStreams]cu.Stream
	ws      [maxStreams]cu.DevicePtr
	side    []cu.Stream // one per peer: agmm's pulls, matmulrs's pushes
	reduce  cu.Stream
	capture cu.Stream // where graph=1's calls are captured
	fork    cu.Event
	joins   []cu.Event
	// chunkEv: agmm, pull of chunk c from peer i is chunkEv[i*MaxChunks+c];
	// matmulrs, product step i is chunkEv[i].
	chunkEv []cu.Event

	util                            cu.Module
	fillFn, fillTFn, checkFn, badFn cu.Function
	copyFn, redFn                   cu.Function
	endFn                           cu.Function // a fused call's flag clear and end barrier
	waitFn                          cu.Function // a stream's bounded wait for a peer's flag (consume)
	fillScalesFn                    cu.Function // FP8 only

	// eng is the engine the runner takes its streams, events, workspaces
	// and kernels from (ownEngine: made for it alone); mem is the device
	// memory it allocated itself (tables, staging), by address.
	eng       *Engine
	ownEngine bool
	mem       map[cu.DevicePtr]int64
	// last is the point after the latest eager call: the runner's memory
	// is freed after it (captured calls are in the caller's graph, which
	// holds the runner); Fence marks it before a Close that runs later.
	last cudamem.LastCall

	// fused holds each fused config's state; status is the word its
	// kernels set when a wait times out; localFlags see localFlag;
	// staging the [M, N] rows matmulrs's copy engines push (made when a
	// config needs them).
	fused  map[Config]*fusedRun
	status *cudamem.HostWord
	// statusDev is where the kernels write it: status, or the workspace's
	// poison word where the peers have one (poisonWorder).
	statusDev  cu.DevicePtr
	localFlags cu.DevicePtr
	staging    cu.DevicePtr
	graphs     map[Config]*graphcache.Cache[Ptrs, *cudamem.Graph]

	// The call being enqueued: its stream and operands.
	main cu.Stream
	ptr  Ptrs
	// trace, when non-nil, times the steps of the call in flight.
	trace *tracer
}

// NewRunner makes the runner of variant v (agmm or matmulrs) for p on
// peers, in the current context, with an engine of its own (closed with
// it). It leaves the flags of the region alone: the caller clears them
// before any rank's first call.
func NewRunner(v Variant, peers Peers, p Problem, dtype string) (*Runner, error) {
	return NewRunnerOn(nil, v, peers, p, dtype)
}

// NewRunnerOn is NewRunner on engine e, shared with other runners (nil: an
// engine of its own). A runner on a shared engine allocates nothing but
// its tables and staging rows, from the stream-ordered pool, and never
// synchronizes the device, opening or closing.
func NewRunnerOn(e *Engine, v Variant, peers Peers, p Problem, dtype string) (*Runner, error) {
	if v != VariantAGMM && v != VariantMatmulRS {
		return nil, fmt.Errorf("kernel %q: want %s or %s", v, AGMM, MatmulRS)
	}
	if p.World != peers.World() {
		return nil, fmt.Errorf("problem of world %d on %d ranks", p.World, peers.World())
	}
	if p.World > MaxWorld {
		return nil, fmt.Errorf("world %d: at most %d ranks", p.World, MaxWorld)
	}
	if dtype != p.Dtype.String() {
		return nil, fmt.Errorf("dtype %q for a problem of dtype %s", dtype, p.Dtype)
	}
	r := &Runner{v: v, peers: peers, prob: p, eng: e, mem: map[cu.DevicePtr]int64{},
		plans: map[planKey]*cublaslt.Plan{}, fused: map[Config]*fusedRun{}, graphs: map[Config]*graphcache.Cache[Ptrs, *cudamem.Graph]{}}
	if v == VariantAGMM {
		r.kern = &agmm{r: r}
	} else {
		r.kern = &matmulrs{r: r}
	}
	if err := r.setup(); err != nil {
		return nil, errors.Join(fmt.Errorf("GPU %s on rank %d: %w", v, peers.Rank(), err), r.Close())
	}
	return r, nil
}

// setup takes the engine's streams, events, workspaces and helper kernels
// (making an engine of its own first where none was given).
func (r *Runner) setup() error {
	if r.eng == nil {
		e, err := newEngine()
		if err != nil {
			return err
		}
		r.eng, r.ownEngine = e, true
	}
	e := r.eng
	r.lt, r.gemm, r.ws = e.lt, e.gemm, e.ws
	r.side = e.side[:r.peers.World()-1]
	r.reduce, r.capture, r.fork = e.reduce, e.capture, e.fork
	r.joins, r.chunkEv = e.joins, e.chunkEv
	r.status, r.localFlags = e.status, e.localFlags
	u, err := e.util(r.prob.Dtype.String(), r.peers.Compiler())
	if err != nil {
		return err
	}
	r.fillFn, r.fillTFn, r.checkFn, r.badFn = u.fill, u.fillT, u.check, u.bad
	r.copyFn, r.redFn, r.endFn, r.waitFn, r.fillScalesFn = u.copy, u.red, u.end, u.wait, u.fillScales
	r.statusDev = r.status.Dev
	if pw, ok := r.peers.(poisonWorder); ok {
		r.statusDev = pw.PoisonWord()
	}
	return nil
}

// DeviceBytes is what the runner holds on the device of its own (its
// tables and staging rows; the engine's are the engine's).
func (r *Runner) DeviceBytes() int64 {
	n := int64(0)
	for _, b := range r.mem {
		n += b
	}
	return n
}

// Prepare makes what c needs before its first call: the SM budget's
// check, the fused GEMM, the staging rows, the cuBLASLt plans, and the
// check that c's algorithm index exists for every product. Not during a
// capture (it allocates and synchronizes).
func (r *Runner) Prepare(c Config) error {
	if err := r.v.Validate(c, r.prob); err != nil {
		return err
	}
	if c.SMReserve >= r.peers.SMs() {
		return fmt.Errorf("sm_reserve %d leaves none of the %d SMs for the products", c.SMReserve, r.peers.SMs())
	}
	if c.Impl == ImplFused {
		if _, err := r.fusedFor(c); err != nil {
			return err
		}
	}
	if r.needsStaging(c) && r.staging == 0 {
		var err error
		if r.staging, err = r.alloc(int64(r.prob.M) * int64(r.prob.N) * OutBytes); err != nil {
			return fmt.Errorf("allocate staging: %w", err)
		}
	}
	n, err := r.Algos(c)
	if err != nil {
		return err
	}
	if n > 0 && c.Algo >= n {
		return fmt.Errorf("algo %d: cuBLASLt ranks only %d algorithms for every product of the plan", c.Algo, n)
	}
	return nil
}

// needsStaging says whether c stages peers' partials for copy engines to
// push (matmulrs's push=ce, pipelined or fused).
func (r *Runner) needsStaging(c Config) bool {
	return r.v == VariantMatmulRS && r.prob.World > 1 && c.Push == PushCE
}

// Algos is the fewest algorithms cuBLASLt ranks over c's products (0: c
// has none, being fused), planning them as it goes.
func (r *Runner) Algos(c Config) (int, error) {
	n := 0
	for _, s := range r.kern.products(c) {
		p, err := r.plan(s, c)
		if err != nil {
			return 0, err
		}
		if n == 0 || p.Algos() < n {
			n = p.Algos()
		}
	}
	return n, nil
}

// Enqueue runs one call of c (prepared) on main with operands p. With
// graph=1 the call at a set of operands seen before is captured once and
// replayed from then on (graphcache.Cache); inside a capture of main (the
// caller's graph) it is enqueued as it is, and that graph holds it.
func (r *Runner) Enqueue(c Config, main cu.Stream, p Ptrs) error {
	capturing, err := cudamem.IsCapturing(main)
	if err != nil {
		return err
	}
	calltime.Mark("capturing?")
	return r.EnqueueKnown(c, main, p, capturing)
}

// EnqueueKnown is Enqueue for a caller that has just asked whether main
// is being captured (the symmtune.torch runtime asks once per call, to
// take a graph's hold): one driver call fewer.
func (r *Runner) EnqueueKnown(c Config, main cu.Stream, p Ptrs, capturing bool) error {
	var err error
	if !capturing {
		r.last.Eager(main)
	}
	if err := r.FusedFailed(c); err != nil {
		return err
	}
	calltime.Mark("fused failed?")
	if !c.Graph || r.trace != nil || capturing {
		return r.launch(c, main, p)
	}
	gc := r.graphCache(c)
	g, ok := gc.Get(p)
	calltime.Mark("graph lookup")
	if !ok {
		if !gc.Second(p) {
			return r.launch(c, main, p)
		}
		if g, err = r.captureCall(c, p); err != nil {
			return err
		}
		if err := gc.Put(p, g); err != nil {
			return err
		}
		calltime.Mark("capture graph")
	}
	err = g.Launch(main)
	calltime.Mark("graph launch")
	return err
}

// Fence marks, now, the point on the stream of the runner's latest eager
// call after which its memory may be freed, for a Close that runs later,
// on the engine's thread: recorded there instead, the point could land in
// a graph capture begun on that stream meanwhile, and a capture that
// records a stream another thread waits for is invalidated (seen on
// 1 x H100, 2026-12-06, with torch's capture stream). False, nil: that
// stream is being captured now (by another thread; the legacy stream
// answers an error then), so no point can be marked yet: try again at a
// later call. Only a shared engine's runners need it.
func (r *Runner) Fence() (bool, error) {
	if r.eng == nil || !r.eng.shared {
		return true, nil
	}
	return r.last.Mark()
}

// Capture captures c's call at operands p now, unless it is already: the
// plugin's trials then replay it from their first call.
func (r *Runner) Capture(c Config, p Ptrs) error {
	gc := r.graphCache(c)
	if _, ok := gc.Get(p); ok {
		return nil
	}
	g, err := r.captureCall(c, p)
	if err != nil {
		return err
	}
	return gc.Put(p, g)
}

// graphCache is c's graphs, made at first use.
func (r *Runner) graphCache(c Config) *graphcache.Cache[Ptrs, *cudamem.Graph] {
	gc := r.graphs[c]
	if gc == nil {
		// cuGraphExecDestroy of a graph still running is allowed: the
		// driver frees it once its launches complete.
		gc = &graphcache.Cache[Ptrs, *cudamem.Graph]{Destroy: (*cudamem.Graph).Destroy}
		r.graphs[c] = gc
	}
	return gc
}

func (r *Runner) captureCall(c Config, p Ptrs) (*cudamem.Graph, error) {
	g, err := cudamem.CaptureLocal(r.capture, func() error { return r.launch(c, r.capture, p) })
	if err != nil {
		return nil, fmt.Errorf("capture the call in a CUDA graph: %w", err)
	}
	return g, nil
}

// launch enqueues the launch sequence itself.
func (r *Runner) launch(c Config, main cu.Stream, p Ptrs) error {
	r.main, r.ptr = main, p
	defer func() { r.main, r.ptr = cu.Stream{}, Ptrs{} }()
	if c.Impl == ImplFused {
		fr, err := r.fusedFor(c)
		if err != nil {
			return err
		}
		if fr.at != p {
			if err := r.kern.maps(fr, c); err != nil {
				return err
			}
			fr.at = p
		}
		calltime.Mark("tensor maps")
	}
	err := r.kern.launch(c)
	calltime.Mark("launch sequence rest")
	return err
}

// Close frees everything of the runner's. With an engine of its own it
// first waits for the GPU's work and closes the engine too; on a shared
// engine nothing waits: its memory goes back to the pool in the caller
// stream's order, and its graphs are destroyed on the engine's destroyer
// thread (Engine.destroyLater).
func (r *Runner) Close() error {
	var errs []error
	if r.eng == nil {
		return nil
	}
	// Its waits are enqueued: the event goes once they are done.
	defer func() { _ = r.last.Close() }()
	if !r.eng.shared {
		errs = append(errs, cu.Synchronize())
	}
	for _, gc := range r.graphs {
		errs = append(errs, r.eng.destroyLater(gc.DestroyAll))
	}
	r.graphs = nil
	for _, f := range r.fused {
		errs = append(errs, f.close(r))
	}
	r.fused = nil
	for _, p := range r.plans {
		errs = append(errs, p.Close())
	}
	r.plans = nil
	errs = append(errs, r.release(r.staging))
	r.staging = 0
	for d := range r.mem {
		errs = append(errs, r.release(d))
	}
	if r.ownEngine {
		errs = append(errs, r.eng.Close())
	}
	r.eng = nil
	return errors.Join(errs...)
}

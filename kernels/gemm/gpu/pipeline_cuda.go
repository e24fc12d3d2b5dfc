//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// maxStreams is the largest streams value of the space.
const maxStreams = 3

// workspaceBytes is each product stream's cuBLASLt workspace: what cuBLAS
// itself uses on Hopper.
const workspaceBytes = 32 << 20

// pipeline is what differs between the two kernels: their buffers, how
// one call runs, and what the check compares.
type pipeline interface {
	// alloc makes the kernel's private buffers.
	alloc() error
	// products lists the steps of c's plan, to prepare their cuBLASLt plans.
	products(c Config) []Step
	// fill writes this rank's inputs for seed.
	fill(seed uint64) error
	// poison fills every output (and every buffer peers write) with NaN.
	poison() error
	// launch enqueues one call on the instance's streams.
	launch(c Config) error
	// samples lists the output rows to check, 4 u64 each (check_rows).
	samples(c Config, seed uint64) []uint64
	// output is the result: pointer, rows, columns (leading dimension N).
	output() (cu.DevicePtr, int, int)
	close() []error
}

type planKey struct{ rows, batch, smTarget int }

// instance is one rank of a GPU GEMM pipeline. Every method that touches
// the GPU runs inside team.Do.
type instance struct {
	k     Kernel
	team  *cudamem.Team
	prob  Problem
	dtype cublaslt.DType
	bf16  bool
	pipe  pipeline

	lt     *cublaslt.Handle
	plans  map[planKey]*cublaslt.Plan
	graphs map[Config]*cudamem.Graph
	main   cu.Stream
	gemm   [maxStreams]cu.Stream
	ws     [maxStreams]cu.DevicePtr
	side   []cu.Stream // one per peer: agmm's pulls, matmulrs's pushes
	reduce cu.Stream
	fork   cu.Event
	joins  []cu.Event
	// chunkEv: agmm, pull of chunk c from peer i is chunkEv[i*MaxChunks+c];
	// matmulrs, product step i is chunkEv[i].
	chunkEv []cu.Event

	util                                  cu.Module
	fillFn, checkFn, badFn, copyFn, redFn cu.Function
	res, samples                          cu.DevicePtr

	b cu.DevicePtr // B [K, N], private: the same on every rank
	// trace, when non-nil, times the steps of the call in flight.
	trace *tracer
}

func open(k Kernel, t *cudamem.Team, p Problem, dtype string) (sdk.Instance, error) {
	lt, err := cublaslt.DTypeOf(dtype)
	if err != nil {
		return nil, err
	}
	in := &instance{k: k, team: t, prob: p, dtype: lt, bf16: dtype == "bf16", plans: map[planKey]*cublaslt.Plan{}, graphs: map[Config]*cudamem.Graph{}}
	if k.Name == AGMM {
		in.pipe = &agmm{in: in}
	} else {
		in.pipe = &matmulrs{in: in}
	}
	if err := t.Do(in.setup); err != nil {
		in.Close()
		return nil, fmt.Errorf("open GPU %s on rank %d: %w", k.Name, t.Rank(), err)
	}
	return in, nil
}

func (in *instance) setup() error {
	var err error
	if in.lt, err = cublaslt.NewHandle(); err != nil {
		return err
	}
	mk := func() (cu.Stream, error) { return cu.MakeStream(cu.NonBlocking) }
	if in.main, err = mk(); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	others := 0
	for i := range in.gemm {
		if in.gemm[i], err = mk(); err != nil {
			return fmt.Errorf("create stream: %w", err)
		}
		if in.ws[i], err = cu.MemAlloc(workspaceBytes); err != nil {
			return fmt.Errorf("allocate cuBLASLt workspace: %w", err)
		}
		others++
	}
	for q := 1; q < in.team.World(); q++ {
		s, err := mk()
		if err != nil {
			return fmt.Errorf("create stream: %w", err)
		}
		in.side = append(in.side, s)
		others++
	}
	if in.reduce, err = mk(); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	others++
	ev := func() (cu.Event, error) { return cu.MakeEvent(cu.DisableTiming) }
	if in.fork, err = ev(); err != nil {
		return fmt.Errorf("create event: %w", err)
	}
	for i := 0; i < others; i++ {
		e, err := ev()
		if err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		in.joins = append(in.joins, e)
	}
	for i := 0; i < MaxWorld*MaxChunks; i++ {
		e, err := ev()
		if err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		in.chunkEv = append(in.chunkEv, e)
	}
	if err := in.loadUtil(); err != nil {
		return err
	}
	if in.res, err = cu.MemAlloc(8 * 4); err != nil {
		return fmt.Errorf("allocate check result: %w", err)
	}
	if in.samples, err = cu.MemAlloc(8 * 4 * 3 * MaxWorld * MaxChunks); err != nil {
		return fmt.Errorf("allocate samples: %w", err)
	}
	if in.b, err = cu.MemAlloc(int64(in.prob.K) * int64(in.prob.N) * 2); err != nil {
		return fmt.Errorf("allocate B: %w", err)
	}
	if err := in.pipe.alloc(); err != nil {
		return err
	}
	// Flags start clear. Open runs on every rank before any call, so no
	// peer's flag write can precede this.
	if err := cu.MemsetD8(in.team.Data(in.team.Rank()), 0, PayloadOffset); err != nil {
		return fmt.Errorf("zero flags: %w", err)
	}
	return cu.Synchronize()
}

func (in *instance) loadUtil() error {
	bf := "0"
	if in.bf16 {
		bf = "1"
	}
	cubin, err := in.team.Compiler().Compile(nvrtc.Source{Name: "gemm_util.cu", Text: UtilSource, Options: []string{"-DDTYPE_BF16=" + bf}})
	if err != nil {
		return err
	}
	if in.util, err = cu.LoadData(string(cubin)); err != nil {
		return fmt.Errorf("load gemm_util: %w", err)
	}
	for _, f := range []struct {
		name string
		dst  *cu.Function
	}{{"fill", &in.fillFn}, {"check_rows", &in.checkFn}, {"count_bad", &in.badFn}, {"copy_chunk", &in.copyFn}, {"reduce_chunk", &in.redFn}} {
		if *f.dst, err = in.util.Function(f.name); err != nil {
			return fmt.Errorf("gemm_util function %s: %w", f.name, err)
		}
	}
	return nil
}

// parse checks a config where it runs, as the host's Validate did.
func (in *instance) parse(c space.Config) (Config, error) {
	cfg, err := ParseConfig(in.k.Name, c)
	if err != nil {
		return Config{}, err
	}
	if err := Validate(in.k.Name, cfg, in.prob); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", c, err)
	}
	return cfg, nil
}

func (in *instance) smTarget(c Config) int {
	if c.SMReserve == 0 {
		return 0
	}
	return in.team.SMs() - c.SMReserve
}

// plan returns the cuBLASLt plan of step s's product: rows rows, batched
// over s.Batch ranks' rows (M/W rows apart in A and D). Call inside Do.
func (in *instance) plan(s Step, c Config) (*cublaslt.Plan, error) {
	key := planKey{s.Rows, s.Batch, in.smTarget(c)}
	if p := in.plans[key]; p != nil {
		return p, nil
	}
	rows := int64(in.prob.Rows())
	p, err := in.lt.Plan(cublaslt.Matmul{M: s.Rows, N: in.prob.N, K: in.prob.K, DType: in.dtype,
		Batch: s.Batch, StrideA: rows * int64(in.prob.K), StrideD: rows * int64(in.prob.N),
		SMCountTarget: key.smTarget, Workspace: workspaceBytes})
	if err != nil {
		return nil, err
	}
	in.plans[key] = p
	return p, nil
}

// product enqueues D[rows, N] = A[rows, K]·B on step's stream (batched
// when the step is).
func (in *instance) product(c Config, s Step, a, d cu.DevicePtr) error {
	p, err := in.plan(s, c)
	if err != nil {
		return err
	}
	end, err := in.trace.span(fmt.Sprintf("product rows %d+%d of rank %d (batch %d)", s.Start, s.Rows, s.Owner, s.Batch), fmt.Sprintf("gemm%d", s.Stream), in.gemm[s.Stream])
	if err != nil {
		return err
	}
	if err := p.Run(in.gemm[s.Stream], c.Algo, a, in.b, d, in.ws[s.Stream]); err != nil {
		return err
	}
	return end()
}

// prepare makes c's cuBLASLt plans and checks that its algorithm index
// exists for every product shape. Call inside Do.
func (in *instance) prepare(c Config) error {
	if c.SMReserve >= in.team.SMs() {
		return fmt.Errorf("sm_reserve %d leaves none of the %d SMs for the products", c.SMReserve, in.team.SMs())
	}
	for _, s := range in.pipe.products(c) {
		p, err := in.plan(s, c)
		if err != nil {
			return err
		}
		if c.Algo >= p.Algos() {
			return fmt.Errorf("algo %d: cuBLASLt ranks only %d algorithms for %s", c.Algo, p.Algos(), p.Matmul)
		}
	}
	if c.Graph && in.graphs[c] == nil {
		g, err := cudamem.Capture(in.main, func() error { return in.pipe.launch(c) })
		if err != nil {
			return fmt.Errorf("capture the call in a CUDA graph: %w", err)
		}
		in.graphs[c] = g
	}
	return nil
}

// call enqueues one call of c: a replay of its graph (captured by
// prepare), or the launch sequence itself.
func (in *instance) call(c Config) error {
	if g := in.graphs[c]; c.Graph && in.trace == nil && g != nil {
		return g.Launch(in.main)
	}
	return in.pipe.launch(c)
}

func (in *instance) Prepare(ctx context.Context, c space.Config) error {
	cfg, err := in.parse(c)
	if err != nil {
		return err
	}
	return in.team.Do(func() error { return in.prepare(cfg) })
}

// begin starts a call of c: announce enqueued on main (nil: nothing to
// announce), then every stream c uses forked from main.
func (in *instance) begin(c Config, announce func() error) error {
	if announce != nil {
		if err := announce(); err != nil {
			return err
		}
	}
	if err := in.fork.Record(in.main); err != nil {
		return fmt.Errorf("record fork: %w", err)
	}
	for _, s := range in.streams(&c) {
		if err := s.Wait(in.fork, 0); err != nil {
			return fmt.Errorf("fork wait: %w", err)
		}
	}
	return nil
}

// signal enqueues on s the setting of flag i in rank q's region (see
// layout.go), after everything s wrote before.
func (in *instance) signal(s cu.Stream, q, i int) error {
	if err := cudamem.WriteFlag(s, in.flag(q, i), 1); err != nil {
		return fmt.Errorf("set flag %d of rank %d: %w", i, q, err)
	}
	return nil
}

// consume makes s wait for this rank's flag i and clears it for the next
// call: each flag has one consumer.
func (in *instance) consume(s cu.Stream, i int) error {
	me := in.team.Rank()
	if err := cudamem.WaitFlag(s, in.flag(me, i), 1); err != nil {
		return fmt.Errorf("wait for flag %d: %w", i, err)
	}
	if err := cudamem.WriteFlag(s, in.flag(me, i), 0); err != nil {
		return fmt.Errorf("clear flag %d: %w", i, err)
	}
	return nil
}

// clearFlags enqueues the clearing of this rank's flags on main: a trial
// starts from clear flags whatever an earlier, failed one left. The
// caller's barrier must follow before any peer may set one.
func (in *instance) clearFlags() error {
	if err := cu.MemsetD8Async(in.team.Data(in.team.Rank()), 0, PayloadOffset, in.main); err != nil {
		return fmt.Errorf("clear flags: %w", err)
	}
	return nil
}

// streams lists the streams besides main that c uses (all of them for
// nil): c.Streams product streams, the per-peer streams, and matmulrs's
// reduction stream. Forking and joining only those keeps the host's
// per-call work, which the call's time includes, small.
func (in *instance) streams(c *Config) []cu.Stream {
	n := maxStreams
	if c != nil {
		n = c.Streams
	}
	out := append([]cu.Stream{}, in.gemm[:n]...)
	out = append(out, in.side...)
	if c == nil || in.k.Name == MatmulRS {
		out = append(out, in.reduce)
	}
	return out
}

// end joins every stream into main and closes the call with the team
// barrier: no rank starts its next call (and overwrites what a peer still
// reads) before every rank has finished this one.
func (in *instance) end(c Config) error {
	for i, s := range in.streams(&c) {
		if err := in.joins[i].Record(s); err != nil {
			return fmt.Errorf("record join: %w", err)
		}
		if err := in.main.Wait(in.joins[i], 0); err != nil {
			return fmt.Errorf("join wait: %w", err)
		}
	}
	end, err := in.trace.span("end barrier", "main", in.main)
	if err != nil {
		return err
	}
	if err := in.team.Barrier(in.main); err != nil {
		return err
	}
	return end()
}

// peerIndex is q's place in the peer order (next rank first), which
// indexes the side streams.
func (in *instance) peerIndex(q int) int {
	w := in.team.World()
	return (q - in.team.Rank() - 1 + w) % w
}

// flag is the address of flag i in rank q's region.
func (in *instance) flag(q, i int) cu.DevicePtr {
	return in.team.Data(q) + cu.DevicePtr(i*FlagStride)
}

// payload is rank q's payload as mapped here.
func (in *instance) payload(q int) cu.DevicePtr {
	return in.team.Data(q) + PayloadOffset
}

func gridFor(n int64, threads int) int {
	return int(min(max((n+int64(threads)-1)/int64(threads), 1), 4096))
}

// fillMatrix writes rows x cols of rank's tensor (logical rows from row0)
// at dst with leading dimension ld.
func (in *instance) fillMatrix(dst cu.DevicePtr, rows, cols, ld, row0 int, seed, rank uint64) error {
	args := cudamem.Args(uint64(dst), uint64(rows), uint64(cols), uint64(ld), uint64(row0), seed, rank)
	if err := in.fillFn.Launch(gridFor(int64(rows)*int64(cols), 256), 1, 1, 256, 1, 1, 0, in.main, args); err != nil {
		return fmt.Errorf("launch fill: %w", err)
	}
	return nil
}

// tensorB is the generator rank of B (TENSOR_B in gemm_util.cu).
const tensorB = 0x10000

// poisonElems fills n elements at p with 0xFFFF, a NaN in bf16 and f16.
func (in *instance) poisonElems(p cu.DevicePtr, n int64) error {
	if err := cu.MemsetD16Async(p, 0xFFFF, n, in.main); err != nil {
		return fmt.Errorf("poison: %w", err)
	}
	return nil
}

// tolerance of the relative error: bf16 outputs round at 2^-9, f16 at
// 2^-11, and matmulrs's partials round once more before the sum.
func (in *instance) tolerance() float64 {
	if in.bf16 {
		return 1e-2
	}
	return 4e-3
}

func (in *instance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	cfg, err := in.parse(c)
	if err != nil {
		return sdk.VerifyResult{}, err
	}
	var res [4]float64
	var nSamples int
	err = in.team.Do(func() error {
		if err := in.prepare(cfg); err != nil {
			return err
		}
		if err := in.pipe.fill(seed); err != nil {
			return err
		}
		if err := in.pipe.poison(); err != nil {
			return err
		}
		if err := in.clearFlags(); err != nil {
			return err
		}
		// Peers write into this rank's buffers: every rank poisons before
		// any rank's call starts.
		if err := in.team.Barrier(in.main); err != nil {
			return err
		}
		if err := cu.MemsetD32Async(in.res, 0, 8, in.main); err != nil {
			return fmt.Errorf("clear check result: %w", err)
		}
		if err := in.call(cfg); err != nil {
			return err
		}
		smp := in.pipe.samples(cfg, seed)
		nSamples = len(smp) / 4
		if err := cu.MemcpyHtoD(in.samples, unsafe.Pointer(&smp[0]), int64(8*len(smp))); err != nil {
			return fmt.Errorf("copy samples: %w", err)
		}
		out, rows, cols := in.pipe.output()
		args := cudamem.Args(uint64(out), uint64(cols), uint64(in.samples), uint64(cols), uint64(in.prob.K), seed, uint64(in.res))
		if err := in.checkFn.Launch((cols+255)/256, nSamples, 1, 256, 1, 1, 0, in.main, args); err != nil {
			return fmt.Errorf("launch check_rows: %w", err)
		}
		args = cudamem.Args(uint64(out), uint64(rows), uint64(cols), uint64(cols), uint64(in.res))
		if err := in.badFn.Launch(gridFor(int64(rows)*int64(cols), 256), 1, 1, 256, 1, 1, 0, in.main, args); err != nil {
			return fmt.Errorf("launch count_bad: %w", err)
		}
		if err := in.main.Synchronize(); err != nil {
			return fmt.Errorf("synchronize: %w", err)
		}
		if err := in.team.CheckTimeout(); err != nil {
			return err
		}
		return cu.MemcpyDtoH(unsafe.Pointer(&res[0]), in.res, 8*4)
	})
	if err != nil {
		return sdk.VerifyResult{}, fmt.Errorf("rank %d: %w", in.team.Rank(), err)
	}
	num, den, badSampled, bad := res[0], res[1], res[2], res[3]
	rel := math.Inf(1)
	if bad == 0 && badSampled == 0 && den > 0 {
		rel = math.Sqrt(num / den)
	}
	r := sdk.VerifyResult{RelErr: rel, OK: bad == 0 && badSampled == 0 && rel <= in.tolerance()}
	_, rows, cols := in.pipe.output()
	switch {
	case bad > 0:
		r.Detail = fmt.Sprintf("rank %d: %.0f of %d outputs NaN/Inf (unwritten or wrong)", in.team.Rank(), bad, rows*cols)
	case !r.OK:
		r.Detail = fmt.Sprintf("rank %d: rel err %.3g over tolerance %.0e on %d sampled rows", in.team.Rank(), rel, in.tolerance(), nSamples)
	}
	return r, nil
}

func (in *instance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	cfg, err := in.parse(c)
	if err != nil {
		return nil, err
	}
	var times []float64
	err = in.team.Do(func() error {
		if err := in.prepare(cfg); err != nil {
			return err
		}
		// Real data, never zeros or another config's leftovers.
		if err := in.pipe.fill(0x5eed); err != nil {
			return err
		}
		// Time's barrier precedes the first call.
		if err := in.clearFlags(); err != nil {
			return err
		}
		var err error
		if times, err = in.team.Time(in.main, warmup, iters, func() error { return in.call(cfg) }); err != nil {
			return err
		}
		if dir := os.Getenv("SYMMTUNE_TRACE"); dir != "" {
			return in.traceCall(cfg, dir, c.String())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", in.team.Rank(), err)
	}
	return times, nil
}

// traceCall runs one more call with its steps timed (see tracer).
func (in *instance) traceCall(c Config, dir, name string) error {
	t0, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return err
	}
	in.trace = &tracer{t0: t0}
	defer func() { in.trace = nil }()
	if err := in.team.Barrier(in.main); err != nil {
		return err
	}
	if err := t0.Record(in.main); err != nil {
		return err
	}
	if err := in.pipe.launch(c); err != nil {
		return err
	}
	if err := in.main.Synchronize(); err != nil {
		return err
	}
	file := fmt.Sprintf("trace-%s-w%d-r%d.txt", in.k.Name, in.team.World(), in.team.Rank())
	return in.trace.write(dir, name, file)
}

func (in *instance) Close() error {
	return in.team.Do(func() error {
		var errs []error
		if in.main != (cu.Stream{}) {
			errs = append(errs, in.main.Synchronize())
		}
		errs = append(errs, cu.Synchronize())
		for _, g := range in.graphs {
			errs = append(errs, g.Destroy())
		}
		in.graphs = nil
		for _, p := range in.plans {
			errs = append(errs, p.Close())
		}
		in.plans = nil
		if in.pipe != nil {
			errs = append(errs, in.pipe.close()...)
		}
		for _, p := range []*cu.DevicePtr{&in.res, &in.samples, &in.b, &in.ws[0], &in.ws[1], &in.ws[2]} {
			if *p != 0 {
				errs = append(errs, cu.MemFree(*p))
				*p = 0
			}
		}
		if in.util != (cu.Module{}) {
			errs = append(errs, in.util.Unload())
		}
		for _, e := range append(append([]cu.Event{in.fork}, in.joins...), in.chunkEv...) {
			if e != (cu.Event{}) {
				errs = append(errs, cu.DestroyEvent(&e))
			}
		}
		for _, s := range append(in.streams(nil), in.main) {
			if s != (cu.Stream{}) {
				errs = append(errs, s.Destroy())
			}
		}
		errs = append(errs, in.lt.Close())
		return errors.Join(errs...)
	})
}

// spanSamples lists, for each span, its first and last row and one row in
// between drawn from seed: every chunk of every shard is checked, edges
// included. row maps a span's row to the sample's (output row, A row,
// first source rank, source count).
func spanSamples(spans []Span, seed uint64, row func(g int) [4]uint64) []uint64 {
	var out []uint64
	for i, s := range spans {
		rows := []int{s.Start, s.Start + s.Rows - 1}
		if s.Rows > 2 {
			x := splitmix(seed ^ uint64(i+1)*0x9E3779B97F4A7C15)
			rows = append(rows, s.Start+1+int(x%uint64(s.Rows-2)))
		}
		for _, g := range rows[:min(len(rows), s.Rows)] {
			v := row(g)
			out = append(out, v[:]...)
		}
	}
	return out
}

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

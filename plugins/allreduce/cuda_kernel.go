//go:build cuda

package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/cudamem"
)

//go:embed kernels/common.cuh kernels/allreduce.cu kernels/util.cu
var cudaKernels embed.FS

func kernelText(name string) string {
	b, err := cudaKernels.ReadFile("kernels/" + name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return string(b)
}

var (
	cudaCommon    = kernelText("common.cuh")
	cudaAllreduce = kernelText("allreduce.cu")
	cudaUtil      = kernelText("util.cu")
)

// The CUDA build's own algorithms besides oneShot and twoShot (pull):
const (
	// twoShotPush is a two-shot whose remote traffic is all SM stores:
	// scatter chunks to their owners, reduce locally, push the results.
	twoShotPush = "two_shot_push"
	// twoShotCE moves the same bytes as twoShotPush with the copy engines
	// (cuMemcpyDtoDAsync, one stream per peer) around a local reduce kernel.
	twoShotCE = "two_shot_ce"
)

// Tunables of the CUDA all-reduce.
const (
	pAlgo    = "algorithm" // one_shot | two_shot
	pThreads = "threads"   // threads per block
	pBlocks  = "blocks"    // blocks in the grid (one barrier slot each)
	pUnroll  = "unroll"    // 16-byte vectors per thread per rank in flight
)

// Limits Validate enforces without a GPU.
const (
	// maxGridThreads bounds blocks*threads so that every block of the grid
	// is resident at once on any GPU symmtune targets (the per-block
	// barriers wait for the same block on every peer; a block that cannot
	// be scheduled would deadlock its peers). 132 SMs x 1024 threads.
	maxGridThreads = 132 * 1024
	regsPerSM      = 65536
	baseRegs       = 32 // addressing, loop state and barrier besides the load buffers
)

func cudaSpace() space.Space {
	ints := func(xs ...int64) []space.Value {
		out := make([]space.Value, len(xs))
		for i, x := range xs {
			out[i] = space.Int(x)
		}
		return out
	}
	return space.Space{Params: []space.Param{
		{Name: pAlgo, Values: []space.Value{space.Str(oneShot), space.Str(twoShot), space.Str(twoShotPush), space.Str(twoShotCE)}},
		{Name: pThreads, Values: ints(128, 256, 512, 1024)},
		{Name: pBlocks, Values: ints(1, 2, 4, 8, 16, 32, 64, 132, 264)},
		{Name: pUnroll, Values: ints(1, 2, 4, 8)},
	}}
}

// cudaKernel is the CUDA all-reduce (sum): one-shot or two-shot over NVLink
// with pull-based 16-byte loads, compiled per config by NVRTC.
type cudaKernel struct{}

func (cudaKernel) Describe() sdk.Description {
	return sdk.Description{
		Name:          "allreduce",
		KernelVersion: sdk.SourceHash([]byte(cudamem.DeviceSource), []byte(cudaCommon), []byte(cudaAllreduce), []byte(cudaUtil)),
		Dims:          []string{"n"},
		Dtypes:        []string{"bf16", "f32"},
		Space:         cudaSpace(),
		Default: space.Config{
			pAlgo: space.Str(oneShot), pThreads: space.Int(128), pBlocks: space.Int(1), pUnroll: space.Int(1),
		},
		Summary: "all-reduce (sum) of n elements across GPUs over CUDA IPC: one-shot, pull or push two-shot, or copy-engine two-shot, 16-byte accesses over NVLink",
	}
}

// cudaCfg is a config in typed form.
type cudaCfg struct {
	algo                    string
	threads, blocks, unroll int64
}

func parseCudaCfg(c space.Config) (cudaCfg, error) {
	var k cudaCfg
	a, ok := c[pAlgo]
	if !ok || !a.IsStr || (a.Str != oneShot && a.Str != twoShot && a.Str != twoShotPush && a.Str != twoShotCE) {
		return k, fmt.Errorf("algorithm %v: want %s, %s, %s or %s", a, oneShot, twoShot, twoShotPush, twoShotCE)
	}
	k.algo = a.Str
	for _, p := range []struct {
		name string
		dst  *int64
	}{{pThreads, &k.threads}, {pBlocks, &k.blocks}, {pUnroll, &k.unroll}} {
		v, ok := c[p.name]
		if !ok || v.IsStr || v.Int < 1 {
			return k, fmt.Errorf("%s %v: want a positive integer", p.name, v)
		}
		*p.dst = v.Int
	}
	return k, nil
}

// geometry is the problem in vectors: nvec 16-byte vectors, elt bytes per element.
func geometry(p space.Problem) (n, nvec int64, elt int, err error) {
	if p.Dtype != "bf16" && p.Dtype != "f32" {
		return 0, 0, 0, fmt.Errorf("dtype %q: the CUDA all-reduce supports bf16 and f32", p.Dtype)
	}
	elt, _ = space.DtypeSize(p.Dtype)
	n, ok := p.Shape["n"]
	if !ok || n <= 0 {
		return 0, 0, 0, fmt.Errorf("shape %v: need n > 0", p.Shape)
	}
	if n*int64(elt)%16 != 0 {
		return 0, 0, 0, fmt.Errorf("n=%d %s is %d bytes, not a multiple of the 16-byte vector", n, p.Dtype, n*int64(elt))
	}
	return n, n * int64(elt) / 16, elt, nil
}

// Validate is pure arithmetic on config, problem and world: alignment,
// grid residency, registers, and grids with more blocks than work.
func (cudaKernel) Validate(c space.Config, p space.Problem, world int, backend string) error {
	if backend != "cuda" {
		return fmt.Errorf("this plugin build runs on the cuda backend, not %q", backend)
	}
	if world < 1 || world > cudamem.MaxWorld {
		return fmt.Errorf("world %d outside 1..%d", world, cudamem.MaxWorld)
	}
	k, err := parseCudaCfg(c)
	if err != nil {
		return err
	}
	_, nvec, _, err := geometry(p)
	if err != nil {
		return err
	}
	work := nvec
	if k.algo != oneShot {
		if nvec%int64(world) != 0 {
			return fmt.Errorf("%s needs the %d vectors to split evenly over %d ranks", k.algo, nvec, world)
		}
		work = nvec / int64(world)
	}
	if k.blocks > cudamem.MaxBlocks {
		return fmt.Errorf("%d blocks exceed the %d barrier slots", k.blocks, cudamem.MaxBlocks)
	}
	if k.blocks*k.threads > maxGridThreads {
		return fmt.Errorf("%d blocks x %d threads exceed %d resident threads (per-block barriers need the whole grid resident)", k.blocks, k.threads, maxGridThreads)
	}
	// Each thread holds UNROLL*WORLD 16-byte vectors (4 registers each) in
	// flight; past the per-thread share of the register file the compiler
	// spills them to local memory, which defeats the point.
	regs := 4*k.unroll*int64(world) + baseRegs
	limit := min(int64(regsPerSM)/k.threads, 255)
	if regs > limit {
		return fmt.Errorf("unroll %d x world %d needs ~%d registers per thread, over the %d that %d threads allow", k.unroll, world, regs, limit, k.threads)
	}
	if k.blocks > 1 && (k.blocks-1)*k.threads*k.unroll >= work {
		return fmt.Errorf("%d blocks of %d threads x unroll %d leave blocks with no work (%d vectors per rank)", k.blocks, k.threads, k.unroll, work)
	}
	return nil
}

// SymmetricBytes: the input, the two-shot scratch and the push two-shot's
// output, n elements each.
func (cudaKernel) SymmetricBytes(p space.Problem, world int, backend string) (int64, error) {
	n, _, elt, err := geometry(p)
	if err != nil {
		return 0, err
	}
	return 3 * n * int64(elt), nil
}

func (cudaKernel) Open(ctx context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, ok := team.(*cudamem.Team)
	if !ok {
		return nil, fmt.Errorf("cuda all-reduce needs a *cudamem.Team, got %T", team)
	}
	n, nvec, elt, err := geometry(p)
	if err != nil {
		return nil, err
	}
	in := &cudaInstance{team: t, prob: p, n: n, nvec: nvec, elt: elt, mods: map[string]*arModule{}}
	err = t.Do(func() error {
		var err error
		if in.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return fmt.Errorf("create stream: %w", err)
		}
		if in.fork, err = cu.MakeEvent(cu.DisableTiming); err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		for k := 1; k < t.World(); k++ {
			s, err := cu.MakeStream(cu.NonBlocking)
			if err != nil {
				return fmt.Errorf("create side stream: %w", err)
			}
			in.side = append(in.side, s)
			e, err := cu.MakeEvent(cu.DisableTiming)
			if err != nil {
				return fmt.Errorf("create event: %w", err)
			}
			in.join = append(in.join, e)
		}
		if in.out, err = cu.MemAlloc(n * int64(elt)); err != nil {
			return fmt.Errorf("allocate output: %w", err)
		}
		if in.res, err = cu.MemAlloc(8 * 4); err != nil {
			return fmt.Errorf("allocate check result: %w", err)
		}
		cubin, err := t.Compiler().Compile(in.utilSource())
		if err != nil {
			return err
		}
		if in.util, err = cu.LoadData(string(cubin)); err != nil {
			return fmt.Errorf("load util module: %w", err)
		}
		if in.fill, err = in.util.Function("fill"); err != nil {
			return fmt.Errorf("fill kernel: %w", err)
		}
		if in.check, err = in.util.Function("check"); err != nil {
			return fmt.Errorf("check kernel: %w", err)
		}
		return nil
	})
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("open cuda all-reduce on rank %d: %w", t.Rank(), err)
	}
	return in, nil
}

type arModule struct {
	mod cu.Module
	fn  cu.Function
	cfg cudaCfg
}

// cudaInstance is one rank's all-reduce over a cudamem team.
type cudaInstance struct {
	team    *cudamem.Team
	prob    space.Problem
	n, nvec int64
	elt     int

	stream      cu.Stream
	side        []cu.Stream // one per peer, for twoShotCE's copies
	fork        cu.Event
	join        []cu.Event
	out, res    cu.DevicePtr
	util        cu.Module
	fill, check cu.Function

	mu   sync.Mutex
	mods map[string]*arModule
}

func (in *cudaInstance) macros() []string {
	bf := 0
	if in.prob.Dtype == "bf16" {
		bf = 1
	}
	return []string{fmt.Sprintf("-DDTYPE_BF16=%d", bf), fmt.Sprintf("-DWORLD=%d", in.team.World())}
}

func (in *cudaInstance) utilSource() nvrtc.Source {
	return nvrtc.Source{Name: "allreduce_util.cu", Text: cudamem.DeviceSource + cudaCommon + cudaUtil, Options: in.macros()}
}

func (in *cudaInstance) source(k cudaCfg) nvrtc.Source {
	algo := map[string]int{oneShot: 1, twoShot: 2, twoShotPush: 3, twoShotCE: 4}[k.algo]
	opts := append(in.macros(), fmt.Sprintf("-DALGO=%d", algo), fmt.Sprintf("-DTHREADS=%d", k.threads), fmt.Sprintf("-DUNROLL=%d", k.unroll))
	return nvrtc.Source{Name: "allreduce.cu", Text: cudamem.DeviceSource + cudaCommon + cudaAllreduce, Options: opts}
}

// Precompile builds every config's cubin on all cores into the disk cache
// (blocks is a launch parameter, so configs differing only in it share one).
func (in *cudaInstance) Precompile(ctx context.Context, cs []space.Config) []error {
	errs := make([]error, len(cs))
	idx := map[string][]int{}
	var srcs []nvrtc.Source
	for i, c := range cs {
		k, err := parseCudaCfg(c)
		if err != nil {
			errs[i] = err
			continue
		}
		s := in.source(k)
		key := fmt.Sprint(s.Options)
		if _, seen := idx[key]; !seen {
			srcs = append(srcs, s)
		}
		idx[key] = append(idx[key], i)
	}
	cerrs := in.team.Compiler().CompileAll(ctx, srcs)
	for j, s := range srcs {
		for _, i := range idx[fmt.Sprint(s.Options)] {
			errs[i] = cerrs[j]
		}
	}
	return errs
}

// module returns the loaded kernel for c. Call inside team.Do.
func (in *cudaInstance) module(c space.Config) (*arModule, error) {
	k, err := parseCudaCfg(c)
	if err != nil {
		return nil, err
	}
	key := c.String()
	in.mu.Lock()
	m := in.mods[key]
	in.mu.Unlock()
	if m != nil {
		return m, nil
	}
	cubin, err := in.team.Compiler().Compile(in.source(k))
	if err != nil {
		return nil, err
	}
	m = &arModule{cfg: k}
	if m.mod, err = cu.LoadData(string(cubin)); err != nil {
		return nil, fmt.Errorf("load module: %w", err)
	}
	if m.fn, err = m.mod.Function("allreduce"); err != nil {
		return nil, fmt.Errorf("allreduce kernel: %w", err)
	}
	// The per-block barriers need the whole grid resident (see maxGridThreads).
	perSM, err := m.fn.MaxActiveBlocksPerMultiProcessor(int(k.threads), 0)
	if err != nil {
		return nil, fmt.Errorf("occupancy: %w", err)
	}
	if int64(perSM)*int64(in.team.SMs()) < k.blocks {
		_ = m.mod.Unload()
		return nil, fmt.Errorf("%d blocks of %d threads cannot all be resident (%d per SM x %d SMs)", k.blocks, k.threads, perSM, in.team.SMs())
	}
	in.mu.Lock()
	in.mods[key] = m
	in.mu.Unlock()
	return m, nil
}

func (in *cudaInstance) Prepare(ctx context.Context, c space.Config) error {
	return in.team.Do(func() error {
		_, err := in.module(c)
		return err
	})
}

// output is where config m leaves the result on this rank.
func (in *cudaInstance) output(m *arModule) cu.DevicePtr {
	if m.cfg.algo == twoShotPush || m.cfg.algo == twoShotCE {
		return in.team.Data(in.team.Rank()) + cu.DevicePtr(2*in.n*int64(in.elt))
	}
	return in.out
}

// launch enqueues one all-reduce of the data regions into out.
func (in *cudaInstance) launch(m *arModule) error {
	if m.cfg.algo == twoShotCE {
		return in.launchCE(m)
	}
	args := cudamem.Args(uint64(in.team.PtrTable()), uint64(in.out), uint64(in.nvec), uint64(in.team.Rank()), uint64(in.n)*uint64(in.elt))
	if err := m.fn.Launch(int(m.cfg.blocks), 1, 1, int(m.cfg.threads), 1, 1, 0, in.stream, args); err != nil {
		return fmt.Errorf("launch allreduce: %w", err)
	}
	return nil
}

// launchCE enqueues the copy-engine two-shot: scatter chunks into their
// owners' scratch slots with one copy per peer on its own stream, the team
// barrier, the local reduce kernel into chunk r of the output region, the
// results copied into every peer's output, and the team barrier again (the
// peers' results have landed here; nobody's next scatter can overtake a
// peer's reduce). The scratch slots written first were released by the
// previous call's last barrier.
func (in *cudaInstance) launchCE(m *arModule) error {
	t := in.team
	r, w := t.Rank(), t.World()
	chunk := in.n * int64(in.elt) / int64(w)
	scratch := cu.DevicePtr(in.n * int64(in.elt))
	mine := cu.DevicePtr(int64(r) * chunk)
	copies := func(what string, dst, src func(q int) cu.DevicePtr) error {
		if err := in.fork.Record(in.stream); err != nil {
			return fmt.Errorf("%s: record fork: %w", what, err)
		}
		for k := 1; k < w; k++ {
			q, s := (r+k)%w, in.side[k-1]
			if err := s.Wait(in.fork, 0); err != nil {
				return fmt.Errorf("%s: side stream wait: %w", what, err)
			}
			if err := cu.MemcpyDtoDAsync(dst(q), src(q), chunk, s); err != nil {
				return fmt.Errorf("%s: copy to rank %d: %w", what, q, err)
			}
			if err := in.join[k-1].Record(s); err != nil {
				return fmt.Errorf("%s: record join: %w", what, err)
			}
			if err := in.stream.Wait(in.join[k-1], 0); err != nil {
				return fmt.Errorf("%s: join wait: %w", what, err)
			}
		}
		return nil
	}
	err := copies("scatter",
		func(q int) cu.DevicePtr { return t.Data(q) + scratch + mine },
		func(q int) cu.DevicePtr { return t.Data(r) + cu.DevicePtr(int64(q)*chunk) })
	if err != nil {
		return err
	}
	if err := t.Barrier(in.stream); err != nil {
		return err
	}
	args := cudamem.Args(uint64(t.PtrTable()), uint64(in.out), uint64(in.nvec), uint64(r), uint64(scratch))
	if err := m.fn.Launch(int(m.cfg.blocks), 1, 1, int(m.cfg.threads), 1, 1, 0, in.stream, args); err != nil {
		return fmt.Errorf("launch reduce: %w", err)
	}
	err = copies("all-gather",
		func(q int) cu.DevicePtr { return t.Data(q) + 2*scratch + mine },
		func(int) cu.DevicePtr { return t.Data(r) + 2*scratch + mine })
	if err != nil {
		return err
	}
	return t.Barrier(in.stream)
}

func (in *cudaInstance) fillInput(seed uint64) error {
	args := cudamem.Args(uint64(in.team.Data(in.team.Rank())), uint64(in.n), seed, uint64(in.team.Rank()))
	if err := in.fill.Launch(utilBlocks(in.n), 1, 1, 256, 1, 1, 0, in.stream, args); err != nil {
		return fmt.Errorf("launch fill: %w", err)
	}
	return nil
}

func utilBlocks(n int64) int {
	return int(min(max((n+255)/256, 1), 4096))
}

// tolerance of the relative error: bf16 output rounding is 2^-9 relative,
// f32 sums of a few values stay near 1e-7.
func tolerance(dtype string) float64 {
	if dtype == "bf16" {
		return 1e-2
	}
	return 1e-5
}

func (in *cudaInstance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	var res [4]float64
	err := in.team.Do(func() error {
		m, err := in.module(c)
		if err != nil {
			return err
		}
		if err := in.fillInput(seed); err != nil {
			return err
		}
		// Poison: all-ones bytes are NaN in f32 and in bf16. The push
		// two-shot's output is in the symmetric region, which peers write:
		// the kernel's start needs no barrier, so make sure every rank has
		// poisoned before anyone's results can land.
		if err := cu.MemsetD32Async(in.output(m), 0xFFFFFFFF, in.n*int64(in.elt)/4, in.stream); err != nil {
			return fmt.Errorf("poison output: %w", err)
		}
		if err := in.team.Barrier(in.stream); err != nil {
			return err
		}
		if err := cu.MemsetD32Async(in.res, 0, 8, in.stream); err != nil {
			return fmt.Errorf("clear check result: %w", err)
		}
		if err := in.launch(m); err != nil {
			return err
		}
		args := cudamem.Args(uint64(in.output(m)), uint64(in.n), seed, uint64(in.res))
		if err := in.check.Launch(utilBlocks(in.n), 1, 1, 256, 1, 1, 0, in.stream, args); err != nil {
			return fmt.Errorf("launch check: %w", err)
		}
		if err := in.stream.Synchronize(); err != nil {
			return fmt.Errorf("synchronize: %w", err)
		}
		if err := in.team.CheckTimeout(); err != nil {
			return err
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&res[0]), in.res, 8*3); err != nil {
			return fmt.Errorf("read check result: %w", err)
		}
		return nil
	})
	if err != nil {
		return sdk.VerifyResult{}, fmt.Errorf("rank %d: %w", in.team.Rank(), err)
	}
	num, den, bad := res[0], res[1], res[2]
	rel := math.Inf(1)
	if bad == 0 && den > 0 {
		rel = math.Sqrt(num / den)
	}
	r := sdk.VerifyResult{RelErr: rel, OK: bad == 0 && rel <= tolerance(in.prob.Dtype)}
	switch {
	case bad > 0:
		r.Detail = fmt.Sprintf("rank %d: %.0f of %d outputs NaN/Inf (unwritten or wrong)", in.team.Rank(), bad, in.n)
	case !r.OK:
		r.Detail = fmt.Sprintf("rank %d: rel err %.3g over tolerance %.0e", in.team.Rank(), rel, tolerance(in.prob.Dtype))
	}
	return r, nil
}

// Bench: per iteration, the team's device-side barrier, an event, one
// all-reduce, an event. The barrier keeps one rank's late start out of
// another's time, as the peers' method (peer_baselines.py) requires.
func (in *cudaInstance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	times := make([]float64, iters)
	err := in.team.Do(func() error {
		m, err := in.module(c)
		if err != nil {
			return err
		}
		// Real data, never zeros (or leftovers from another config).
		if err := in.fillInput(0x5eed); err != nil {
			return err
		}
		for i := 0; i < warmup; i++ {
			if err := in.team.Barrier(in.stream); err != nil {
				return err
			}
			if err := in.launch(m); err != nil {
				return err
			}
		}
		evs := make([]cu.Event, 0, 2*iters)
		defer func() {
			for i := range evs {
				_ = cu.DestroyEvent(&evs[i])
			}
		}()
		for i := 0; i < 2*iters; i++ {
			e, err := cu.MakeEvent(cu.DefaultEvent)
			if err != nil {
				return fmt.Errorf("create event: %w", err)
			}
			evs = append(evs, e)
		}
		for i := 0; i < iters; i++ {
			if err := in.team.Barrier(in.stream); err != nil {
				return err
			}
			if err := evs[2*i].Record(in.stream); err != nil {
				return fmt.Errorf("record event: %w", err)
			}
			if err := in.launch(m); err != nil {
				return err
			}
			if err := evs[2*i+1].Record(in.stream); err != nil {
				return fmt.Errorf("record event: %w", err)
			}
		}
		if err := in.stream.Synchronize(); err != nil {
			return fmt.Errorf("synchronize: %w", err)
		}
		if err := in.team.CheckTimeout(); err != nil {
			return err
		}
		for i := range times {
			ms, err := evs[2*i].Elapsed(evs[2*i+1])
			if err != nil {
				return fmt.Errorf("event elapsed: %w", err)
			}
			times[i] = ms * 1000
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", in.team.Rank(), err)
	}
	return times, nil
}

func (in *cudaInstance) Close() error {
	return in.team.Do(func() error {
		var errs []error
		if in.stream != (cu.Stream{}) {
			errs = append(errs, in.stream.Synchronize())
		}
		for _, m := range in.mods {
			errs = append(errs, m.mod.Unload())
		}
		in.mods = map[string]*arModule{}
		if in.util != (cu.Module{}) {
			errs = append(errs, in.util.Unload())
		}
		if in.out != 0 {
			errs = append(errs, cu.MemFree(in.out))
		}
		if in.res != 0 {
			errs = append(errs, cu.MemFree(in.res))
		}
		for i := range in.side {
			errs = append(errs, in.side[i].Destroy())
		}
		for i := range in.join {
			errs = append(errs, cu.DestroyEvent(&in.join[i]))
		}
		if in.fork != (cu.Event{}) {
			errs = append(errs, cu.DestroyEvent(&in.fork))
		}
		if in.stream != (cu.Stream{}) {
			errs = append(errs, in.stream.Destroy())
		}
		return errors.Join(errs...)
	})
}

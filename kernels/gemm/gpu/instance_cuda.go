//go:build cuda

package gpu

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/sdk"
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

	util                            cu.Module
	fillFn, fillTFn, checkFn, badFn cu.Function
	copyFn, redFn                   cu.Function
	res, samples                    cu.DevicePtr

	// bT is B, private and the same on every rank, stored [N, K] (a
	// torch.nn.Linear weight's layout), what the products and the fused
	// GEMM read; fused holds each fused config's state, and status the
	// word its kernels set when a wait times out.
	bT         cu.DevicePtr
	fused      map[Config]*fusedRun
	status     cu.DevicePtr
	localFlags cu.DevicePtr // see localFlag
	// trace, when non-nil, times the steps of the call in flight.
	trace *tracer
}

func open(k Kernel, t *cudamem.Team, p Problem, dtype string) (sdk.Instance, error) {
	lt, err := cublaslt.DTypeOf(dtype)
	if err != nil {
		return nil, err
	}
	in := &instance{k: k, team: t, prob: p, dtype: lt, bf16: dtype == "bf16", plans: map[planKey]*cublaslt.Plan{}, graphs: map[Config]*cudamem.Graph{}, fused: map[Config]*fusedRun{}}
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
	if in.bT, err = cu.MemAlloc(int64(in.prob.K) * int64(in.prob.N) * 2); err != nil {
		return fmt.Errorf("allocate B [N, K]: %w", err)
	}
	if in.status, err = cu.MemAlloc(4); err != nil {
		return fmt.Errorf("allocate fused status: %w", err)
	}
	if in.localFlags, err = cu.MemAlloc(MaxWorld * MaxChunks * FlagStride); err != nil {
		return fmt.Errorf("allocate local flags: %w", err)
	}
	if err := cu.MemsetD8(in.localFlags, 0, MaxWorld*MaxChunks*FlagStride); err != nil {
		return fmt.Errorf("clear local flags: %w", err)
	}
	if err := cu.MemsetD32(in.status, 0, 1); err != nil {
		return fmt.Errorf("clear fused status: %w", err)
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
	}{{"fill", &in.fillFn}, {"fill_t", &in.fillTFn}, {"check_rows", &in.checkFn}, {"count_bad", &in.badFn}, {"copy_chunk", &in.copyFn}, {"reduce_chunk", &in.redFn}} {
		if *f.dst, err = in.util.Function(f.name); err != nil {
			return fmt.Errorf("gemm_util function %s: %w", f.name, err)
		}
	}
	return nil
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
		for _, r := range in.fused {
			errs = append(errs, r.close())
		}
		in.fused = nil
		for _, p := range in.plans {
			errs = append(errs, p.Close())
		}
		in.plans = nil
		if in.pipe != nil {
			errs = append(errs, in.pipe.close()...)
		}
		for _, p := range []*cu.DevicePtr{&in.res, &in.samples, &in.bT, &in.status, &in.localFlags, &in.ws[0], &in.ws[1], &in.ws[2]} {
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

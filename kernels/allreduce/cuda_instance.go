//go:build cuda

package allreduce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

type arModule struct {
	mod cu.Module
	fn  cu.Function
	cfg cudaCfg
	// The push two-shots' DirectEntry, which Verify checks too
	// (direct_cuda.go); hasDirect false where the algorithm has none or
	// its grid cannot be resident.
	direct    cu.Function
	hasDirect bool
}

// cudaInstance is one rank's all-reduce over a cudamem team.
type cudaInstance struct {
	team    *cudamem.Team
	prob    space.Problem
	n, nvec int64
	npad    int64 // n padded to whole vectors on every rank (see geometry)
	elt     int
	// The Lamport algorithms' area in every region (lamportOffset; 0
	// where none takes the message), the larger of their layouts, reset
	// for each config.
	lamportOff int64

	stream      cu.Stream
	side        []cu.Stream // one per peer, for TwoShotCE's copies
	fork        cu.Event
	join        []cu.Event
	out, res    cu.DevicePtr // res: the check kernel's sums, in place then direct (6 float64)
	plain       cu.DevicePtr // Verify's plain tensor for DirectEntry, allocated at its first use
	flags       cu.DevicePtr // two_shot_ce_ag's stage counters (maxStages u32), local
	util        cu.Module
	fill, check cu.Function

	mu   sync.Mutex
	mods map[space.ConfigKey]*arModule
}

func (in *cudaInstance) macros() []string { return Macros(in.prob.Dtype, in.team.World()) }

func (in *cudaInstance) utilSource() nvrtc.Source {
	return nvrtc.Source{Name: "allreduce_util.cu", Text: cudamem.DeviceSource + Common + Util, Options: in.macros()}
}

func (in *cudaInstance) source(k cudaCfg) nvrtc.Source {
	return kernelSource(k, in.prob.Dtype, in.team.World(), false)
}

// Precompile builds every config's cubin on all cores into the disk cache
// (blocks and stages are launch parameters, so configs differing only in
// them share one).
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
	key := c.Key()
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
	if inPlaceAlgo(k.algo) {
		if err := m.loadDirect(in.team.SMs()); err != nil {
			_ = m.mod.Unload()
			return nil, err
		}
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
	switch m.cfg.algo {
	case TwoShotPush, TwoShotCE, TwoShotOverlap, TwoShotCEAG:
		return in.team.Data(in.team.Rank()) + cu.DevicePtr(2*in.npad*int64(in.elt))
	}
	return in.out
}

// launch enqueues one all-reduce of the data regions into out.
func (in *cudaInstance) launch(m *arModule) error {
	if IsLamport(m.cfg.algo) {
		t := in.team
		return launchLamport(m.fn, m.cfg, in.stream, t.PtrTable(), t.Data(t.Rank()), in.out, in.n, t.Rank(), in.lamportOff, in.lamportSlot(m.cfg.algo))
	}
	switch m.cfg.algo {
	case TwoShotCE:
		return in.launchCE(m)
	case TwoShotCEAG:
		return in.launchCEAG(m)
	}
	args := cudamem.Args(uint64(in.team.PtrTable()), uint64(in.out), uint64(in.nvec), uint64(in.team.Rank()), uint64(in.npad)*uint64(in.elt))
	if err := m.fn.Launch(int(m.cfg.blocks), 1, 1, int(m.cfg.threads), 1, 1, 0, in.stream, args); err != nil {
		return fmt.Errorf("launch allreduce: %w", err)
	}
	return nil
}

// launchCE enqueues the copy-engine two-shot (twoShotCE) into in.out.
func (in *cudaInstance) launchCE(m *arModule) error {
	return ceStreams{in.side, in.fork, in.join}.twoShotCE(in.team, m.fn, m.cfg, in.stream, in.out, in.npad, in.nvec, in.elt, in.npad*int64(in.elt))
}

// launchCEAG enqueues the pipelined two-shot: the stage flags zeroed on
// the main stream, the fork (so no side stream can see the previous call's
// flags), the SM kernel that reduce-scatters piece after piece (ALGO 6:
// each block adds 1 to flags[p] when its part of piece p is reduced), and
// on each peer's stream, per piece, a wait until flags[p] counts every
// block, then the copy of this rank's reduced shard of the piece into the
// peer's output region. The copy engines thus all-gather piece p while the
// SMs reduce-scatter piece p+1. The side streams join the main one, and the
// team barrier ends the call (every peer's copies into this rank have
// landed; nobody's next scatter overtakes a peer still reducing).
func (in *cudaInstance) launchCEAG(m *arModule) error {
	t := in.team
	r, w := t.Rank(), t.World()
	k := m.cfg
	scratch := uint64(in.npad) * uint64(in.elt)
	if err := cu.MemsetD32Async(in.flags, 0, k.stages, in.stream); err != nil {
		return fmt.Errorf("clear stage flags: %w", err)
	}
	if err := in.fork.Record(in.stream); err != nil {
		return fmt.Errorf("record fork: %w", err)
	}
	for _, s := range in.side {
		if err := s.Wait(in.fork, 0); err != nil {
			return fmt.Errorf("side stream wait: %w", err)
		}
	}
	args := cudamem.Args(uint64(t.PtrTable()), uint64(in.out), uint64(in.nvec), uint64(r), scratch, uint64(in.flags), uint64(k.stages))
	if err := m.fn.Launch(int(k.blocks), 1, 1, int(k.threads), 1, 1, 0, in.stream, args); err != nil {
		return fmt.Errorf("launch reduce-scatter: %w", err)
	}
	out := func(q int) cu.DevicePtr { return t.Data(q) + cu.DevicePtr(2*scratch) }
	for p, x := range stagePlan(in.nvec, w, k.stages) {
		shard := cu.DevicePtr(16 * (x.off + int64(r)*x.shard))
		for j := 1; j < w; j++ {
			q, s := (r+j)%w, in.side[j-1]
			// Unbounded, and need not be: the counter is local, and the
			// reduce-scatter kernel, whose own waits are bounded, counts
			// every block of every piece, poisoned or not (algos.cu).
			if err := cudamem.WaitFlag(s, in.flags+cu.DevicePtr(4*p), uint32(k.blocks)); err != nil {
				return fmt.Errorf("stage %d: %w", p, err)
			}
			if err := cu.MemcpyDtoDAsync(out(q)+shard, out(r)+shard, 16*x.shard, s); err != nil {
				return fmt.Errorf("stage %d: copy to rank %d: %w", p, q, err)
			}
		}
	}
	for j, s := range in.side {
		if err := in.join[j].Record(s); err != nil {
			return fmt.Errorf("record join: %w", err)
		}
		if err := in.stream.Wait(in.join[j], 0); err != nil {
			return fmt.Errorf("join wait: %w", err)
		}
	}
	return t.Barrier(in.stream)
}

// lamportSlot is Lamport algorithm algo's slot for this problem (its own
// layout on the shared area: symmetricBytes left room for the larger).
func (in *cudaInstance) lamportSlot(algo string) int64 {
	return LamportSlotBytes(algo, in.n, in.elt, in.team.World())
}

// resetLamport resets this rank's Lamport area, in the layout of config
// m's algorithm, before a Lamport config runs (another config, of either
// Lamport algorithm, may have left it mid-sequence or cut off), for the
// caller to follow with the team barrier.
func (in *cudaInstance) resetLamport(m *arModule) error {
	if !IsLamport(m.cfg.algo) {
		return nil
	}
	if err := checkLamport(m.cfg.algo, in.n, in.elt); err != nil {
		return err
	}
	t := in.team
	return resetLamport(t.Data(t.Rank())+cu.DevicePtr(in.lamportOff), m.cfg.algo, in.lamportSlot(m.cfg.algo), t.World(), in.elt, in.stream)
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
	switch dtype {
	case "bf16":
		return 1e-2
	case "f16":
		return 2e-3
	}
	return 1e-5
}

// Verify checks config c's call on fresh inputs from seed against the
// float64 reference; for the push two-shots, their direct entry's call
// too (directCaseFor), which must also leave the bytes around its tensor
// untouched.
func (in *cudaInstance) Verify(ctx context.Context, c space.Config, seed uint64) (sdk.VerifyResult, error) {
	var res [6]float64
	var dc directCase
	direct, guards := false, true
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
		if err := cu.MemsetD32Async(in.output(m), 0xFFFFFFFF, in.npad*int64(in.elt)/4, in.stream); err != nil {
			return fmt.Errorf("poison output: %w", err)
		}
		if err := in.resetLamport(m); err != nil {
			return err
		}
		if err := in.team.Barrier(in.stream); err != nil {
			return err
		}
		if err := cu.MemsetD32Async(in.res, 0, 12, in.stream); err != nil {
			return fmt.Errorf("clear check result: %w", err)
		}
		if IsLamport(m.cfg.algo) {
			if err := in.lamportRehearsal(m, seed); err != nil {
				return err
			}
		}
		if err := in.launch(m); err != nil {
			return err
		}
		args := cudamem.Args(uint64(in.output(m)), uint64(in.n), seed, uint64(in.res))
		if err := in.check.Launch(utilBlocks(in.n), 1, 1, 256, 1, 1, 0, in.stream, args); err != nil {
			return fmt.Errorf("launch check: %w", err)
		}
		if direct = m.hasDirect; direct {
			dc = directCaseFor(in.n, in.elt, in.team.World(), seed)
			if err := in.enqueueDirect(m, dc); err != nil {
				return err
			}
		}
		if err := in.stream.Synchronize(); err != nil {
			return fmt.Errorf("synchronize: %w", err)
		}
		if err := in.team.CheckTimeout(); err != nil {
			return err
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&res[0]), in.res, 8*6); err != nil {
			return fmt.Errorf("read check result: %w", err)
		}
		if direct {
			guards, err = in.directGuardsHeld(dc)
		}
		return err
	})
	if err != nil {
		return sdk.VerifyResult{}, fmt.Errorf("rank %d: %w", in.team.Rank(), err)
	}
	tol := tolerance(in.prob.Dtype)
	rel, ok := checked(res[0], res[1], res[2], tol)
	r := sdk.VerifyResult{RelErr: rel, OK: ok}
	switch {
	case res[2] > 0:
		r.Detail = fmt.Sprintf("rank %d: %.0f of %d outputs NaN/Inf (unwritten or wrong)", in.team.Rank(), res[2], in.n)
	case !ok:
		r.Detail = fmt.Sprintf("rank %d: rel err %.3g over tolerance %.0e", in.team.Rank(), rel, tol)
	}
	if !direct || !r.OK {
		return r, nil
	}
	drel, dok := checked(res[3], res[4], res[5], tol)
	r.RelErr, r.OK = max(rel, drel), dok && guards
	what := fmt.Sprintf("rank %d: %s on a plain tensor (n=%d at offset %d)", in.team.Rank(), DirectEntry, dc.n, dc.off)
	switch {
	case res[5] > 0:
		r.Detail = fmt.Sprintf("%s: %.0f outputs NaN/Inf (unwritten or wrong)", what, res[5])
	case !dok:
		r.Detail = fmt.Sprintf("%s: rel err %.3g over tolerance %.0e", what, drel, tol)
	case !guards:
		r.Detail = what + ": wrote outside the tensor"
	}
	return r, nil
}

// Bench: per iteration, the team's device-side barrier, an event, one
// all-reduce, an event (Team.TimeAs, timed as the host asked). The
// barrier keeps one rank's late start out of another's time, as the
// peers' method (peer_baselines.py) requires.
func (in *cudaInstance) Bench(ctx context.Context, c space.Config, warmup, iters int) ([]float64, error) {
	mode, err := cudamem.TimingRequested(string(sdk.TimingOf(ctx)))
	if err != nil {
		return nil, err
	}
	var times []float64
	err = in.team.Do(func() error {
		m, err := in.module(c)
		if err != nil {
			return err
		}
		// Real data, never zeros (or leftovers from another config).
		if err := in.fillInput(0x5eed); err != nil {
			return err
		}
		if IsLamport(m.cfg.algo) {
			if err := in.resetLamport(m); err != nil {
				return err
			}
			if err := in.team.Barrier(in.stream); err != nil {
				return err
			}
		}
		times, err = in.team.TimeAs(mode, in.stream, warmup, iters, func() error { return in.launch(m) })
		return err
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
		in.mods = map[space.ConfigKey]*arModule{}
		if in.util != (cu.Module{}) {
			errs = append(errs, in.util.Unload())
		}
		if in.out != 0 {
			errs = append(errs, cu.MemFree(in.out))
		}
		if in.res != 0 {
			errs = append(errs, cu.MemFree(in.res))
		}
		if in.plain != 0 {
			errs = append(errs, cu.MemFree(in.plain))
		}
		if in.flags != 0 {
			errs = append(errs, cu.MemFree(in.flags))
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

//go:build cuda

package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/internal/calltime"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// fusedTimeoutNs bounds each wait of the fused GEMM for a chunk's flag. A
// chunk that has not come after 2 s never will (a healthy copy of the
// largest shard takes milliseconds): the kernel stops waiting and the trial
// fails as a hang instead of holding the GPU.
const fusedTimeoutNs = 2_000_000_000

// fusedRun is what a fused config needs at call time, built once by
// Prepare: the compiled tile, the device copies of the tile order and
// chunk table, split-K's workspace (split-K tiles only), and the tensor
// maps of the operands it was last called with (at).
type fusedRun struct {
	g                *FusedGEMM
	ops              Operands
	at               Ptrs
	order, table, rs cu.DevicePtr
	work             SplitKWork
	comm             Comm
}

// fusedFor builds (once per config) c's fused GEMM for this rank.
func (r *Runner) fusedFor(c Config) (*fusedRun, error) {
	if f := r.fused[c]; f != nil {
		return f, nil
	}
	if major, minor := r.peers.ComputeCapability(); major != 9 {
		return nil, fmt.Errorf("impl=fused needs an sm_90 GPU (wgmma, TMA); this one is sm_%d%d", major, minor)
	}
	var extra []string
	t := c.Tile
	if c.Reduce == ReduceEpilogue && !FusedPlain(r.v, r.prob) {
		extra = append(extra, hopper.EpilogueOption)
		// The peers' partials of each own tile go through shared memory
		// where they fit beside the tile's stages (docs/fp8.md).
		t, _ = t.WithPeerBuffers(r.prob.World - 1)
	}
	g, err := r.eng.fused(r.peers.Compiler(), t, r.prob.Dtype.Format(), extra)
	if err != nil {
		return nil, err
	}
	f := &fusedRun{g: g}
	if err := r.kern.tables(f, c); err != nil {
		return nil, errors.Join(err, f.close(r))
	}
	// Split-K's or stream-K's workspace, sized by the problem (a runner's
	// is fixed) and the GPU's SMs (every launch's grid is at most them): the
	// counts start zeroed, as uploaded zeros, and every launch leaves
	// them so (launches of a runner are stream-ordered: Enqueue's one
	// caller at a time, graphs replayed on its stream).
	if f.work, err = g.AllocSplitK(r.prob.M, r.prob.N, r.peers.SMs(), func(n int64, zeroed bool) (cu.DevicePtr, error) {
		if zeroed {
			return r.upload(make([]byte, n))
		}
		return r.alloc(n)
	}); err != nil {
		return nil, errors.Join(err, f.close(r))
	}
	r.fused[c] = f
	return f, nil
}

// upload copies b to new device memory of the runner's (see Engine.alloc).
func (r *Runner) upload(b []byte) (cu.DevicePtr, error) {
	d, err := r.eng.upload(b)
	if err == nil {
		r.mem[d] = int64(len(b))
	}
	return d, err
}

// alloc allocates n bytes of the runner's own (see Engine.alloc).
func (r *Runner) alloc(n int64) (cu.DevicePtr, error) {
	d, err := r.eng.alloc(n, nil)
	if err == nil {
		r.mem[d] = n
	}
	return d, err
}

// release frees memory upload or alloc made.
func (r *Runner) release(d cu.DevicePtr) error {
	if d == 0 {
		return nil
	}
	n, ok := r.mem[d]
	if !ok {
		return fmt.Errorf("free %v: not the runner's", d)
	}
	delete(r.mem, d)
	if ev, ok := r.last.Marked(); ok {
		return r.eng.free(d, n, nil, ev)
	}
	if s, ok := r.last.Stream(); ok {
		return r.eng.free(d, n, &s, nil)
	}
	return r.eng.free(d, n, nil, nil)
}

func words(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// tables: the tile order and chunk table of PlanFusedAG, the flags this
// rank's region, and the start gate.
func (g *agmm) tables(f *fusedRun, c Config) error {
	r, p, me := g.r, g.r.prob, g.r.peers.Rank()
	plan := PlanFusedAG(p.M, p.World, me, c.Chunks, c.Tile.RowsPerTile(), c.Direction == DirPush)
	var err error
	if f.order, err = r.upload(words(plan.Order)); err != nil {
		return err
	}
	if f.table, err = r.upload(words(plan.Table())); err != nil {
		return err
	}
	f.comm = Comm{Order: f.order, Table: f.table, Chunks: len(plan.Flag), Flags: r.peers.Data(me), Status: r.statusDev, TimeoutNs: fusedTimeoutNs}
	f.comm.Start, f.comm.StartMask = r.startGate()
	return nil
}

// maps: A the gathered rows in the payload, the own ones from the
// caller's shard where the call reads it in place; C the caller's; row
// scales the payload's gathered ones (by global row), the own rows' from
// the caller's where their rows are read in place.
func (g *agmm) maps(f *fusedRun, c Config) error {
	r, p, me := g.r, g.r.prob, g.r.peers.Rank()
	ops, err := f.g.Maps(r.payload(me), r.ptr.B, r.ptr.C, p.M, p.N, p.K)
	if err != nil {
		return err
	}
	ops.ScaleA, ops.ScaleB = r.scales()
	if p.Dtype.RowScales() {
		ops.ScaleA = g.scales(me, 0)
	}
	if ShardInPlace(c, p, me) {
		if ops, err = f.g.WithOwnRows(ops, r.ptr.A, me*p.Rows(), p.Rows()); err != nil {
			return err
		}
		if p.Dtype.RowScales() {
			ops.ScaleAOwn = r.ptr.ScaleA // read in place, as the rows are
		}
	}
	f.ops = ops
	return nil
}

// tables: PlanFusedRS's order and table. push=gemm: every row straight
// into its owner's slot, each chunk flagged in its owner's region.
// push=ce: peers' rows into the staging rows, each chunk flagged in a
// local word (localFlag) that a copy engine's stream waits for before
// pushing the chunk (see launchFused); the own rows still go to the own
// slot. push=none: owner q's rows into this rank's own slot q (nobody
// pushes into this rank's slots then), each chunk flagged in its owner's
// region, and the epilogue reads source src's partials in src's slot
// for this rank.
func (m *matmulrs) tables(f *fusedRun, c Config) error {
	r, p, me := m.r, m.r.prob, m.r.peers.Rank()
	if FusedPlain(r.v, p) {
		// The GEMM alone, into the caller's output (see maps): no table.
		f.comm = Comm{Status: r.statusDev, TimeoutNs: fusedTimeoutNs}
		return nil
	}
	if r.needsStaging(c) && r.staging == 0 {
		var err error
		if r.staging, err = r.alloc(int64(p.M) * int64(p.N) * OutBytes); err != nil {
			return fmt.Errorf("allocate staging: %w", err)
		}
	}
	plan := PlanFusedRS(p.M, p.N, p.World, me, c.Chunks, c.Tile.BM, c.Tile.BN, c.Tile.RowsPerTile())
	dst := make([]uint64, p.World)
	// Rows bound for this GPU's memory go by TMA stores (LocalSlot, RSMap).
	maps := make([][128]byte, p.World)
	for q := range dst {
		switch {
		case c.Push == PushCE && q != me:
			dst[q] = uint64(r.staging) + uint64(q*p.Rows()*p.N*OutBytes)
		case c.Push == PushNone:
			dst[q] = uint64(m.slot(me, q))
		default:
			dst[q] = uint64(m.slot(q, me))
		}
		if LocalSlot(c.Push, q, me) {
			var err error
			if maps[q], err = f.g.RSMap(cu.DevicePtr(dst[q]), p.Rows(), p.N); err != nil {
				return err
			}
		}
	}
	flags := make([]uint64, len(plan.Owner))
	for i, q := range plan.Owner {
		flags[i] = uint64(r.flag(q, PartialFlag(me, plan.Index[i])))
		if c.Push == PushCE && q != me {
			flags[i] = uint64(r.localFlag(i))
		}
	}
	var ep RSEpilogue
	if c.Reduce == ReduceEpilogue {
		ep = RSEpilogue{Me: me, World: p.World, SlotBytes: uint64(SlotElems(p) * OutBytes), Flags: uint64(r.flag(me, 0))}
		if c.Push == PushNone {
			ep.Parts, ep.Remote = make([]uint64, p.World), true
			for src := range ep.Parts {
				ep.Parts[src] = uint64(m.slot(src, me))
			}
		}
	}
	tab, err := plan.Table(dst, flags, ep)
	if err != nil {
		return err
	}
	if f.order, err = r.upload(words(plan.Order)); err != nil {
		return err
	}
	if f.rs, err = r.upload(tab); err != nil {
		return err
	}
	// The timeout bounds the epilogue's waits for peers' partials
	// (reduce=epilogue).
	f.comm = Comm{Order: f.order, Status: r.statusDev, TimeoutNs: fusedTimeoutNs, RS: f.rs, RowsPerRank: p.Rows(), RSMaps: maps}
	if c.Reduce == ReduceEpilogue {
		// Only the epilogue waits for peers inside the GEMM.
		f.comm.Start, f.comm.StartMask = r.startGate()
	}
	return nil
}

// maps: A and B the caller's, and their scales; the table says where
// rows go, or, for the GEMM alone of one rank, C's map the caller's output.
func (m *matmulrs) maps(f *fusedRun, c Config) error {
	p := m.r.prob
	out := cu.DevicePtr(0)
	if FusedPlain(m.r.v, p) {
		out = m.r.ptr.C
	}
	ops, err := f.g.Maps(m.r.ptr.A, m.r.ptr.B, out, p.M, p.N, p.K)
	if err != nil {
		return err
	}
	ops.ScaleA, ops.ScaleB = m.r.scales()
	f.ops = ops
	return nil
}

// close frees f's tables (the fused GEMM is the engine's).
func (f *fusedRun) close(r *Runner) error {
	var errs []error
	for _, p := range []*cu.DevicePtr{&f.order, &f.table, &f.rs, &f.work.Partials, &f.work.Counts} {
		errs = append(errs, r.release(*p))
		*p = 0
	}
	return errors.Join(errs...)
}

// Reset zeroes, on s, the local "chunk staged" flags, the reduce-scatter
// tables' tile counts and split-K's counts, and the fused kernels' timeout
// word at once: a failed call may have left some set. Only while no call
// of the runner is in flight (the plugin's, between trials).
func (r *Runner) Reset(s cu.Stream) error {
	r.status.Store(0)
	if err := cu.MemsetD8Async(r.localFlags, 0, MaxWorld*MaxChunks*FlagStride, s); err != nil {
		return fmt.Errorf("clear local flags: %w", err)
	}
	for _, f := range r.fused {
		if f.rs != 0 {
			if err := cu.MemsetD8Async(f.rs+RSCountOffset, 0, RSCountBytes, s); err != nil {
				return fmt.Errorf("clear fused tile counts: %w", err)
			}
		}
		if f.work.Counts != 0 {
			if err := cu.MemsetD8Async(f.work.Counts, 0, r.mem[f.work.Counts], s); err != nil {
				return fmt.Errorf("clear split-K counts: %w", err)
			}
		}
	}
	return nil
}

// FusedFailed reports a fused kernel's timed-out wait (since Reset): the
// output of that call was invalid, and the flags of the region are in an
// unknown state, so no fused call of c runs after it.
func (r *Runner) FusedFailed(c Config) error {
	w := r.status.Load()
	if c.Impl != ImplFused || w == 0 {
		return nil
	}
	// The word is a cudamem.Poison (hopper_comm.cuh): the start gate's
	// bound is the team's, SYMM_TIMEOUT_NS; a chunk's is fusedTimeoutNs.
	if p := cudamem.Poison(w); p.Kind() == cudamem.KindFusedGate {
		return fmt.Errorf("hang: the fused GEMM's start gate timed out waiting for rank %d's call; the output is invalid", p.Peer())
	}
	return fmt.Errorf("hang: the fused GEMM waited over %d s for a chunk's flag (a copy never completed); the output is invalid", fusedTimeoutNs/1_000_000_000)
}

// scales are the call's scales as the fused GEMM reads them (FP8; 0
// otherwise).
func (r *Runner) scales() (a, b cu.DevicePtr) {
	if !r.prob.Dtype.FP8() {
		return 0, 0
	}
	return r.ptr.ScaleA, r.ptr.ScaleB
}

// localFlag is word i of the runner's private flag area (cache-line
// apart): the fused matmul + reduce-scatter's "chunk i is staged" flags,
// set by the GEMM and waited for (then cleared) by the copy streams.
func (r *Runner) localFlag(i int) cu.DevicePtr {
	return r.localFlags + cu.DevicePtr(i*FlagStride)
}

// startGate is the kernel's start gate (Comm.Start, Comm.StartMask): this
// rank's start flags, and every peer.
func (r *Runner) startGate() (cu.DevicePtr, uint32) {
	me := r.peers.Rank()
	mask := uint32(1)<<r.prob.World - 1
	return r.flag(me, StartFlag(0)), mask &^ (1 << me)
}

// signalStart tells every peer, on s, that this rank's call has reached its
// fused GEMM (StartFlag), which that peer's kernel waits for before its
// first wait for this rank's data: the kernel's bounded waits then measure
// the copies, not how far a peer's host lags behind (in symmtune.torch a
// rank may reach a collective seconds after its peers). Nothing waits here:
// the own tiles start at once. The flags are cleared with the chunk flags
// in the end barrier (endBarrier: the GEMM has seen each one before its
// first wait for that peer's data).
func (r *Runner) signalStart(s cu.Stream) error {
	me := r.peers.Rank()
	for q := range r.prob.World {
		if q != me {
			if err := r.signal(s, q, StartFlag(me)); err != nil {
				return err
			}
		}
	}
	return nil
}

// launchFusedGEMM enqueues c's fused GEMM on main, C at out (unused by a
// reduce-scatter), on at most sms SMs, and the start flags beside it on
// the first product stream, which it leaves free. On main the GEMM starts
// with no stream fork before it, and the end barrier follows it there:
// 2-4 µs less a call than from a forked stream (2026-11-26, torch.profiler).
func (r *Runner) launchFusedGEMM(c Config, out cu.DevicePtr, sms int) error {
	f, err := r.fusedFor(c)
	if err != nil {
		return err
	}
	s := r.main
	if f.comm.StartMask != 0 {
		if err := r.signalStart(r.gemm[0]); err != nil {
			return err
		}
	}
	end, err := r.trace.span(func() (string, string) { return "fused GEMM " + c.Tile.String(), "main" }, s)
	if err != nil {
		return err
	}
	ops := f.ops
	ops.Work = f.work
	comm := f.comm
	// The end barrier follows as the GEMM's dependent (see end): it may
	// launch from the GEMM's start. Where no end barrier follows (an agmm
	// of one rank), whatever comes next launches as usual.
	comm.EarlyDependents = r.barrierFirst(c) && FusedEndBarrier(r.v, r.prob)
	calltime.Mark("before GEMM kernel")
	if err := f.g.Launch(s, ops, out, sms, comm); err != nil {
		return err
	}
	calltime.Mark("GEMM kernel launch")
	return end()
}

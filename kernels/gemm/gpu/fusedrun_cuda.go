//go:build cuda

package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// fusedTimeoutNs bounds each wait of the fused GEMM for a chunk's flag. A
// chunk that has not come after 2 s never will (a healthy copy of the
// largest shard takes milliseconds): the kernel stops waiting and the trial
// fails as a hang instead of holding the GPU.
const fusedTimeoutNs = 2_000_000_000

// fusedRun is what a fused config needs at call time, built once by
// prepare: the compiled tile, its tensor maps, and the device copies of
// the tile order and chunk table.
type fusedRun struct {
	g                *FusedGEMM
	ops              Operands
	order, table, rs cu.DevicePtr
	comm             Comm
}

// fusedFor builds (once per config) c's fused GEMM for this rank. Call
// inside Do.
func (in *instance) fusedFor(c Config) (*fusedRun, error) {
	if r := in.fused[c]; r != nil {
		return r, nil
	}
	if major, minor := in.team.ComputeCapability(); major != 9 {
		return nil, fmt.Errorf("impl=fused needs an sm_90 GPU (wgmma, TMA); this one is sm_%d%d", major, minor)
	}
	p, me := in.prob, in.team.Rank()
	var extra []string
	if c.Reduce == ReduceEpilogue {
		extra = append(extra, hopper.EpilogueOption)
	}
	g, err := CompileFusedWith(in.team.Compiler(), c.Tile, in.bf16, extra)
	if err != nil {
		return nil, err
	}
	r := &fusedRun{g: g}
	if err := in.fillFused(r, c, p, me); err != nil {
		r.close()
		return nil, err
	}
	in.fused[c] = r
	return r, nil
}

func (in *instance) fillFused(r *fusedRun, c Config, p Problem, me int) error {
	upload := func(b []byte) (cu.DevicePtr, error) {
		d, err := cu.MemAlloc(int64(len(b)))
		if err != nil {
			return 0, fmt.Errorf("allocate fused tables: %w", err)
		}
		return d, cu.MemcpyHtoD(d, unsafe.Pointer(&b[0]), int64(len(b)))
	}
	words := func(v []uint32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], x)
		}
		return b
	}
	var err error
	if in.k.Name == AGMM {
		if r.ops, err = r.g.Maps(in.payload(me), in.bT, in.pipe.(*agmm).out, p.M, p.N, p.K); err != nil {
			return err
		}
		if ShardInPlace(c, p, me) {
			// The own rows from the caller's shard (agmm.own), in place.
			if r.ops, err = r.g.WithOwnRows(r.ops, in.pipe.(*agmm).own, me*p.Rows(), p.Rows()); err != nil {
				return err
			}
		}
		plan := PlanFusedAG(p.M, p.World, me, c.Chunks, c.Tile.RowsPerTile())
		if r.order, err = upload(words(plan.Order)); err != nil {
			return err
		}
		if r.table, err = upload(words(plan.Table())); err != nil {
			return err
		}
		r.comm = Comm{Order: r.order, Table: r.table, Chunks: len(plan.Flag), Flags: in.team.Data(me), Status: in.status, TimeoutNs: fusedTimeoutNs}
		r.comm.Start, r.comm.StartMask = in.startGate()
		return nil
	}
	mr := in.pipe.(*matmulrs)
	if r.ops, err = r.g.Maps(mr.a, in.bT, 0, p.M, p.N, p.K); err != nil {
		return err
	}
	plan := PlanFusedRS(p.M, p.N, p.World, me, c.Chunks, c.Tile.BM, c.Tile.BN, c.Tile.RowsPerTile())
	// push=gemm: every row straight into its owner's slot, each chunk
	// flagged in its owner's region. push=ce: peers' rows into the local
	// staging buffer, each chunk flagged in a local word (in.localFlag)
	// that a copy engine's stream waits for before pushing the chunk (see
	// launchFused); the own rows still go to the own slot.
	dst := make([]uint64, p.World)
	for q := range dst {
		dst[q] = uint64(mr.slot(q, me))
		if c.Push == PushCE && q != me {
			dst[q] = uint64(mr.staging) + uint64(q*p.Rows()*p.N*2)
		}
	}
	flags := make([]uint64, len(plan.Owner))
	for i, q := range plan.Owner {
		flags[i] = uint64(in.flag(q, PartialFlag(me, plan.Index[i])))
		if c.Push == PushCE && q != me {
			flags[i] = uint64(in.localFlag(i))
		}
	}
	var ep RSEpilogue
	if c.Reduce == ReduceEpilogue {
		ep = RSEpilogue{Me: me, World: p.World, SlotBytes: uint64(SlotElems(p) * 2), Flags: uint64(in.flag(me, 0))}
	}
	tab, err := plan.Table(dst, flags, ep)
	if err != nil {
		return err
	}
	if r.order, err = upload(words(plan.Order)); err != nil {
		return err
	}
	if r.rs, err = upload(tab); err != nil {
		return err
	}
	// The timeout bounds the epilogue's waits for peers' partials
	// (reduce=epilogue).
	r.comm = Comm{Order: r.order, Status: in.status, TimeoutNs: fusedTimeoutNs, RS: r.rs, RowsPerRank: p.Rows()}
	if c.Reduce == ReduceEpilogue {
		// Only the epilogue waits for peers inside the GEMM.
		r.comm.Start, r.comm.StartMask = in.startGate()
	}
	return nil
}

func (r *fusedRun) close() error {
	var errs []error
	for _, p := range []*cu.DevicePtr{&r.order, &r.table, &r.rs} {
		if *p != 0 {
			errs = append(errs, cu.MemFree(*p))
			*p = 0
		}
	}
	if r.g != nil {
		errs = append(errs, r.g.Close())
	}
	return errors.Join(errs...)
}

// clearStatus zeroes, on main, the fused kernels' timeout word, the local
// "chunk staged" flags and the reduce-scatter tables' tile counts (a failed
// call may have left some set).
// Call inside Do, before a trial's calls.
func (in *instance) clearStatus() error {
	if err := cu.MemsetD32Async(in.status, 0, 1, in.main); err != nil {
		return fmt.Errorf("clear fused status: %w", err)
	}
	if err := cu.MemsetD8Async(in.localFlags, 0, MaxWorld*MaxChunks*FlagStride, in.main); err != nil {
		return fmt.Errorf("clear local flags: %w", err)
	}
	for _, r := range in.fused {
		if r.rs != 0 {
			if err := cu.MemsetD8Async(r.rs+RSCountOffset, 0, RSCountBytes, in.main); err != nil {
				return fmt.Errorf("clear fused tile counts: %w", err)
			}
		}
	}
	return nil
}

// checkStatus reports a fused kernel's timed-out wait since clearStatus,
// after the caller synchronized main. Call inside Do.
func (in *instance) checkStatus(c Config) error {
	if c.Impl != ImplFused {
		return nil
	}
	var v uint32
	if err := cu.MemcpyDtoH(unsafe.Pointer(&v), in.status, 4); err != nil {
		return fmt.Errorf("read fused status: %w", err)
	}
	if v != 0 {
		return fmt.Errorf("hang: the fused GEMM waited over %d s for a chunk's flag (a copy never completed); the output is invalid", fusedTimeoutNs/1_000_000_000)
	}
	return nil
}

// localFlag is word i of the instance's private flag area (cache-line
// apart): the fused matmul + reduce-scatter's "chunk i is staged" flags,
// set by the GEMM and waited for (then cleared) by the copy streams.
func (in *instance) localFlag(i int) cu.DevicePtr {
	return in.localFlags + cu.DevicePtr(i*FlagStride)
}

// startGate is the kernel's start gate (Comm.Start, Comm.StartMask): this
// rank's start flags, and every peer.
func (in *instance) startGate() (cu.DevicePtr, uint32) {
	me := in.team.Rank()
	mask := uint32(1)<<in.prob.World - 1
	return in.flag(me, StartFlag(0)), mask &^ (1 << me)
}

// signalStart tells every peer, on s, that this rank's call has reached its
// fused GEMM (StartFlag), which that peer's kernel waits for before its
// first wait for this rank's data: the kernel's bounded waits then measure
// the copies, not how far a peer's host lags behind (in symmtune.torch a
// rank may reach a collective seconds after its peers). Nothing waits here:
// the own tiles start at once. The flags are cleared with the chunk flags
// after the GEMM (clearFlags: the GEMM has seen each one before its first
// wait for that peer's data).
func (in *instance) signalStart(s cu.Stream) error {
	me := in.team.Rank()
	for q := range in.prob.World {
		if q != me {
			if err := in.signal(s, q, StartFlag(me)); err != nil {
				return err
			}
		}
	}
	return nil
}

// launchFusedGEMM enqueues c's fused GEMM on the first product stream, C at
// out (unused by a reduce-scatter), on at most sms SMs.
func (in *instance) launchFusedGEMM(c Config, out cu.DevicePtr, sms int) error {
	r, err := in.fusedFor(c)
	if err != nil {
		return err
	}
	s := in.gemm[0]
	if r.comm.StartMask != 0 {
		if err := in.signalStart(s); err != nil {
			return err
		}
	}
	end, err := in.trace.span("fused GEMM "+c.Tile.String(), "gemm0", s)
	if err != nil {
		return err
	}
	if err := r.g.Launch(s, r.ops, out, sms, r.comm); err != nil {
		return err
	}
	return end()
}

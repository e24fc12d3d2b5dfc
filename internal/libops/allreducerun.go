package libops

import (
	"errors"

	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// This file is the all-reduce runtime's boundary (symmtune_allreduce_open,
// _enqueue, _close): symmtune.torch opens a runner of kernels/allreduce
// once per (config, dtype, symmetric workspace) and enqueues each call on
// its stream with the tensor's address and size. Handles share the GEMM
// runners' table (gemmrun.go). The request is checked here, tag-free;
// running needs the cuda build (allreducerun_cuda.go).

// AllreduceOpenRequest is symmtune_allreduce_open's request.
type AllreduceOpenRequest struct {
	RegionBytes int64        `json:"region_bytes"`
	World       int          `json:"world"`
	Rank        int          `json:"rank"`
	Dtype       string       `json:"dtype"`
	Device      int          `json:"device"`
	Config      space.Config `json:"config"`
}

// allreduceOpen is a checked request.
type allreduceOpen struct {
	AllreduceOpenRequest
	regions []uint64
	table   uint64
}

// allreduceRunner is an open all-reduce runner (allreducerun_cuda.go's).
type allreduceRunner interface {
	// enqueue runs one call; eager: stream is not being captured.
	enqueue(stream, t uint64, n int64, eager bool) error
	deviceBytes() int64
	// fence marks, now, the point after its latest eager call, which
	// close waits for (as gemmUnitRunner's).
	fence() (bool, error)
	close() error
}

// checkAllreduceOpen decodes and checks a request and the region pointers.
func checkAllreduceOpen(req []byte, regions []uint64, table uint64) (allreduceOpen, error) {
	var r AllreduceOpenRequest
	if err := decodeRequest(req, &r); err != nil {
		return allreduceOpen{}, err
	}
	switch {
	case r.Dtype != "bf16" && r.Dtype != "f16" && r.Dtype != "f32":
		return allreduceOpen{}, bad("dtype %q: the CUDA all-reduce supports bf16, f16 and f32", r.Dtype)
	case r.RegionBytes < 48:
		return allreduceOpen{}, bad("region_bytes %d: want each rank's region size, [input | scratch | output] of at least 16 bytes each", r.RegionBytes)
	case r.World < 1 || r.World > cudamem.MaxWorld:
		return allreduceOpen{}, bad("world %d outside 1..%d", r.World, cudamem.MaxWorld)
	case r.Rank < 0 || r.Rank >= r.World:
		return allreduceOpen{}, bad("rank %d: want 0..%d", r.Rank, r.World-1)
	case r.Device < 0:
		return allreduceOpen{}, bad("device %d: want a CUDA device ordinal", r.Device)
	case r.Config == nil:
		return allreduceOpen{}, bad("config: missing")
	case len(regions) != r.World:
		return allreduceOpen{}, bad("region_ptrs: %d regions for world %d", len(regions), r.World)
	case table == 0:
		return allreduceOpen{}, bad("ptr_table: NULL")
	}
	if err := checkArConfig(r.Config); err != nil {
		return allreduceOpen{}, err
	}
	for q, d := range regions {
		if d == 0 {
			return allreduceOpen{}, bad("region_ptrs[%d]: NULL", q)
		}
	}
	return allreduceOpen{AllreduceOpenRequest: r, regions: append([]uint64(nil), regions...), table: table}, nil
}

// checkArConfig checks what the runner reads of a config: an algorithm it
// runs and positive threads, blocks and unroll (stages, which only
// two_shot_ce_ag reads, defaults to 1).
func checkArConfig(c space.Config) error {
	a, ok := c["algorithm"]
	if !ok || !a.IsStr || allreduce.AlgoNumber(a.Str) == 0 {
		return bad("config: algorithm %v: not an all-reduce algorithm", a)
	}
	if why := arNotRun[a.Str]; why != "" {
		return bad("config: algorithm %s: symmtune.torch does not run it (%s)", a.Str, why)
	}
	for _, p := range []string{"threads", "blocks", "unroll"} {
		v, ok := c[p]
		if !ok || v.IsStr || v.Int < 1 {
			return bad("config: %s %v: want a positive integer", p, v)
		}
	}
	if b := c["blocks"].Int; b > cudamem.MaxBlocks {
		return bad("config: %d blocks exceed the %d barrier slots", b, cudamem.MaxBlocks)
	}
	if _, ok := c["stages"]; !ok {
		c["stages"] = space.Int(1)
	}
	return nil
}

// AllreduceOpen checks the request and opens its runner in the current
// CUDA context (which must be the request's device's): the handle.
func AllreduceOpen(req []byte, regions []uint64, table uint64) (handle uint64, err error) {
	defer func() { err = flat(err) }()
	o, err := checkAllreduceOpen(req, regions, table)
	if err != nil {
		return 0, err
	}
	if err := checkPoisoned(); err != nil {
		return 0, err
	}
	// Not under runtimeMu: a Lamport open is collective (it meets the
	// peers at a barrier), and ranks that share a process (tests) would
	// wait for each other behind the lock. The open touches nothing of the
	// runtime's state.
	r, err := openAllreduce(o)
	if err != nil {
		return 0, err
	}
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	c, err := dev.newCounter()
	if err != nil {
		return 0, errors.Join(err, dev.relaxed(r.close))
	}
	u := &arUnit{unit: unit{closeFn: r.close, fenceFn: r.fence, bytes: r.deviceBytes(), held: c}, r: r}
	return addHandle(&liveRunner{ar: u, dtype: o.Dtype}), nil
}

// AllreduceEnqueue sums the n elements at t over the ranks, in place, on
// stream (a CUstream handle; 0 the legacy default stream).
func AllreduceEnqueue(handle, stream, t uint64, n int64) (err error) {
	defer func() { err = flat(err) }()
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	if err := checkPoisoned(); err != nil {
		return err
	}
	lr, err := liveHandle(handle)
	if err != nil {
		return err
	}
	ar := lr.ar
	if ar == nil {
		return bad("handle %d: a GEMM runner, not an all-reduce", handle)
	}
	if t == 0 {
		return bad("tensor: NULL")
	}
	if n < 1 {
		return bad("n=%d: want a positive number of elements", n)
	}
	if lr.retired {
		return errRetired(handle)
	}
	capturing, id, hold, err := dev.capture(stream)
	if err != nil {
		return err
	}
	if !capturing {
		reap()
	}
	if err := ar.note(capturing, id, hold); err != nil {
		return err
	}
	if err := ar.r.enqueue(stream, t, n, !capturing); err != nil {
		return enqueueErr(err)
	}
	return nil
}

// AllreduceClose retires handle's runner (as GemmClose).
func AllreduceClose(handle uint64) error { return GemmClose(handle) }

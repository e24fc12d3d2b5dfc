//go:build cuda

package allreduce

import (
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// resetLamport enqueues on stream the reset of Lamport algorithm algo's
// area at `area` (lamport.go): its header zeroed, its buffers of slots of
// slot bytes filled with the sentinel of elt-byte elements, negative zero.
// The caller then holds every rank back with a team barrier until all have
// reset.
func resetLamport(area cu.DevicePtr, algo string, slot int64, world, elt int, stream cu.Stream) error {
	if err := cu.MemsetD8Async(area, 0, lamportHeader, stream); err != nil {
		return fmt.Errorf("zero the Lamport header: %w", err)
	}
	bufs, nbytes := area+lamportHeader, LamportAreaBytes(algo, slot, world)-lamportHeader
	var err error
	if elt == 2 {
		err = cu.MemsetD16Async(bufs, 0x8000, nbytes/2, stream)
	} else {
		err = cu.MemsetD32Async(bufs, 0x80000000, nbytes/4, stream)
	}
	if err != nil {
		return fmt.Errorf("fill the Lamport buffers with -0.0: %w", err)
	}
	return nil
}

// launchLamport enqueues config k's Lamport algorithm (ALGO 7 or 8) of the
// n elements at in into out, on the areas at byte offset area of the
// regions in ptrs, of slots of slot bytes.
func launchLamport(fn cu.Function, k cudaCfg, stream cu.Stream, ptrs, in, out cu.DevicePtr, n int64, rank int, area, slot int64) error {
	args := cudamem.Args(uint64(ptrs), uint64(in), uint64(out), uint64(n), uint64(rank), uint64(area), uint64(slot))
	if err := fn.Launch(int(k.blocks), 1, 1, int(k.threads), 1, 1, 0, stream, args); err != nil {
		return fmt.Errorf("launch allreduce: %w", err)
	}
	return nil
}

// lamportRehearsal enqueues what Verify runs of a Lamport algorithm before
// the call it checks: three calls on other inputs, the second of fewer
// elements. The checked call then runs on buffer 0 again, after every
// buffer was used once and buffer 0 was cleared by a call smaller than the
// one that filled it: a wrong rotation, or a clear of the wrong size, would
// leave stale data that reads as arrived, and the checked sum would be off.
func (in *cudaInstance) lamportRehearsal(m *arModule, seed uint64) error {
	t := in.team
	for j, n := range []int64{in.n, max(in.n/3, 1), in.n} {
		args := cudamem.Args(uint64(t.Data(t.Rank())), uint64(n), seed^uint64(0x9e37*(j+1)), uint64(t.Rank()))
		if err := in.fill.Launch(utilBlocks(n), 1, 1, 256, 1, 1, 0, in.stream, args); err != nil {
			return fmt.Errorf("launch fill: %w", err)
		}
		if err := launchLamport(m.fn, m.cfg, in.stream, t.PtrTable(), t.Data(t.Rank()), in.out, n, t.Rank(), in.lamportOff, in.lamportSlot(m.cfg.algo)); err != nil {
			return err
		}
	}
	return in.fillInput(seed)
}

// resetLamport resets the Lamport area (the whole region) on every rank:
// each rank's earlier work done first (a call of another runner on this
// region may still be queued), then its area reset, then the team barrier,
// so no peer's next call can store into an area not yet reset. Every rank
// opens the same runners at the same point of its call sequence (the
// runtime's calls are collective), so the barrier meets, and every runner
// sharing the region starts from the same state on every rank. Not during a
// capture.
func (r *Runner) resetLamport() error {
	if err := cu.Synchronize(); err != nil {
		return err
	}
	if err := resetLamport(r.input(), r.cfg.algo, r.lamportSlot, r.peers.World(), r.elt, r.capture); err != nil {
		return err
	}
	if err := r.peers.Barrier(r.capture); err != nil {
		return err
	}
	return cu.Synchronize()
}

// enqueueLamport is Enqueue for the Lamport algorithms: one kernel that reads
// the tensor and writes the sum into it, with nothing to stage, so it is
// launched as it is, inside a capture or not (a graph replays it with no
// host work: the call counter lives in the region).
func (r *Runner) enqueueLamport(stream cu.Stream, t cu.DevicePtr, n int64) error {
	if n < 1 {
		return fmt.Errorf("n=%d: want a positive number of elements", n)
	}
	if err := checkLamport(r.cfg.algo, n, r.elt); err != nil {
		return err
	}
	l, _ := lamportOf(r.cfg.algo)
	if need := l.slotVectors(n, r.elt, r.peers.World()) * 16; need > r.lamportSlot {
		return fmt.Errorf("n=%d needs %s slots of %d bytes, the regions of %d bytes hold %d (%d bytes for n): %w",
			n, r.cfg.algo, need, r.regionBytes, r.lamportSlot, LamportRegionBytes(r.cfg.algo, n, r.elt, r.peers.World()), ErrRegionsTooSmall)
	}
	r.mayBeCaptured = true
	return launchLamport(r.fn, r.cfg, stream, r.peers.PtrTable(), t, t, n, r.peers.Rank(), 0, r.lamportSlot)
}

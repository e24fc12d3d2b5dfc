//go:build cuda

package allreduce

import (
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// ceStreams are the copy-engine two-shot's side streams (one per peer),
// its fork event and its join events (one per side stream).
type ceStreams struct {
	side []cu.Stream
	fork cu.Event
	join []cu.Event
}

// twoShotCE enqueues the copy-engine two-shot on stream, the one sequence
// the plugin's instance and the Runner run: scatter chunks into their
// owners' scratch slots with one copy per peer on its own stream, the team
// barrier, the local reduce kernel fn (ALGO 4) into chunk r of the output
// region, the results copied into every peer's output region, and the team
// barrier again (the peers' results have landed here; nobody's next
// scatter can overtake a peer's reduce). The scratch slots written first
// were released by the previous call's last barrier. out is the kernel's
// out argument; the message is npad elements of elt bytes, nvec vectors;
// the scratch region starts at byte offset scratch of each region and
// the output region at 2*scratch (the plugin: npad elements each; the
// Runner: thirds of its region, see regionScratch).
func (c ceStreams) twoShotCE(p Peers, fn cu.Function, k cudaCfg, stream cu.Stream, out cu.DevicePtr, npad, nvec int64, elt int, scratchOff int64) error {
	r, w := p.Rank(), p.World()
	chunk := npad * int64(elt) / int64(w)
	scratch := cu.DevicePtr(scratchOff)
	mine := cu.DevicePtr(int64(r) * chunk)
	copies := func(what string, dst, src func(q int) cu.DevicePtr) error {
		if err := c.fork.Record(stream); err != nil {
			return fmt.Errorf("%s: record fork: %w", what, err)
		}
		for i := 1; i < w; i++ {
			q, s := (r+i)%w, c.side[i-1]
			if err := s.Wait(c.fork, 0); err != nil {
				return fmt.Errorf("%s: side stream wait: %w", what, err)
			}
			if err := cu.MemcpyDtoDAsync(dst(q), src(q), chunk, s); err != nil {
				return fmt.Errorf("%s: copy to rank %d: %w", what, q, err)
			}
			if err := c.join[i-1].Record(s); err != nil {
				return fmt.Errorf("%s: record join: %w", what, err)
			}
			if err := stream.Wait(c.join[i-1], 0); err != nil {
				return fmt.Errorf("%s: join wait: %w", what, err)
			}
		}
		return nil
	}
	err := copies("scatter",
		func(q int) cu.DevicePtr { return p.Data(q) + scratch + mine },
		func(q int) cu.DevicePtr { return p.Data(r) + cu.DevicePtr(int64(q)*chunk) })
	if err != nil {
		return err
	}
	if err := p.Barrier(stream); err != nil {
		return err
	}
	args := cudamem.Args(uint64(p.PtrTable()), uint64(out), uint64(nvec), uint64(r), uint64(scratch))
	if err := fn.Launch(int(k.blocks), 1, 1, int(k.threads), 1, 1, 0, stream, args); err != nil {
		return fmt.Errorf("launch reduce: %w", err)
	}
	err = copies("all-gather",
		func(q int) cu.DevicePtr { return p.Data(q) + 2*scratch + mine },
		func(int) cu.DevicePtr { return p.Data(r) + 2*scratch + mine })
	if err != nil {
		return err
	}
	return p.Barrier(stream)
}

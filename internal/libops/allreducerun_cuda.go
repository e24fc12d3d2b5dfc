//go:build cuda

package libops

import (
	"errors"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// cudaAllreduce is an allreduce.Runner on symmetric memory the caller
// mapped.
type cudaAllreduce struct {
	r     *allreduce.Runner
	peers *cudamem.Mapped
	bytes int64
	// last is the point after the latest eager call, which close waits
	// for: not the whole device, while another thread may be capturing.
	last cudamem.LastCall
}

// openAllreduce opens o's runner in the current context.
func openAllreduce(o allreduceOpen) (allreduceRunner, error) {
	if err := currentDevice(o.Device); err != nil {
		return nil, err
	}
	free0, _, _ := cu.MemGetInfo()
	peers, err := mapped(o.Rank, o.World, o.regions, o.table, o.Device)
	if err != nil {
		return nil, err
	}
	r, err := allreduce.NewRunner(peers, o.Config, o.Dtype, o.RegionBytes)
	if err != nil {
		return nil, errors.Join(err, peers.Close())
	}
	c := &cudaAllreduce{r: r, peers: peers}
	// What its modules and streams took of the device (the region is
	// Python's).
	if free1, _, err := cu.MemGetInfo(); err == nil && free0 > free1 {
		c.bytes = free0 - free1
	}
	return c, nil
}

func (c *cudaAllreduce) enqueue(stream, t uint64, n int64, eager bool) error {
	// Fail-stop: a call on a poisoned workspace is refused on every rank
	// (barrier.cuh), a plain load of the workspace's host word.
	if err := c.peers.Poisoned("all_reduce"); err != nil {
		return err
	}
	s := cudamem.StreamOf(stream)
	if eager {
		c.last.Eager(s)
	}
	if err := c.r.Enqueue(s, cu.DevicePtr(t), n); err != nil {
		if errors.Is(err, allreduce.ErrRegionsTooSmall) {
			return badErr(err)
		}
		return err
	}
	return nil
}

func (c *cudaAllreduce) deviceBytes() int64 { return c.bytes }

func (c *cudaAllreduce) fence() (bool, error) { return c.last.Mark() }

// close waits for the runner's last eager call (fence marked it) and frees
// it (the runtime runs it in the relaxed capture mode: device.relaxed). Not
// a context-wide synchronize, as the runner's own Close makes: that would
// invalidate a capture another thread makes meanwhile, whatever the mode.
// Calls in graphs are done: their graphs held the unit.
func (c *cudaAllreduce) close() error {
	if err := c.last.Wait(); err != nil {
		return err // nothing freed under work that may still run
	}
	return errors.Join(c.r.Release(), c.peers.Close(), c.last.Close())
}

//go:build cuda

package libops

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// cudaAllreduce is an allreduce.Runner on symmetric memory the caller
// mapped.
type cudaAllreduce struct {
	r     *allreduce.Runner
	peers *cudamem.Mapped
}

// openAllreduce opens o's runner in the current context.
func openAllreduce(o allreduceOpen) (allreduceRunner, error) {
	dev, err := cu.CurrentDevice()
	if err != nil {
		return nil, fmt.Errorf("no current CUDA context on this thread (make a CUDA call on device %d first): %w", o.Device, err)
	}
	if int(dev) != o.Device {
		return nil, bad("device %d: the current CUDA context is device %d's", o.Device, int(dev))
	}
	data := make([]cu.DevicePtr, len(o.regions))
	for q, d := range o.regions {
		data[q] = cu.DevicePtr(d)
	}
	timeout, err := cudamem.RuntimeTimeoutFromEnv()
	if err != nil {
		return nil, badErr(err)
	}
	peers, err := cudamem.NewMapped(o.Rank, o.World, data, cu.DevicePtr(o.table), o.Device, timeout)
	if err != nil {
		return nil, err
	}
	r, err := allreduce.NewRunner(peers, o.Config, o.Dtype, o.RegionBytes)
	if err != nil {
		return nil, errors.Join(err, peers.Close())
	}
	return &cudaAllreduce{r: r, peers: peers}, nil
}

func (c *cudaAllreduce) enqueue(stream, t uint64, n int64) error {
	// Fail-stop: a call on a poisoned workspace is refused on every rank
	// (barrier.cuh), a plain load of the workspace's host word.
	if err := c.peers.Poisoned("all_reduce"); err != nil {
		return err
	}
	if err := c.r.Enqueue(cudamem.StreamOf(stream), cu.DevicePtr(t), n); err != nil {
		if errors.Is(err, allreduce.ErrRegionsTooSmall) {
			return badErr(err)
		}
		return err
	}
	return nil
}

func (c *cudaAllreduce) captured() bool { return c.r.MayBeCaptured() }

func (c *cudaAllreduce) close() error { return errors.Join(c.r.Close(), c.peers.Close()) }

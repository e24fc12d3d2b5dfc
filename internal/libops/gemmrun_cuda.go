//go:build cuda

package libops

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// cudaRunner is a gpu.Runner on symmetric memory the caller mapped, with
// its one config.
type cudaRunner struct {
	r     *gpu.Runner
	peers *cudamem.Mapped
	cfg   gpu.Config
	op    string // the kernel, for the poison's error
}

// openRunner opens o's runner in the current context. A tuned algo that
// this cuBLASLt does not rank for every product (another library version)
// gives way to its first, with a warning.
func openRunner(o gemmOpen) (gemmRunner, string, error) {
	dev, err := cu.CurrentDevice()
	if err != nil {
		return nil, "", fmt.Errorf("no current CUDA context on this thread (make a CUDA call on device %d first): %w", o.device, err)
	}
	if int(dev) != o.device {
		return nil, "", bad("device %d: the current CUDA context is device %d's", o.device, int(dev))
	}
	data := make([]cu.DevicePtr, len(o.regions))
	for q, d := range o.regions {
		data[q] = cu.DevicePtr(d)
	}
	timeout, err := cudamem.RuntimeTimeoutFromEnv()
	if err != nil {
		return nil, "", badErr(err)
	}
	peers, err := cudamem.NewMapped(o.rank, o.prob.World, data, cu.DevicePtr(o.table), o.device, timeout)
	if err != nil {
		return nil, "", err
	}
	if err := o.prob.Dtype.CheckDevice(peers.ComputeCapability()); err != nil {
		return nil, "", errors.Join(badErr(err), peers.Close())
	}
	r, err := gpu.NewRunner(o.kernel, peers, o.prob, o.dtype)
	if err != nil {
		return nil, "", errors.Join(err, peers.Close())
	}
	cr := &cudaRunner{r: r, peers: peers, cfg: o.cfg, op: fmt.Sprint(o.kernel)}
	warning := ""
	n, err := r.Algos(o.cfg)
	if err == nil && n > 0 && o.cfg.Algo >= n {
		warning = fmt.Sprintf("the tuned %s config's algo %d is not among the %d algorithms this cuBLASLt ranks for every product; running its first", o.kernel, o.cfg.Algo, n)
		cr.cfg.Algo = 0
	}
	if err == nil {
		err = r.Prepare(cr.cfg)
	}
	if err != nil {
		return nil, "", errors.Join(err, cr.close())
	}
	return cr, warning, nil
}

func (c *cudaRunner) enqueue(stream uint64, p gemmPtrs) error {
	// Fail-stop: as cudaAllreduce's. A fused GEMM's timed-out wait writes
	// the workspace's poison word (Mapped.PoisonWord), which the call's
	// end barrier spreads to the peers and to this host word.
	if err := c.peers.Poisoned(c.op); err != nil {
		return err
	}
	return c.r.Enqueue(c.cfg, cudamem.StreamOf(stream), ptrsOf(p))
}

func (c *cudaRunner) close() error { return errors.Join(c.r.Close(), c.peers.Close()) }

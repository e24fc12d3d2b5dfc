//go:build cuda

package libops

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/internal/calltime"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// The runtime's device (runtime.go) in the cuda build.
func init() { dev = &cudaDevice{engines: map[int]*gpu.Engine{}} }

// cudaDevice keeps one shared GEMM engine per device ordinal, for the
// process's life: its streams, workspaces and kernels serve every GEMM op
// and row count (gpu.Engine), so what the runtime holds does not grow with
// the shapes called.
type cudaDevice struct {
	engines map[int]*gpu.Engine
	// codeBytes: device memory lost over units' first launches
	// (watchCode); watched: the engines' rankings when it last measured.
	codeBytes int64
	watched   int
}

// watchCode measures a unit's first launch only where its open made a
// new cuBLASLt ranking (only then can it launch kernels no call has
// loaded): two cuMemGetInfo calls cost a first call about 20 µs.
func (d *cudaDevice) watchCode() func() {
	n := 0
	for _, e := range d.engines {
		n += e.Rankings()
	}
	if n == d.watched {
		return func() {}
	}
	d.watched = n
	free0, _, err := cu.MemGetInfo()
	if err != nil {
		return func() {}
	}
	return func() {
		if free1, _, err := cu.MemGetInfo(); err == nil && free0 > free1 {
			d.codeBytes += free0 - free1
		}
	}
}

func (d *cudaDevice) closeLater(ordinal int, f func() error, onErr func(error)) {
	if e := d.engines[ordinal]; e != nil {
		e.Later(f, onErr)
		return
	}
	if err := f(); err != nil {
		onErr(err)
	}
}

func (d *cudaDevice) relaxed(f func() error) error { return cudamem.Relaxed(f) }

func (d *cudaDevice) capture(stream uint64) (bool, uint64, func(counter) error, error) {
	capturing, id, g, err := cudamem.StreamOf(stream).CaptureGraph()
	if err != nil || !capturing {
		return false, 0, nil, err
	}
	return true, id, func(c counter) error { return cu.HoldCounter(g, c.(cCounter).Ptr()) }, nil
}

// cCounter is a counter in C memory, where the driver's destructor
// thread decrements it.
type cCounter struct{ *cu.Counter }

func (d *cudaDevice) newCounter() (counter, error) { return cCounter{cu.NewCounter()}, nil }

func (d *cudaDevice) engineBytes() (own, pool int64) {
	own = d.codeBytes
	for _, e := range d.engines {
		own += e.OwnBytes()
		pool += e.PoolBytes()
	}
	return own, pool
}

// currentDevice checks that the current context is ordinal's.
func currentDevice(ordinal int) error {
	dv, err := cu.CurrentDevice()
	if err != nil {
		return fmt.Errorf("no current CUDA context on this thread (make a CUDA call on device %d first): %w", ordinal, err)
	}
	if int(dv) != ordinal {
		return bad("device %d: the current CUDA context is device %d's", ordinal, int(dv))
	}
	return nil
}

// mapped is the peers' view of a request's regions, its kernels' waits
// bounded by the runtime's timeout ($SYMMTUNE_TIMEOUT_S).
func mapped(rank, world int, regions []uint64, table uint64, ordinal int) (*cudamem.Mapped, error) {
	data := make([]cu.DevicePtr, len(regions))
	for q, p := range regions {
		data[q] = cu.DevicePtr(p)
	}
	timeout, err := cudamem.RuntimeTimeoutFromEnv()
	if err != nil {
		return nil, badErr(err)
	}
	if err := checkWatchdogEnv(); err != nil {
		return nil, err
	}
	m, err := cudamem.NewMapped(rank, world, data, cu.DevicePtr(table), ordinal, timeout)
	if err == nil {
		startWatchdog()
	}
	return m, err
}

func (d *cudaDevice) openGemm(o gemmOpen) (gemmOpDevice, error) {
	if err := currentDevice(o.device); err != nil {
		return nil, err
	}
	peers, err := mapped(o.rank, o.prob.World, o.regions, o.table, o.device)
	if err != nil {
		return nil, err
	}
	if err := o.prob.Dtype.CheckDevice(peers.ComputeCapability()); err != nil {
		return nil, errors.Join(badErr(err), peers.Close())
	}
	e := d.engines[o.device]
	if e == nil {
		if e, err = gpu.NewSharedEngine(); err != nil {
			return nil, errors.Join(err, peers.Close())
		}
		d.engines[o.device] = e
	}
	return &cudaOp{o: o, peers: peers, eng: e}, nil
}

// cudaOp is a GEMM op on the device: the peers' view of its region and
// the device's engine.
type cudaOp struct {
	o     gemmOpen
	peers *cudamem.Mapped
	eng   *gpu.Engine
}

// open opens the runner of m rows: the op's config where it runs at m,
// else m's default on this GPU (the same on every rank: the choice
// depends only on the agreed config, m and the GPU), with a warning.
func (c *cudaOp) open(m int) (gemmUnitRunner, string, error) {
	o := c.o
	p, err := gpu.ParseProblem(space.Problem{Dtype: o.dtype, Shape: space.Shape{"m": int64(m), "n": int64(o.prob.N), "k": int64(o.prob.K)}}, o.prob.World)
	if err != nil {
		return nil, "", badErr(err)
	}
	cfg, warning := o.cfg, ""
	if why := o.kernel.Validate(cfg, p); why != nil {
		major, minor := c.peers.ComputeCapability()
		def, err := o.kernel.DefaultOn(p, gpu.Device{Major: major, Minor: minor, SMs: c.peers.SMs()})
		if err == nil {
			cfg, err = o.kernel.ParseConfig(def)
		}
		if err != nil {
			return nil, "", badErr(fmt.Errorf("m=%d: the config does not run (%v) and no default does: %w", m, why, err))
		}
		warning = fmt.Sprintf("the %s config does not run at m=%d (%s); running the default config there", o.kernel, m, oneLine(why.Error()))
	}
	r, err := gpu.NewRunnerOn(c.eng, o.kernel, c.peers, p, o.dtype)
	if err != nil {
		return nil, "", err
	}
	n, err := r.Algos(cfg)
	if err == nil && n > 0 && cfg.Algo >= n {
		warning = fmt.Sprintf("the %s config's algo %d is not among the %d algorithms this cuBLASLt ranks for every product at m=%d; running its first", o.kernel, cfg.Algo, n, m)
		cfg.Algo = 0
	}
	if err == nil {
		err = r.Prepare(cfg)
	}
	if err != nil {
		return nil, "", errors.Join(err, r.Close())
	}
	return &cudaRunner{r: r, cfg: cfg, peers: c.peers, op: fmt.Sprint(o.kernel)}, warning, nil
}

func (c *cudaOp) close() error { return c.peers.Close() }

// cudaRunner is a gpu.Runner for one row count, with its config, and the
// op's peers (whose workspace a timed-out wait poisons) and kernel name.
type cudaRunner struct {
	r     *gpu.Runner
	cfg   gpu.Config
	peers *cudamem.Mapped
	op    string
}

func (c *cudaRunner) enqueue(stream uint64, p gemmPtrs, capturing bool) error {
	// Fail-stop: a call on a poisoned workspace is refused on every rank
	// (barrier.cuh), a plain load of the workspace's host word. A fused
	// GEMM's timed-out wait writes the workspace's poison word, which the
	// call's end barrier spreads to the peers and to this host word.
	if err := c.peers.Poisoned(c.op); err != nil {
		return err
	}
	calltime.Mark("poisoned word")
	return c.r.EnqueueKnown(c.cfg, cudamem.StreamOf(stream), ptrsOf(p), capturing)
}

func (c *cudaRunner) deviceBytes() int64 { return c.r.DeviceBytes() }

func (c *cudaRunner) fence() (bool, error) { return c.r.Fence() }

// close frees the runner; the runtime runs it in the relaxed capture mode
// (device.relaxed), on the engine's thread or a caller's (a retire, a
// reap), while another thread may be capturing in torch's global mode.
func (c *cudaRunner) close() error { return c.r.Close() }

//go:build cuda

package allreduce

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/kernels/internal/graphcache"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// Peers is what a Runner needs of the ranks it runs with: this rank's
// place, every rank's symmetric region as mapped here ([input | scratch |
// output] by thirds, regionScratch, each holding npad elements, see
// Padded; a Lamport algorithm's area instead, see lamport.go), the
// pointer table the kernels
// index, the team barrier, and the GPU. cudamem.Team implements it;
// cudamem.Mapped for symmetric memory another runtime made (torch's
// symm_mem, for symmtune.torch).
type Peers interface {
	Rank() int
	World() int
	Data(q int) cu.DevicePtr
	PtrTable() cu.DevicePtr
	Barrier(stream cu.Stream) error
	SMs() int
	Compiler() nvrtc.Compiler
}

// Runner is one rank's all-reduce with one config on a caller's tensors of
// any size that fits the regions (symmtune.torch's launch sequence): the
// compiled kernel (the size is a launch argument), the side streams and
// events of the copy-engine two-shot, and the graphs of the calls by
// tensor address and size. Enqueue runs on the caller's stream in
// the context current on the caller's thread; it starts no goroutine. A
// Runner serves one caller at a time.
//
// The push two-shots (two_shot_push, two_shot_overlap) are compiled with
// PUSH_OUT=0: the sum lands in place over the input region, so a tensor
// that is the input region (symmtune.torch.empty's) needs no copy at all.
// Any other 16-byte-aligned tensor runs their second entry, DirectEntry,
// which reads the tensor and writes the sum into it: one kernel too, no
// copy (planCall says when).
//
// The Lamport algorithms (IsLamport) lay their area (lamport.go) over the
// whole region instead, which no runner of another algorithm may share,
// nor one of the other Lamport algorithm (their layouts differ): each
// reads the tensor and writes the sum into it, wherever it lives, one
// kernel per call, never staged and never a graph of its own.
type Runner struct {
	peers       Peers
	cfg         cudaCfg
	elt         int
	regionBytes int64 // of each rank's region: 3*npad elements must fit
	scratchOff  int64 // the scratch region's byte offset, the output's half of it (regionScratch)
	lamportSlot int64 // a Lamport algorithm's slot size on the region (lamportSlotOf)

	mod       cu.Module
	fn        cu.Function
	fnDirect  cu.Function // the push two-shots' DirectEntry
	hasDirect bool        // fnDirect is loaded and its grid fits at once (else plain tensors are staged)
	side      []cu.Stream // one per peer: two_shot_ce's copies
	fork      cu.Event
	join      []cu.Event
	capture   cu.Stream // where calls are captured
	graphs    *graphcache.Cache[call, *cudamem.Graph]

	// mayBeCaptured: a call may sit in a caller's CUDA graph, which then
	// holds this runner's module and buffers (see MayBeCaptured).
	mayBeCaptured bool
}

// MayBeCaptured says whether a caller's CUDA graph may hold one of this
// runner's calls: a call was enqueued while its stream was being
// captured, or a one-launch call was made, whose stream is not asked (that
// path stays one driver call). Such a runner must outlive those graphs.
func (r *Runner) MayBeCaptured() bool { return r.mayBeCaptured }

// ErrRegionsTooSmall is Enqueue's error for a size the regions cannot hold.
var ErrRegionsTooSmall = errors.New("the symmetric regions are too small")

// call is what a graph holds: the tensor's address and size.
type call struct {
	t cu.DevicePtr
	n int64
}

// geom is one call's geometry (see geometry): n elements padded to npad,
// nvec 16-byte vectors.
type geom struct{ n, npad, nvec int64 }

// NewRunner compiles and loads config c's kernel for dtype on peers, whose
// regions are regionBytes each, in the current context. Not during a
// capture (it compiles, allocates and synchronizes). two_shot_ce_ag is not
// run here: its pipeline needs stage flags the plugin's instance keeps.
// For a Lamport algorithm it is collective: it resets the Lamport area on
// every rank behind a team barrier (resetLamport).
func NewRunner(peers Peers, c space.Config, dtype string, regionBytes int64) (*Runner, error) {
	k, err := parseCudaCfg(c)
	if err != nil {
		return nil, err
	}
	if k.algo == TwoShotCEAG {
		return nil, fmt.Errorf("algorithm %s: the runner does not run it (its copy-engine pipeline is the plugin's)", k.algo)
	}
	// Any size checks the dtype and world.
	_, _, _, elt, err := geometry(space.Problem{Dtype: dtype, Shape: map[string]int64{"n": 1}}, peers.World())
	if err != nil {
		return nil, err
	}
	if k.blocks > cudamem.MaxBlocks {
		return nil, fmt.Errorf("%d blocks exceed the %d barrier slots", k.blocks, cudamem.MaxBlocks)
	}
	r := &Runner{peers: peers, cfg: k, elt: elt, regionBytes: regionBytes, scratchOff: regionScratch(regionBytes),
		graphs: &graphcache.Cache[call, *cudamem.Graph]{Destroy: (*cudamem.Graph).Destroy}}
	if IsLamport(k.algo) {
		if r.lamportSlot = lamportSlotOf(k.algo, regionBytes, peers.World()); r.lamportSlot < lamportAlign {
			return nil, fmt.Errorf("%s on regions of %d bytes: want at least %d (%d of state, then three buffers of slots of %d bytes): %w",
				k.algo, regionBytes, LamportAreaBytes(k.algo, lamportAlign, peers.World()), lamportHeader, lamportAlign, ErrRegionsTooSmall)
		}
	}
	if err := r.setup(dtype); err != nil {
		return nil, errors.Join(fmt.Errorf("all-reduce on rank %d: %w", peers.Rank(), err), r.Close())
	}
	return r, nil
}

// plan is planCall's plan of the call on t.
func (r *Runner) plan(t cu.DevicePtr, g geom) callPlan {
	return planCall(r.cfg.algo, uint64(t), uint64(r.input()), g.n, g.npad, uint64(r.scratchOff), r.hasDirect)
}

// kernelSource is config k's kernel for dtype on world ranks as NVRTC
// compiles it, for the plugin's instance and the Runner alike; sumInPlace
// adds PUSH_OUT=0 (the Runner's push two-shots: the sum in place over the
// input region).
func kernelSource(k cudaCfg, dtype string, world int, sumInPlace bool) nvrtc.Source {
	opts := append(Macros(dtype, world), fmt.Sprintf("-DALGO=%d", AlgoNumber(k.algo)), fmt.Sprintf("-DTHREADS=%d", k.threads), fmt.Sprintf("-DUNROLL=%d", k.unroll))
	if sumInPlace {
		opts = append(opts, "-DPUSH_OUT=0")
	}
	return nvrtc.Source{Name: "allreduce.cu", Text: cudamem.DeviceSource + Common + Allreduce, Options: opts}
}

func (r *Runner) setup(dtype string) error {
	cubin, err := r.peers.Compiler().Compile(kernelSource(r.cfg, dtype, r.peers.World(), inPlaceAlgo(r.cfg.algo)))
	if err != nil {
		return err
	}
	if r.mod, err = cu.LoadData(string(cubin)); err != nil {
		return fmt.Errorf("load module: %w", err)
	}
	if r.fn, err = r.mod.Function("allreduce"); err != nil {
		return fmt.Errorf("allreduce kernel: %w", err)
	}
	// The per-block barriers need the whole grid resident (see maxGridThreads).
	perSM, err := r.fn.MaxActiveBlocksPerMultiProcessor(int(r.cfg.threads), 0)
	if err != nil {
		return fmt.Errorf("occupancy: %w", err)
	}
	if int64(perSM)*int64(r.peers.SMs()) < r.cfg.blocks {
		return fmt.Errorf("%d blocks of %d threads cannot all be resident (%d per SM x %d SMs; the per-block barriers need the whole grid)", r.cfg.blocks, r.cfg.threads, perSM, r.peers.SMs())
	}
	if inPlaceAlgo(r.cfg.algo) {
		if err := r.setupDirect(); err != nil {
			return err
		}
	}
	if r.capture, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	if r.fork, err = cu.MakeEvent(cu.DisableTiming); err != nil {
		return fmt.Errorf("create event: %w", err)
	}
	if IsLamport(r.cfg.algo) {
		if err := r.resetLamport(); err != nil {
			return err
		}
	}
	if r.cfg.algo == TwoShotCE {
		for q := 1; q < r.peers.World(); q++ {
			s, err := cu.MakeStream(cu.NonBlocking)
			if err != nil {
				return fmt.Errorf("create side stream: %w", err)
			}
			r.side = append(r.side, s)
			e, err := cu.MakeEvent(cu.DisableTiming)
			if err != nil {
				return fmt.Errorf("create event: %w", err)
			}
			r.join = append(r.join, e)
		}
	}
	return cu.Synchronize()
}

// setupDirect takes the push two-shot's DirectEntry from the module. It
// uses more registers than the in-place entry (its tail code, and the
// tensor's bounds), so where its grid cannot all be resident the Runner
// stages plain tensors as before rather than fail.
func (r *Runner) setupDirect() error {
	fn, fits, err := directEntry(r.mod, r.cfg, r.peers.SMs())
	r.fnDirect, r.hasDirect = fn, fits
	return err
}

// input is this rank's input region.
func (r *Runner) input() cu.DevicePtr { return r.peers.Data(r.peers.Rank()) }

// geometry is n's, checked against the regions.
func (r *Runner) geometry(n int64) (geom, error) {
	// geometry's arithmetic, without its checks of dtype and world (made
	// at NewRunner) or its map: this runs on every call.
	if n < 1 {
		return geom{}, fmt.Errorf("n=%d: want a positive number of elements", n)
	}
	npad := Padded(n, r.elt, r.peers.World())
	nvec := npad * int64(r.elt) / 16
	// The region by thirds (regionScratch): the same as need > regionBytes.
	if need := 3 * npad * int64(r.elt); npad*int64(r.elt) > r.scratchOff {
		return geom{}, fmt.Errorf("n=%d needs regions of %d bytes ([input | scratch | output] of %d elements), they have %d: %w", n, need, npad, r.regionBytes, ErrRegionsTooSmall)
	}
	return geom{n, npad, nvec}, nil
}

// Enqueue sums the n elements at t over the ranks, in place, on stream.
// Every rank's regions hold 3*npad elements (npad: n padded, Padded;
// the region by thirds, regionScratch).
// t is the input region itself (a tensor made in the symmetric memory) or
// any other tensor, staged: copied in, and the sum copied back, unless a
// push two-shot runs its direct entry on it (planCall). The call
// at an address seen before is captured once and replayed from then on
// (graphcache); inside a capture of stream it is enqueued as it is, and
// that graph holds it. A call that is one kernel (a push two-shot on a
// tensor that is the input region, unpadded, or on a plain tensor with the
// direct entry) is launched as it is: in a caller's capture it is one
// kernel node, and a graph of its own would only add a launch's cost.
func (r *Runner) Enqueue(stream cu.Stream, t cu.DevicePtr, n int64) error {
	if t == 0 {
		return errors.New("tensor: NULL")
	}
	if IsLamport(r.cfg.algo) {
		return r.enqueueLamport(stream, t, n)
	}
	g, err := r.geometry(n)
	if err != nil {
		return err
	}
	if r.plan(t, g).oneLaunch {
		r.mayBeCaptured = true
		return r.launch(stream, t, g)
	}
	capturing, err := cudamem.IsCapturing(stream)
	if err != nil {
		return err
	}
	if capturing {
		r.mayBeCaptured = true
		return r.launch(stream, t, g)
	}
	at := call{t, n}
	graph, ok := r.graphs.Get(at)
	if !ok {
		if !r.graphs.Second(at) {
			return r.launch(stream, t, g)
		}
		if graph, err = cudamem.CaptureLocal(r.capture, func() error { return r.launch(r.capture, t, g) }); err != nil {
			return fmt.Errorf("capture the call in a CUDA graph: %w", err)
		}
		if err := r.graphs.Put(at, graph); err != nil {
			return err
		}
	}
	return graph.Launch(stream)
}

// launch enqueues one call on t as planCall plans it: the staged copy
// in, the padding zeroed, the kernel (the direct entry, or the
// copy-engine two-shot), the copy back.
func (r *Runner) launch(stream cu.Stream, t cu.DevicePtr, g geom) error {
	in := r.input()
	p := r.plan(t, g)
	nbytes := g.n * int64(r.elt)
	if p.stageIn {
		if err := cu.MemcpyDtoDAsync(in, t, nbytes, stream); err != nil {
			return fmt.Errorf("copy the tensor in: %w", err)
		}
	}
	if p.zeroPad {
		if err := cu.MemsetD8Async(in+cu.DevicePtr(nbytes), 0, (g.npad-g.n)*int64(r.elt), stream); err != nil {
			return fmt.Errorf("zero the padding: %w", err)
		}
	}
	switch {
	case r.cfg.algo == TwoShotCE:
		if err := r.launchCE(stream, g); err != nil {
			return err
		}
	case p.pushDirect:
		args := cudamem.Args(uint64(r.peers.PtrTable()), p.out, uint64(g.nvec), uint64(r.peers.Rank()), uint64(r.scratchOff), uint64(g.n), directOutOff)
		if err := r.fnDirect.Launch(int(r.cfg.blocks), 1, 1, int(r.cfg.threads), 1, 1, 0, stream, args); err != nil {
			return fmt.Errorf("launch %s: %w", DirectEntry, err)
		}
	default:
		args := cudamem.Args(uint64(r.peers.PtrTable()), p.out, uint64(g.nvec), uint64(r.peers.Rank()), uint64(r.scratchOff))
		if err := r.fn.Launch(int(r.cfg.blocks), 1, 1, int(r.cfg.threads), 1, 1, 0, stream, args); err != nil {
			return fmt.Errorf("launch allreduce: %w", err)
		}
	}
	if p.copyBack {
		if err := cu.MemcpyDtoDAsync(t, cu.DevicePtr(p.from), nbytes, stream); err != nil {
			return fmt.Errorf("copy the sum back: %w", err)
		}
	}
	return nil
}

// launchCE enqueues the copy-engine two-shot (twoShotCE); the sum lands
// in the output region.
func (r *Runner) launchCE(stream cu.Stream, g geom) error {
	return ceStreams{r.side, r.fork, r.join}.twoShotCE(r.peers, r.fn, r.cfg, stream, 0, g.npad, g.nvec, r.elt, r.scratchOff)
}

// Close frees everything, after the GPU's work is done.
func (r *Runner) Close() error {
	return errors.Join(cu.Synchronize(), r.Release())
}

// Release frees everything now, with no synchronize: for an owner that
// has waited for the runner's work itself (the symmtune.torch runtime,
// whose close must leave a capture on another thread whole).
func (r *Runner) Release() error {
	var errs []error
	if r.graphs != nil {
		errs = append(errs, r.graphs.DestroyAll())
	}
	if r.mod != (cu.Module{}) {
		errs = append(errs, r.mod.Unload())
		r.mod = cu.Module{}
	}
	for i := range r.join {
		errs = append(errs, cu.DestroyEvent(&r.join[i]))
	}
	if r.fork != (cu.Event{}) {
		errs = append(errs, cu.DestroyEvent(&r.fork))
	}
	for _, s := range append(r.side, r.capture) {
		if s != (cu.Stream{}) {
			errs = append(errs, s.Destroy())
		}
	}
	r.side, r.join, r.capture = nil, nil, cu.Stream{}
	return errors.Join(errs...)
}

// Both kinds of symmetric memory run the Runner.
var (
	_ Peers = (*cudamem.Team)(nil)
	_ Peers = (*cudamem.Mapped)(nil)
)

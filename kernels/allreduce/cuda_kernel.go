//go:build cuda

package allreduce

import (
	"context"
	"fmt"
	"strings"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// CUDA is the CUDA all-reduce: what plugins/allreduce serves when built
// with -tags cuda.
func CUDA() sdk.Kernel { return cudaKernel{} }

// Tunables of the CUDA all-reduce.
const (
	pAlgo    = "algorithm" // one of Algorithms' names
	pThreads = "threads"   // threads per block
	pBlocks  = "blocks"    // blocks in the grid (one barrier slot each)
	pUnroll  = "unroll"    // 16-byte vectors per thread per rank in flight
	// pStages (stages.go): two_shot_ce_ag's pipeline depth
)

// Limits Validate enforces without a GPU.
const (
	// maxGridThreads bounds blocks*threads so that every block of the grid
	// is resident at once on any GPU symmtune targets (the per-block
	// barriers wait for the same block on every peer; a block that cannot
	// be scheduled would deadlock its peers). 132 SMs x 1024 threads.
	maxGridThreads = 132 * 1024
	regsPerSM      = 65536
	baseRegs       = 32 // addressing, loop state and barrier besides the load buffers
)

func cudaSpace() space.Space {
	algos := make([]space.Value, len(Algorithms))
	for i, a := range Algorithms {
		algos[i] = space.Str(a.Name)
	}
	return space.Space{Params: []space.Param{
		{Name: pAlgo, Values: algos},
		{Name: pThreads, Values: ints(128, 256, 512, 1024)},
		{Name: pBlocks, Values: ints(1, 2, 4, 8, 16, 32, 64, 132, 264)},
		{Name: pUnroll, Values: ints(1, 2, 4, 8)},
		{Name: pStages, Values: ints(stageValues...)},
	}}
}

// cudaKernel is the CUDA all-reduce (sum): one-shot or two-shot over NVLink
// with pull-based 16-byte loads, compiled per config by NVRTC.
type cudaKernel struct{}

func (cudaKernel) Describe() sdk.Description {
	return sdk.Description{
		Name:          "allreduce",
		KernelVersion: KernelVersion(),
		Dims:          []string{"n"},
		Dtypes:        []string{"bf16", "f16", "f32"},
		Space:         cudaSpace(),
		// Valid for every problem; searches and untuned callers use
		// DefaultFor's size-dependent choice instead.
		Default: space.Config{
			pAlgo: space.Str(TwoShotPush), pThreads: space.Int(128), pBlocks: space.Int(1), pUnroll: space.Int(1), pStages: space.Int(1),
		},
		Summary: "all-reduce (sum) of n elements across GPUs over CUDA IPC: one-shot, pull or push two-shot (per-tile overlapped or not), copy-engine two-shot, SM reduce-scatter pipelined with a copy-engine all-gather, or a barrier-free Lamport one-shot or two-shot, 16-byte accesses over NVLink",
	}
}

// cudaCfg is a config in typed form.
type cudaCfg struct {
	algo                            string
	threads, blocks, unroll, stages int64
}

func parseCudaCfg(c space.Config) (cudaCfg, error) {
	var k cudaCfg
	a, ok := c[pAlgo]
	if !ok || !a.IsStr || AlgoNumber(a.Str) == 0 {
		names := make([]string, len(Algorithms))
		for i, x := range Algorithms {
			names[i] = x.Name
		}
		return k, fmt.Errorf("algorithm %v: want one of %s", a, strings.Join(names, ", "))
	}
	k.algo = a.Str
	for _, p := range []struct {
		name string
		dst  *int64
	}{{pThreads, &k.threads}, {pBlocks, &k.blocks}, {pUnroll, &k.unroll}, {pStages, &k.stages}} {
		v, ok := c[p.name]
		if !ok || v.IsStr || v.Int < 1 {
			return k, fmt.Errorf("%s %v: want a positive integer", p.name, v)
		}
		*p.dst = v.Int
	}
	return k, nil
}

// geometry is the problem as the kernels see it: n elements of elt bytes,
// padded with zeros to npad, a multiple of world 16-byte vectors, so any n
// runs on the vector path and splits evenly over the ranks (the padding's
// sum is zero, and nobody reads it back): nvec vectors in all.
func geometry(p space.Problem, world int) (n, npad, nvec int64, elt int, err error) {
	switch p.Dtype {
	case "bf16", "f16", "f32":
	default:
		return 0, 0, 0, 0, fmt.Errorf("dtype %q: the CUDA all-reduce supports bf16, f16 and f32", p.Dtype)
	}
	elt, _ = space.DtypeSize(p.Dtype)
	n, ok := p.Shape["n"]
	if !ok || n <= 0 || len(p.Shape) != 1 {
		return 0, 0, 0, 0, fmt.Errorf("shape %v: want n=<elements>, n > 0", p.Shape)
	}
	if world < 1 || world > cudamem.MaxWorld {
		return 0, 0, 0, 0, fmt.Errorf("world %d outside 1..%d", world, cudamem.MaxWorld)
	}
	npad = Padded(n, elt, world)
	return n, npad, npad * int64(elt) / 16, elt, nil
}

// DefaultFor implements sdk.Defaulter: the size-dependent default of
// kernels/defaults.json, what an untuned caller should run.
func (cudaKernel) DefaultFor(p space.Problem, world int, backend string) (space.Config, error) {
	n, _, _, elt, err := geometry(p, world)
	if err != nil {
		return nil, err
	}
	return Default(n, elt, world), nil
}

// Validate is pure arithmetic on config, problem and world: alignment,
// grid residency, registers, and grids with more blocks than work.
func (cudaKernel) Validate(c space.Config, p space.Problem, world int, _ string) error {
	k, err := parseCudaCfg(c)
	if err != nil {
		return err
	}
	_, _, nvec, elt, err := geometry(p, world)
	if err != nil {
		return err
	}
	if IsLamport(k.algo) {
		// Its buffers cap the message; it reads the tensor itself, unpadded.
		if err := checkLamport(k.algo, p.Shape["n"], elt); err != nil {
			return err
		}
	}
	work := workVectors(k.algo, p.Shape["n"], elt, world)
	if k.blocks > cudamem.MaxBlocks {
		return fmt.Errorf("%d blocks exceed the %d barrier slots", k.blocks, cudamem.MaxBlocks)
	}
	if k.blocks*k.threads > maxGridThreads {
		return fmt.Errorf("%d blocks x %d threads exceed %d resident threads (per-block barriers need the whole grid resident)", k.blocks, k.threads, maxGridThreads)
	}
	// Each thread holds UNROLL*WORLD 16-byte vectors (4 registers each) in
	// flight; past the per-thread share of the register file the compiler
	// spills them to local memory, which defeats the point.
	regs := 4*k.unroll*int64(world) + baseRegs
	limit := min(int64(regsPerSM)/k.threads, 255)
	if regs > limit {
		return fmt.Errorf("unroll %d x world %d needs ~%d registers per thread, over the %d that %d threads allow", k.unroll, world, regs, limit, k.threads)
	}
	if k.blocks > 1 && (k.blocks-1)*k.threads*k.unroll >= work {
		return fmt.Errorf("%d blocks of %d threads x unroll %d leave blocks with no work (%d vectors per rank)", k.blocks, k.threads, k.unroll, work)
	}
	return checkStages(k.algo, k.stages, k.blocks, k.threads*k.unroll, nvec, world)
}

// SymmetricBytes: the input, the two-shot scratch and the push two-shot's
// output, npad elements each, then the largest of the Lamport algorithms'
// buffers where one takes the message (symmetricBytes).
func (cudaKernel) SymmetricBytes(p space.Problem, world int, backend string) (int64, error) {
	n, npad, _, elt, err := geometry(p, world)
	if err != nil {
		return 0, err
	}
	return symmetricBytes(n, npad, elt, world), nil
}

func (cudaKernel) Open(ctx context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, err := sdk.TeamAs[*cudamem.Team](team)
	if err != nil {
		return nil, err
	}
	n, npad, nvec, elt, err := geometry(p, t.World())
	if err != nil {
		return nil, err
	}
	in := &cudaInstance{team: t, prob: p, n: n, npad: npad, nvec: nvec, elt: elt, mods: map[space.ConfigKey]*arModule{}}
	if lamportAreaFor(n, elt, t.World()) > 0 {
		in.lamportOff = lamportOffset(npad, elt)
	}
	err = t.Do(func() error {
		var err error
		if in.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return fmt.Errorf("create stream: %w", err)
		}
		if in.fork, err = cu.MakeEvent(cu.DisableTiming); err != nil {
			return fmt.Errorf("create event: %w", err)
		}
		for k := 1; k < t.World(); k++ {
			s, err := cu.MakeStream(cu.NonBlocking)
			if err != nil {
				return fmt.Errorf("create side stream: %w", err)
			}
			in.side = append(in.side, s)
			e, err := cu.MakeEvent(cu.DisableTiming)
			if err != nil {
				return fmt.Errorf("create event: %w", err)
			}
			in.join = append(in.join, e)
		}
		if in.out, err = cu.MemAlloc(npad * int64(elt)); err != nil {
			return fmt.Errorf("allocate output: %w", err)
		}
		// The padding stays zero: inputs are written n elements at a time
		// and nobody else writes the input region.
		if npad > n {
			if err := cu.MemsetD8(t.Data(t.Rank())+cu.DevicePtr(n*int64(elt)), 0, (npad-n)*int64(elt)); err != nil {
				return fmt.Errorf("zero the padding: %w", err)
			}
		}
		if in.res, err = cu.MemAlloc(8 * 6); err != nil {
			return fmt.Errorf("allocate check result: %w", err)
		}
		if in.flags, err = cu.MemAlloc(4 * maxStages); err != nil {
			return fmt.Errorf("allocate stage flags: %w", err)
		}
		cubin, err := t.Compiler().Compile(in.utilSource())
		if err != nil {
			return err
		}
		if in.util, err = cu.LoadData(string(cubin)); err != nil {
			return fmt.Errorf("load util module: %w", err)
		}
		if in.fill, err = in.util.Function("fill"); err != nil {
			return fmt.Errorf("fill kernel: %w", err)
		}
		if in.check, err = in.util.Function("check"); err != nil {
			return fmt.Errorf("check kernel: %w", err)
		}
		return nil
	})
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("open cuda all-reduce on rank %d: %w", t.Rank(), err)
	}
	return in, nil
}

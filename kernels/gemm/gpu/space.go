// Package gpu owns the GPU implementations of symmtune's GEMM +
// communication kernels, shared by the agmm (all-gather + matmul) and
// matmulrs (matmul + reduce-scatter) plugins: their search spaces and the
// rules Validate applies (space.go and validate.go, no GPU needed), the chunk plans that
// order copies, products and reductions (plan.go, tested without a GPU),
// and, under the cuda build tag, the pipelines that run those plans: the
// products through cuBLASLt (cuda/cublaslt), the communication through the
// copy engines or SM copy kernels on symmetric memory (symm/cudamem),
// readiness signalled per chunk on the GPU (stream memory operations set
// the flags; a one-warp kernel waits for them, bounded as the barrier's
// waits are), never by the host waiting. That launch sequence is the Runner
// (runner_cuda.go), on any caller's stream over any Peers: the plugins'
// instance is a test harness around it, and libsymmtune runs it for
// symmtune.torch (internal/libops), so it exists once.
package gpu

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

// Kernel names, as the plugins declare them.
const (
	AGMM     = "agmm"
	MatmulRS = "matmulrs"
)

// Parameter names and values.
const (
	ParamImpl = "impl"
	// ImplPipeline: cuBLASLt products on row chunks, overlapped with
	// copies of other chunks.
	ImplPipeline = "pipeline"
	// ImplFused: one persistent Hopper GEMM (kernels/gemm/hopper) per
	// rank. agmm: its producer waits, per tile, on the flags of the chunks
	// the tile's rows come from, while copy engines move the chunks.
	// matmulrs: its epilogue stores each row into its owner's slot
	// (push=gemm) or stages peers' rows locally for copy engines to push
	// (push=ce), flagging each chunk once all its tiles are stored; the
	// owners' reductions run beside it on sm_reserve SMs, or after it.
	// Its impl values are "fused:" and a tile name
	// (hopper.ParseTile), one per tile of hopper.Searched: the tile's
	// fields are not parameters of their own because the host validates
	// the whole product of a space's parameters.
	ImplFused = "fused"

	// ParamChunks cuts each rank's rows into this many chunks: the unit
	// of communication and of the products that wait for it.
	ParamChunks = "chunks"
	// ParamStreams is how many streams the products are spread over, so
	// small chunk products can run side by side.
	ParamStreams = "streams"
	// ParamAlgo is an index into cuBLASLt's heuristic ranking of
	// algorithms for each product's shape (0 = its first choice).
	ParamAlgo = "algo"
	// ParamSMReserve is how many SMs the products leave free
	// (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = SMs - reserve) for the SM
	// copy or reduction kernels running beside them.
	ParamSMReserve = "sm_reserve"

	// agmm: how peers' shards move. CopyCE: copy engines
	// (cuMemcpyDtoDAsync from the peer's mapped buffer), no SMs used;
	// CopySM: a copy kernel of copy_blocks blocks per chunk.
	ParamCopy       = "copy"
	CopyCE          = "ce"
	CopySM          = "sm"
	ParamCopyBlocks = "copy_blocks"
	// ParamDirection: DirPull, each rank reads its peers' chunks once the
	// peer announces its shard; DirPush, each rank writes its own chunks
	// into every peer's buffer and announces each chunk there.
	ParamDirection = "direction"
	DirPull        = "pull"
	DirPush        = "push"

	// matmulrs: how a partial product reaches its owner. PushGEMM: the
	// product writes straight into the owner's buffer over NVLink;
	// PushCE: it writes locally and a copy engine pushes the chunk;
	// PushNone (impl=fused, reduce=epilogue): it writes locally, flags the
	// chunk in the owner's region, and the owner's epilogue loads it over
	// NVLink: each partial crosses one GPU's memory once each way, where a
	// copy engine's push reads and writes it twice more.
	ParamPush = "push"
	PushGEMM  = "gemm"
	PushCE    = "ce"
	PushNone  = "none"
	// ParamReduceBlocks is the grid of each chunk's reduction kernel.
	ParamReduceBlocks = "reduce_blocks"
	// ParamReduce is where the owner sums its rows' partials.
	// ReduceKernel: a reduction kernel per own chunk, on its own stream,
	// once every rank's partial of the chunk is flagged. ReduceEpilogue
	// (impl=fused only): the fused GEMM's epilogue of each own tile (its
	// own tiles come last) waits for the peers' partials of those rows,
	// adds them to its own and stores the sum, so no reduction runs after
	// the GEMM. Configs tuned before this parameter existed reduced with
	// the kernel (ParseConfig reads them so).
	ParamReduce    = "reduce"
	ReduceKernel   = "kernel"
	ReduceEpilogue = "epilogue"

	// ParamBatch 1 runs the same chunk of consecutive peers as one
	// strided-batched product (fewer, larger products: less wave
	// quantization); matmulrs then also orders its products chunk by
	// chunk (see RSPlan).
	ParamBatch = "batch"

	// ParamGraph 1 captures a call's whole launch sequence in a CUDA graph
	// once and replays it, so the host's enqueueing (many calls per
	// product and copy) stays out of the call's time.
	ParamGraph = "graph"

	// ParamFastAccum 0 has FP8 products (dtype e4m3, e4m3_row) accumulate
	// in full fp32 (cuBLASLt promotes the tensor cores' partial sums every
	// few k-steps, CUBLASLT_MATMUL_DESC_FAST_ACCUM off), slower and more
	// exact; 1 accumulates in the tensor cores' FP8 accumulator alone, as
	// the fused GEMM always does. bf16 and f16 products have no such mode:
	// their configs take 1, what every config cached before this parameter
	// ran (addedLater).
	ParamFastAccum = "fast_accum"
)

// MaxWorld is the largest team (cudamem.MaxWorld, which untagged code
// cannot import).
const MaxWorld = 8

// MaxChunks is the largest chunks value: it sizes the flag area.
const MaxChunks = 8

func ints(vs ...int64) []space.Value {
	out := make([]space.Value, len(vs))
	for i, v := range vs {
		out[i] = space.Int(v)
	}
	return out
}

func strs(vs ...string) []space.Value {
	out := make([]space.Value, len(vs))
	for i, v := range vs {
		out[i] = space.Str(v)
	}
	return out
}

var (
	chunkValues  = ints(1, 2, 4, MaxChunks)
	copyBlocks   = ints(4, 8, 16, 32)
	reserveVals  = ints(0, 8, 16, 32)
	streamValues = ints(1, 2, 3)
	algoValues   = ints(0, 1, 2, 3)
)

// Space is the variant's search space on GPUs.
func (v Variant) Space() space.Space {
	impls := []string{ImplPipeline}
	for _, t := range hopper.Searched {
		impls = append(impls, ImplFused+":"+t)
	}
	common := []space.Param{
		{Name: ParamImpl, Values: strs(impls...)},
		{Name: ParamChunks, Values: chunkValues},
		{Name: ParamStreams, Values: streamValues},
		{Name: ParamAlgo, Values: algoValues},
		{Name: ParamSMReserve, Values: reserveVals},
		{Name: ParamBatch, Values: ints(0, 1)},
		{Name: ParamGraph, Values: ints(0, 1)},
	}
	if v == VariantAGMM {
		return space.Space{Params: append(common,
			space.Param{Name: ParamCopy, Values: strs(CopyCE, CopySM)},
			space.Param{Name: ParamCopyBlocks, Values: copyBlocks},
			space.Param{Name: ParamDirection, Values: strs(DirPull, DirPush)},
			fastAccum)}
	}
	return space.Space{Params: append(common,
		space.Param{Name: ParamPush, Values: strs(PushCE, PushGEMM, PushNone)},
		space.Param{Name: ParamReduceBlocks, Values: ints(16, 32, 64, 132, 264)},
		space.Param{Name: ParamReduce, Values: strs(ReduceKernel, ReduceEpilogue)},
		fastAccum)}
}

// fastAccum is the last parameter of both spaces.
var fastAccum = space.Param{Name: ParamFastAccum, Values: ints(1, 0)}

// addedLater are parameters added after configs were first cached, with
// the value that matches what a config without them ran.
var addedLater = map[string]space.Value{ParamReduce: space.Str(ReduceKernel), ParamFastAccum: space.Int(1)}

// Default is what an untuned caller gets: sound on any shape Validate
// accepts (two chunks per shard, so the first products overlap the rest of
// the communication; copy engines, so no SMs are taken from the product;
// cuBLASLt's own first choice of algorithm; the call replayed from a CUDA
// graph, 6-7% faster than enqueueing it at 4096x1792x4096 on 2 x H200).
func (v Variant) Default() space.Config {
	c := space.Config{
		ParamImpl: space.Str(ImplPipeline), ParamChunks: space.Int(2), ParamStreams: space.Int(1),
		ParamAlgo: space.Int(0), ParamSMReserve: space.Int(0), ParamBatch: space.Int(0),
		ParamGraph: space.Int(1), ParamFastAccum: space.Int(1),
	}
	if v == VariantAGMM {
		c[ParamCopy] = space.Str(CopyCE)
		c[ParamCopyBlocks] = copyBlocks[0]
		c[ParamDirection] = space.Str(DirPull)
	} else {
		c[ParamPush] = space.Str(PushCE)
		c[ParamReduceBlocks] = space.Int(132)
		c[ParamReduce] = space.Str(ReduceKernel)
	}
	return c
}

// FitDefault is Default made to run on p (fit), what an untuned caller of
// p runs on GPUs DefaultOn knows nothing of, and what every search
// measures first where the plugin has no hardware (Kernel.DefaultFor).
// An agmm of one rank pushes: it gathers nothing, and pushing reads A
// where it lies (ShardInPlace), where pulling would first copy all of A
// into the workspace on every call (M x K elements: at 16384 x 8192 in
// bf16, 256 MiB, a tenth of the product's time on an H200).
func (v Variant) FitDefault(p Problem) (space.Config, error) {
	c := v.Default()
	if v == VariantAGMM && p.World == 1 {
		c[ParamDirection] = space.Str(DirPush)
	}
	return v.fit(c, p)
}

// fit is c made to run on p: c as is where Validate takes it, else with
// the most chunks of the space's values below c's that Validate accepts
// (a rank holding fewer rows, or one rank); the last reason when none
// does. FitDefault and DefaultOn's family configs take it.
func (v Variant) fit(c space.Config, p Problem) (space.Config, error) {
	var last error
	want := c[ParamChunks].Int
	for i := len(chunkValues) - 1; i >= 0; i-- {
		if chunkValues[i].Int > want {
			continue
		}
		c[ParamChunks] = chunkValues[i]
		cfg, err := v.ParseConfig(c)
		if err != nil {
			return nil, err
		}
		if last = v.Validate(cfg, p); last == nil {
			return c, nil
		}
	}
	return nil, last
}

// Config is a parsed config of either kernel; fields of the other kernel
// stay zero.
type Config struct {
	Impl                  string
	Chunks, Streams, Algo int
	SMReserve             int
	Copy                  string
	CopyBlocks            int
	Direction             string
	Push                  string
	ReduceBlocks          int
	Reduce                string
	Batch                 bool
	Graph                 bool
	// NoFastAccum is fast_accum=0 (FP8 only). Negated so that the zero
	// Config, and one built field by field by code that predates the
	// parameter, means what every other dtype runs.
	NoFastAccum bool
	// Tile is the fused GEMM's tile when Impl is ImplFused.
	Tile hopper.Tile
}

// ParseConfig reads c as a config of the variant, checking names, types
// and that each value is one of the space's.
func (v Variant) ParseConfig(c space.Config) (Config, error) {
	var out Config
	var errs []error
	// A search validates every config of the space (460,800 for
	// matmulrs): the space is built once, not per config.
	sp := spaceOf(v)
	for _, p := range sp.Params {
		val, ok := c[p.Name]
		if !ok {
			if val, ok = addedLater[p.Name]; !ok {
				errs = append(errs, fmt.Errorf("parameter %q missing", p.Name))
				continue
			}
		}
		if p.Index(val) < 0 {
			errs = append(errs, fmt.Errorf("parameter %q: %s is not one of %v", p.Name, val, p.Values))
			continue
		}
		if p.Name == ParamFastAccum {
			out.NoFastAccum = val.Int == 0
			continue
		}
		if p.Name == ParamImpl {
			out.Impl = val.Str
			if name, ok := strings.CutPrefix(val.Str, ImplFused+":"); ok {
				out.Impl = ImplFused
				t, err := hopper.ParseTile(name)
				if err != nil {
					errs = append(errs, err)
				}
				out.Tile = t
			}
			continue
		}
		switch f := out.field(p.Name).(type) {
		case *int:
			*f = int(val.Int)
		case *string:
			*f = val.Str
		case *bool:
			*f = val.Int == 1
		default:
			errs = append(errs, fmt.Errorf("parameter %q sets no Config field", p.Name)) // added to Space without one
		}
	}
	if len(c) != len(sp.Params) {
		for name := range c {
			if _, ok := sp.Param(name); !ok {
				errs = append(errs, fmt.Errorf("unknown parameter %q", name))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", c, err)
	}
	return out, nil
}

// field is the Config field parameter name sets (nil: none), by its type.
func (c *Config) field(name string) any {
	switch name {
	case ParamChunks:
		return &c.Chunks
	case ParamStreams:
		return &c.Streams
	case ParamAlgo:
		return &c.Algo
	case ParamSMReserve:
		return &c.SMReserve
	case ParamCopyBlocks:
		return &c.CopyBlocks
	case ParamReduceBlocks:
		return &c.ReduceBlocks
	case ParamCopy:
		return &c.Copy
	case ParamDirection:
		return &c.Direction
	case ParamPush:
		return &c.Push
	case ParamReduce:
		return &c.Reduce
	case ParamBatch:
		return &c.Batch
	case ParamGraph:
		return &c.Graph
	}
	return nil
}

// spaces holds each variant's Space, built at first use: ParseConfig
// reads it for every config it parses. Callers must not change it.
var spaces = map[Variant]func() space.Space{
	VariantAGMM:     sync.OnceValue(VariantAGMM.Space),
	VariantMatmulRS: sync.OnceValue(VariantMatmulRS.Space),
}

// defaults holds each variant's Default, parsed at first use: Validate
// compares every fused config with it.
var defaults = map[Variant]func() Config{
	VariantAGMM:     sync.OnceValue(func() Config { d, _ := VariantAGMM.ParseConfig(VariantAGMM.Default()); return d }),
	VariantMatmulRS: sync.OnceValue(func() Config { d, _ := VariantMatmulRS.ParseConfig(VariantMatmulRS.Default()); return d }),
}

// parsedDefault is v's Default as a Config, parsed once (an unknown
// variant's every time).
func parsedDefault(v Variant) Config {
	if f, ok := defaults[v]; ok {
		return f()
	}
	d, _ := v.ParseConfig(v.Default())
	return d
}

// spaceOf is v's Space, built once (an unknown variant's every time).
func spaceOf(v Variant) space.Space {
	if f, ok := spaces[v]; ok {
		return f()
	}
	return v.Space()
}

// Plan is c's plan options for rank on p.
func (c Config) Plan(p Problem, rank int) Plan {
	return Plan{M: p.M, World: p.World, Rank: rank, Chunks: c.Chunks, Streams: c.Streams, Batch: c.Batch}
}

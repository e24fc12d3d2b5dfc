// Package gpu owns the GPU implementations of symmtune's GEMM +
// communication kernels, shared by the agmm (all-gather + matmul) and
// matmulrs (matmul + reduce-scatter) plugins: their search spaces and the
// rules Validate applies (this file, no GPU needed), the chunk plans that
// order copies, products and reductions (plan.go, tested without a GPU),
// and, under the cuda build tag, the pipelines that run those plans: the
// products through cuBLASLt (cuda/cublaslt), the communication through the
// copy engines or SM copy kernels on symmetric memory (symm/cudamem),
// readiness signalled per chunk on the GPU with stream memory operations,
// never by the host waiting. That launch sequence is the Runner
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

// FitDefault is Default made to run on p, what an untuned caller of p
// runs and every search measures first (Kernel.DefaultFor;
// python/symmtune/gemm.py's fit_default): Default as is where Validate
// takes it, else with the most chunks of the space's values below
// Default's that Validate accepts (a rank holding fewer rows, or one rank).
func (v Variant) FitDefault(p Problem) (space.Config, error) {
	c := v.Default()
	var last error
	for i := len(chunkValues) - 1; i >= 0; i-- {
		if chunkValues[i].Int > c[ParamChunks].Int {
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

// Validate rejects configs of the variant that cannot run on p, or that
// would only repeat another config's measurement, with the reason.
func (v Variant) Validate(c Config, p Problem) error {
	if c.Impl == ImplFused {
		if err := v.validateFused(c, p); err != nil {
			return err
		}
	}
	if c.Chunks > p.Rows() {
		return fmt.Errorf("chunks %d exceed the %d rows each rank holds", c.Chunks, p.Rows())
	}
	if n := v.MaxProducts(c.Plan(p, 0)); c.Impl == ImplPipeline && c.Streams > n {
		return fmt.Errorf("streams %d exceed the %d products of the pipeline", c.Streams, n)
	}
	if err := validateDtype(c, p); err != nil {
		return err
	}
	switch v {
	case VariantAGMM:
		if c.Copy == CopyCE {
			if c.CopyBlocks != int(copyBlocks[0].Int) {
				return fmt.Errorf("copy_blocks %d: copy-engine copies use no blocks (only copy_blocks=%d is measured)", c.CopyBlocks, copyBlocks[0].Int)
			}
			if c.SMReserve != 0 {
				return fmt.Errorf("sm_reserve %d: nothing runs on SMs beside the products when copy engines move the data", c.SMReserve)
			}
		}
		if c.Batch && p.World <= 2 {
			return fmt.Errorf("batch 1 with one peer: every batch holds one product, the same schedule as batch 0")
		}
		if c.Copy == CopySM && int64(p.K)*int64(p.ElemSize)%16 != 0 {
			return fmt.Errorf("k=%d: SM copies move 16-byte vectors, so a row of A must be a multiple of 16 bytes (k a multiple of %d)", p.K, 16/p.ElemSize)
		}
	case VariantMatmulRS:
		// Any shape: the reduction has a scalar path for unaligned rows.
		if c.Batch && c.Push == PushGEMM {
			return fmt.Errorf("batch 1 with push=gemm: a batched product writes one buffer, but each owner's slot is in another")
		}
		// Batching takes runs of two or more peers; with one peer it only
		// orders the products chunk by chunk, the same order as batch 0's
		// when there is one chunk.
		if c.Batch && p.World <= 2 && c.Chunks == 1 {
			return fmt.Errorf("batch 1 with at most one peer and one chunk: the same products in the same order as batch 0")
		}
		if c.Reduce == ReduceEpilogue && c.Impl != ImplFused {
			return fmt.Errorf("reduce=epilogue: only the fused GEMM (impl=fused) has an epilogue to reduce in")
		}
		if c.Push == PushNone && c.Reduce != ReduceEpilogue {
			return fmt.Errorf("push=none: only the fused GEMM's epilogue (impl=fused, reduce=epilogue) loads the peers' partials where they are")
		}
		// Loaded over NVLink by the epilogue's own loads, the partials
		// stalled it (no faster than push=ce); copied into shared memory
		// while the tile is multiplied, they are not waited for
		// (bench/results/2026-11-26-h200x2-h100x2-rs-smem.md).
		if _, ok := c.Tile.WithPeerBuffers(p.World - 1); c.Push == PushNone && !ok {
			return fmt.Errorf("push=none: tile %s has no room beside its stages for %d peers' partials of a tile, which the epilogue copies into shared memory", c.Tile, p.World-1)
		}
	default:
		return fmt.Errorf("unknown GPU GEMM kernel %s", v)
	}
	if p.World == 1 && c.Chunks > 1 {
		return fmt.Errorf("chunks %d on one rank: there is no communication to overlap", c.Chunks)
	}
	return nil
}

// validateFused rejects fused configs that cannot run, or that would repeat
// another's measurement because a pipeline parameter they do not use
// differs from its default. (A GPU that is not sm_90 is found where the
// config runs: Validate does not see the device.)
func (v Variant) validateFused(c Config, p Problem) error {
	if err := c.Tile.Check(hopper.SmemLimit); err != nil {
		return fmt.Errorf("impl=fused: %w", err)
	}
	// FP8 wgmma reads only K-major operands (B stored [N, K]).
	if err := c.Tile.CheckFormat(p.Dtype.Format()); err != nil {
		return fmt.Errorf("impl=fused: %w", err)
	}
	if err := c.Tile.CheckShapeFor(p.Dtype.Format(), p.N, p.K); err != nil {
		return err
	}
	if c.NoFastAccum && p.Dtype.FP8() {
		return fmt.Errorf("impl=fused with fast_accum 0: the fused GEMM accumulates in wgmma's FP8 accumulator only")
	}
	d := parsedDefault(v)
	if c.Streams != d.Streams || c.Algo != d.Algo || c.Batch != d.Batch {
		return fmt.Errorf("impl=fused is one persistent kernel: streams, algo and batch belong to the cuBLASLt pipeline (only their defaults are measured)")
	}
	switch v {
	case VariantAGMM:
		switch {
		case c.Copy != CopyCE:
			// The persistent GEMM holds every SM's registers: an SM copy
			// kernel could not start until it ends, and it waits for the copies.
			return fmt.Errorf("impl=fused moves chunks with the copy engines only (copy=%s would need SMs the persistent GEMM holds)", c.Copy)
		case c.SMReserve != d.SMReserve || c.CopyBlocks != d.CopyBlocks:
			return fmt.Errorf("impl=fused agmm uses no SMs beside the GEMM: sm_reserve and copy_blocks are for SM copies (only their defaults are measured)")
		}
	case VariantMatmulRS:
		// push=ce: the epilogue stages peers' rows locally and copy
		// engines push each finished chunk; push=gemm: it stores them
		// straight into the owners' slots over NVLink; push=none: it
		// stores them into its own slots, where the owners load them.
		if c.Chunks*p.World > maxRSChunks {
			return fmt.Errorf("impl=fused: %d chunks on %d ranks exceed the kernel's %d", c.Chunks, p.World, maxRSChunks)
		}
		if c.Reduce == ReduceEpilogue {
			if c.ReduceBlocks != d.ReduceBlocks || c.SMReserve != d.SMReserve {
				return fmt.Errorf("reduce=epilogue runs no reduction kernel: reduce_blocks and sm_reserve are for one (only their defaults are measured)")
			}
			// A tile holding two owners' rows would wait for a peer's
			// partials before storing what that peer's own straddling
			// tile waits for: both ranks would wait on each other.
			if rt := c.Tile.RowsPerTile(); p.Rows()%rt != 0 {
				return fmt.Errorf("reduce=epilogue: the %d rows each rank owns are not a multiple of the tile's %d, and a tile holding two ranks' rows would wait on a peer that waits on it", p.Rows(), rt)
			}
			// A CTA must store all its peers' tiles before it waits on an
			// own one, or two ranks' CTAs can each wait for partials the
			// other's has yet to compute (measured: 256x128 tiles of
			// group_m 8 at 4096 rows on 2 GPUs timed out). The own tile
			// rows come last, but tiles are walked column by column inside
			// swizzle groups of group_m tile rows: the peers' rows must
			// fill whole groups.
			if peer := (p.World - 1) * p.Rows() / c.Tile.RowsPerTile(); peer%c.Tile.GroupM != 0 {
				return fmt.Errorf("reduce=epilogue: the peers' %d tile rows do not fill whole swizzle groups of %d (group_m), so a CTA would wait on an own tile before storing a peer's, and ranks could wait on each other", peer, c.Tile.GroupM)
			}
		}
	}
	return nil
}

// ShardInPlace is whether an all-gather + matmul of config c reads rank's
// own shard where the caller holds it, with no copy into the symmetric
// buffer first: pushing (no peer reads the shard from the buffer), and for
// the fused GEMM, whose tiles read the own rows through a tensor map of
// their own, only where no tile holds both own and peer rows.
// python/symmtune/gemm.py's shard_in_place is its port.
func ShardInPlace(c Config, p Problem, rank int) bool {
	if c.Direction != DirPush {
		return false
	}
	if c.Impl != ImplFused {
		return true
	}
	lo, hi, bm := rank*p.Rows(), (rank+1)*p.Rows(), c.Tile.BM
	return lo%bm == 0 && (hi%bm == 0 || hi == p.M)
}

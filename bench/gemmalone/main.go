//go:build cuda

// Command gemmalone measures symmtune's persistent Hopper GEMM
// (kernels/gemm/gpu, impl=fused) alone, with no communication, against
// cuBLASLt in the same process on the same inputs: milestone 1 of the fused
// kernels. For each shape it fills A and B from the project's generator
// (fresh random values, never zeros), then for each tile config compiles
// the kernel, poisons C, runs it once and checks sampled rows against a
// float64 reference computed on the GPU from the generator (plus a scan of
// the whole output for unwritten elements), and only then times it: CUDA
// events around one call, warm-up first, the median over iterations (the
// method of the peer script), with cuBLASLt timed right before and after.
// Output: one CSV row per (shape, config).
//
// -dtype e4m3 and e4m3_row (docs/fp8.md) run FP8 products: e4m3 A and B
// (B stored [N, K]) with fp32 tensor or row scales from the generator,
// bf16 output, checked against the float64 reference of the dequantized
// operands. Each fused tile is timed between cuBLASLt's FP8 product (fast
// accumulation, as the fused kernel's) and cuBLASLt's bf16 product of the
// same shape, so a row gives both ratios; with -fp8-ref-only between the
// FP8 product alone (the ratio to bf16 reads "-"), about half the time.
//
// -rs adds two rows per tile: the same kernel with a one-rank matmul +
// reduce-scatter's epilogue (rs.go), "rs" (rows stored by TMA) or
// "rs-regs" (by each warp's own stores) in its spill_bytes column.
//
// Split-K tiles (":skS", -tiles splitk) get their workspace per shape
// (splitk.go), are checked twice before timing (the second launch starts
// from the counts the first left) and once more after it, and are timed
// only where splitKSkip lets them (a "# ... not timed" line says why not).
//
// -beside N starts a copy of N MiB within the GPU by a copy engine with
// every timed call, cuBLASLt's and the tiles' alike (timing.go): how much
// each product loses to the memory traffic of a peer's pushes. With -peer
// the bytes cross NVLink both ways instead (GPU 0 pushes to GPU 1, GPU 1
// pushes as many into GPU 0), as the ranks of a matmul + reduce-scatter do.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

func main() {
	shapes := flag.String("shapes", "8192x3584x8192,16384x3584x8192,4096x1792x4096", "comma-separated MxNxK")
	set := flag.String("set", "", "a named shape set instead of -shapes: "+setNames()+" (shapes.go)")
	list := flag.Bool("list", false, "print the shapes (-set's or -shapes'), one MxNxK a line, and exit (no GPU needed)")
	defaultsOn := flag.String("defaults-on", "", `with -list: each shape's untuned tile in -dtype ("MxNxK TILE" a line, what -tiles default would time) on the GPU named so, "NAME:SMS" as the driver names it (e.g. "NVIDIA H100 80GB HBM3:132"; the rule's tile factors are per card), without that GPU`)
	tiles := flag.String("tiles", "sweep", `comma-separated tiles `+hopper.TileSyntax+` (hopper.ParseTile; "bn": B stored [K,N], else K-major [N,K]; FP8 takes K-major only; "skS": split-K in S slices, timed only where splitKSkip lets it; "st": stream-K for the last wave, on every SM where hopper.Tile.StreamKTiles shares tiles out), "default" (each shape's untuned tile, gpu.DefaultTileFor of a plain product: split in K where that is estimated faster), "sweep" (tiles.go), "smallm" (issue 56's small-M candidates, tiles.go), "splitk" (split-K candidates, tiles.go)`)
	refOnly := flag.Bool("fp8-ref-only", false, "FP8 dtypes: time cuBLASLt's FP8 product (fast accumulation) alone, around each tile and at the start, without the bf16 product and the FP8 product without fast accumulation: about half a shape's time; ratio_to_cublaslt reads '-', ratio_to_cublaslt_fp8 keeps its meaning")
	outside := flag.Bool("kernel-outside", false, "time each tile right before and after cuBLASLt's references (tile, references, tile; the row's µs the mean of its two, noted as 'kernel a/b'), instead of the references before and after the tile: a second round in this order times each kernel after the other as often (bench/gemmalone-56.sh's BALANCED=1)")
	bt := flag.Bool("bt", true, "also time cuBLASLt's first four algorithms for B stored [N, K] (rows cublaslt-bt, bf16 and f16; for comparison only)")
	iters := flag.Int("iters", 50, "timed calls")
	warmup := flag.Int("warmup", 10, "warm-up calls")
	dtype := flag.String("dtype", "bf16", "bf16, f16, e4m3 (FP8 operands, tensor scales, bf16 output) or e4m3_row (row scales)")
	extra := flag.String("extra", "", "space-separated extra NVRTC options for the kernel (its diagnostic macros), e.g. -DCLUSTER_NOMCAST=1")
	beside := flag.Int("beside", 0, "MiB a copy engine copies within this GPU beside every timed call (cuBLASLt's and the tiles' alike), started with it: the L2 and HBM traffic of a peer's pushes beside a fused GEMM")
	peer := flag.Bool("peer", false, "with -beside: the bytes cross NVLink, pushed to GPU 1 by this GPU's copy engine while GPU 1's pushes as many into this GPU")
	rsworld := flag.Int("rsworld", 1, "with -rs: time rank 0's part of a call of this many ranks (its tile order and chunk table), all rows still stored on this GPU")
	rschunks := flag.Int("rschunks", 1, "with -rs: chunks per rank")
	survey := flag.Duration("survey-sustain", 0, "with -sustain: time cuBLASLt's algorithms for the pick of the reference in windows this long instead (their rows' µs are then these windows'; the pick is still timed in -sustain's windows around each tile, the ratio's); 0: -sustain's")
	sustained := flag.Duration("sustain", 0, "time each kernel back to back for this long instead (e.g. 3s; the first third untimed), the mean per call: the clock a power-capped GPU holds under sustained load, as README's 1 x H100 table; -iters and -warmup then only apply to the tile checks")
	profile := flag.Int("profile", 0, "after each shape's cuBLASLt timing and each tile's, launch cuBLASLt's best algorithm and the tile (and with -rs its two reduce-scatter rows) this many more times between cuProfilerStart and cuProfilerStop (a '# profiled' line each): under Nsight Compute's --profile-from-start off only these launches are profiled (bench/ncu-gemm.sh); 0: none")
	launch := flag.String("launch", "pdl", `how each tile is launched, one row per mode, comma-separated (repeat them for interleaved rounds): "pdl", as the programmatic dependent of the kernel before it, the default launch (impl "fused"; its check refills A by a kernel right before it), or "plain" (impl "fused-plain")`)
	fillBefore := flag.Int("fill-before", 0, "KiB a fill kernel writes before every timed call, cuBLASLt's and the tiles' alike: each product then follows another kernel, as in a model, instead of itself; 0: none")
	rs := flag.Bool("rs", false, "also time each tile with a one-rank matmul + reduce-scatter's epilogue (rows into the rank's slot, a chunk flag per tile, as matmulrs impl=fused with reduce=kernel at world 1), twice: rows \"rs\" stored by TMA (as rows bound for this GPU's memory go), rows \"rs-regs\" by each warp's own stores (as rows bound for a peer's go): the epilogue's own cost, in the same process")
	flag.Parse()
	if *list {
		shs, err := shapesOf(*set, *shapes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gemmalone:", err)
			os.Exit(2)
		}
		lines := make([]string, len(shs))
		for i, sh := range shs {
			lines[i] = sh.String()
		}
		if *defaultsOn != "" {
			d, err := parseDevice(*defaultsOn)
			if err == nil {
				lines, err = untunedLines(shs, *dtype, d)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "gemmalone:", err)
				os.Exit(2)
			}
		}
		fmt.Println(strings.Join(lines, "\n"))
		return
	}
	if *defaultsOn != "" {
		fmt.Fprintln(os.Stderr, "gemmalone: -defaults-on goes with -list")
		os.Exit(2)
	}
	shapesSet := false
	flag.Visit(func(f *flag.Flag) { shapesSet = shapesSet || f.Name == "shapes" })
	if *set != "" && shapesSet {
		fmt.Fprintln(os.Stderr, "gemmalone: -set and -shapes exclude each other")
		os.Exit(2)
	}
	withBT = *bt
	fp8RefOnly = *refOnly
	kernelOutside = *outside
	extraOpts = strings.Fields(*extra)
	withRS = *rs
	besideMiB, besidePeer = *beside, *peer
	sustain = *sustained
	if sustain < 0 || (sustain > 0 && besideMiB > 0) {
		fmt.Fprintln(os.Stderr, "gemmalone: -sustain must be positive, and goes without -beside")
		os.Exit(2)
	}
	if surveySustain = *survey; surveySustain < 0 || (surveySustain > 0 && sustain == 0) {
		fmt.Fprintln(os.Stderr, "gemmalone: -survey-sustain must be positive, and goes with -sustain")
		os.Exit(2)
	}
	rsWorld, rsChunks = *rsworld, *rschunks
	var err error
	if launchModes, err = parseLaunch(*launch); err != nil {
		fmt.Fprintln(os.Stderr, "gemmalone:", err)
		os.Exit(2)
	}
	if fillKiB = *fillBefore; fillKiB < 0 || (fillKiB > 0 && besideMiB > 0) {
		fmt.Fprintln(os.Stderr, "gemmalone: -fill-before must be 0 or more, and goes without -beside")
		os.Exit(2)
	}
	profileN = *profile
	if profileN < 0 || (profileN > 0 && besideMiB > 0) {
		fmt.Fprintln(os.Stderr, "gemmalone: -profile must be 0 or more, and goes without -beside")
		os.Exit(2)
	}
	if rsWorld < 1 || rsChunks < 1 {
		fmt.Fprintln(os.Stderr, "gemmalone: -rsworld and -rschunks must be at least 1")
		os.Exit(2)
	}
	if err := run(*set, *shapes, *tiles, *dtype, *iters, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "gemmalone:", err)
		os.Exit(1)
	}
}

// extraOpts are -extra's options, for every tile compiled.
var extraOpts []string

// withBT is -bt: cuBLASLt's [N, K] algorithms timed too (ltRows).
var withBT bool

// fp8RefOnly is -fp8-ref-only: an FP8 run's one reference is cuBLASLt's
// FP8 product.
var fp8RefOnly bool

// kernelOutside is -kernel-outside: bracketed times the tile around the
// references instead of the references around the tile (bracketSteps).
var kernelOutside bool

// withRS is -rs: each tile timed a second time through the reduce-scatter's
// epilogue.
var withRS bool

// besideMiB is -beside: the traffic beside every timed call (timing.go).
var besideMiB int

// besidePeer is -peer: the traffic crosses NVLink to and from GPU 1.
var besidePeer bool

// rsWorld and rsChunks are -rsworld and -rschunks (rs.go).
var rsWorld, rsChunks int

// profileN is -profile: launches of each product in a profiled range.
var profileN int

// bench is one process's GPU state.
type bench struct {
	dtype        string
	format       hopper.Format // the fused kernel's operands
	comp         nvrtc.Compiler
	dev          gpu.Device // the GPU: its SMs for grids, its name for the untuned rule's tile factors
	stream       cu.Stream
	u16          *util // bf16 or f16 (FP8 runs: bf16, for the bf16 reference)
	u8           *util // FP8 runs only: e4m3 inputs
	res, samples cu.DevicePtr
	lt           *cublaslt.Handle
	lt16         cublaslt.DType
	ws           cu.DevicePtr
	traffic      *traffic     // -beside; nil without
	scratch      cu.DevicePtr // -fill-before's buffer
}

// util is gemm_util.cu built for one dtype (gpu.UtilOptions).
type util struct {
	dtype                   string
	fill, fillT, fillScales cu.Function
	check, countBad         cu.Function
}

const seed = 0x5eed

// wsBytes is cuBLASLt's workspace.
const wsBytes = 32 << 20

func args(vals ...uint64) []unsafe.Pointer {
	out := make([]unsafe.Pointer, len(vals))
	for i := range vals {
		out[i] = unsafe.Pointer(&vals[i])
	}
	return out
}

// fp8 reports whether dtype has e4m3 operands.
func fp8(dtype string) bool { return dtype == "e4m3" || dtype == "e4m3_row" }

// formatOf is the fused kernel's format of dtype.
func formatOf(dtype string) hopper.Format {
	switch dtype {
	case "bf16":
		return hopper.Format{Elem: hopper.ElemBF16}
	case "f16":
		return hopper.Format{Elem: hopper.ElemF16}
	}
	return hopper.Format{Elem: hopper.ElemE4M3, RowScales: dtype == "e4m3_row"}
}

func run(set, shapeList, tileList, dtype string, iters, warmup int) error {
	shapes, err := shapesOf(set, shapeList)
	if err != nil {
		return err
	}
	tiles, err := parseTiles(tileList)
	if err != nil {
		return err
	}
	if _, err := gpu.ScaleModeOf(dtype); err != nil {
		return err
	}
	runtime.LockOSThread()
	dev := cu.Device(0)
	// The process exits after the run: the driver frees the context.
	if _, err := dev.MakeContext(cu.SchedAuto); err != nil {
		return fmt.Errorf("context: %w", err)
	}
	attrs, err := dev.Attributes(cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor, cu.MultiprocessorCount)
	if err != nil {
		return err
	}
	name, _ := dev.Name()
	b := &bench{dtype: dtype, format: formatOf(dtype), comp: nvrtc.Compiler{Arch: nvrtc.Arch(attrs[0], attrs[1])},
		dev: gpu.Device{Major: attrs[0], Minor: attrs[1], SMs: attrs[2], Name: name}}
	if err := b.setup(); err != nil {
		return err
	}
	if besideMiB > 0 {
		if b.traffic, err = newTraffic(int64(besideMiB)<<20, besidePeer); err != nil {
			return fmt.Errorf("-beside: %w", err)
		}
	}
	how := fmt.Sprintf("%d timed calls after %d warm-up (median)", iters, warmup)
	if sustain > 0 {
		how = fmt.Sprintf("each kernel %s back to back, the first third untimed (mean per call)", sustain)
		if surveySustain > 0 {
			how = fmt.Sprintf("each kernel %s back to back, the first third untimed (mean per call; cuBLASLt's algorithms picked in %s windows)", sustain, surveySustain)
		}
	}
	fmt.Printf("# %s, %d SMs, %s, %s, extra options %q, beside %d MiB copied (over NVLink both ways: %v), a %d KiB fill before each timed call\n", name, b.dev.SMs, dtype, how, extraOpts, besideMiB, besidePeer, fillKiB)
	if fp8(dtype) {
		fmt.Println("# ratio_to_cublaslt: to cuBLASLt bf16 of the shape; ratio_to_cublaslt_fp8: to cuBLASLt e4m3 with fast accumulation")
	}
	fmt.Println("shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8")
	for _, sh := range shapes {
		if err := b.shape(sh, tiles, iters, warmup); err != nil {
			return fmt.Errorf("%dx%dx%d: %w", sh.m, sh.n, sh.k, err)
		}
	}
	return nil
}

func (b *bench) setup() error {
	var err error
	if b.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return err
	}
	d16 := b.dtype
	if fp8(b.dtype) {
		d16 = "bf16"
		if b.u8, err = b.loadUtil(b.dtype); err != nil {
			return err
		}
	}
	if b.u16, err = b.loadUtil(d16); err != nil {
		return err
	}
	if b.res, err = cu.MemAlloc(8 * 4); err != nil {
		return err
	}
	if b.samples, err = cu.MemAlloc(8 * 4 * 256); err != nil {
		return err
	}
	if b.lt, err = cublaslt.NewHandle(); err != nil {
		return err
	}
	if b.lt16, err = cublaslt.DTypeOf(d16); err != nil {
		return err
	}
	if fillKiB > 0 {
		if b.scratch, err = cu.MemAlloc(int64(max(fillKiB/2, 1)) * 2048); err != nil {
			return err
		}
	}
	b.ws, err = cu.MemAlloc(wsBytes)
	return err
}

// loadUtil builds gemm_util.cu for dtype; the process keeps the module.
func (b *bench) loadUtil(dtype string) (*util, error) {
	opts, err := gpu.UtilOptions(dtype)
	if err != nil {
		return nil, err
	}
	cubin, err := b.comp.Compile(nvrtc.Source{Name: "gemm_util.cu", Text: gpu.UtilSource, Options: opts})
	if err != nil {
		return nil, err
	}
	mod, err := cu.LoadData(string(cubin))
	if err != nil {
		return nil, fmt.Errorf("load gemm_util for %s: %w", dtype, err)
	}
	u := &util{dtype: dtype}
	for _, f := range []struct {
		name string
		dst  *cu.Function
	}{{"fill", &u.fill}, {"fill_t", &u.fillT}, {"fill_scales", &u.fillScales}, {"check_rows", &u.check}, {"count_bad", &u.countBad}} {
		if *f.dst, err = mod.Function(f.name); err != nil {
			return nil, fmt.Errorf("gemm_util %s: %w", f.name, err)
		}
	}
	return u, nil
}

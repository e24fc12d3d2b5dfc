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
// method of the peer script). Output: one CSV row per (shape, config).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
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
	tiles := flag.String("tiles", "sweep", `comma-separated tiles BMxBN[:sS][:cC][:gG][:pp][:bn] (hopper.ParseTile; "bn": B stored [K,N], else K-major [N,K]), or "sweep"`)
	iters := flag.Int("iters", 50, "timed calls")
	warmup := flag.Int("warmup", 10, "warm-up calls")
	dtype := flag.String("dtype", "bf16", "bf16 or f16")
	extra := flag.String("extra", "", "space-separated extra NVRTC options for the kernel (its diagnostic macros), e.g. -DCLUSTER_NOMCAST=1")
	flag.Parse()
	extraOpts = strings.Fields(*extra)
	if err := run(*shapes, *tiles, *dtype, *iters, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "gemmalone:", err)
		os.Exit(1)
	}
}

type shape struct{ m, n, k int }

// extraOpts are -extra's options, for every tile compiled.
var extraOpts []string

func parseShapes(s string) ([]shape, error) {
	var out []shape
	for _, f := range strings.Split(s, ",") {
		var sh shape
		if _, err := fmt.Sscanf(f, "%dx%dx%d", &sh.m, &sh.n, &sh.k); err != nil {
			return nil, fmt.Errorf("shape %q: want MxNxK", f)
		}
		out = append(out, sh)
	}
	return out, nil
}

// sweep is the default list: the leaders of the first sweep on an H200
// (bench/results/2026-11-22-h200-gemmalone-sweep1.csv) without and with
// clusters of two CTAs, and the other tile shapes with clusters.
func sweep() []hopper.Tile {
	var out []hopper.Tile
	for _, name := range []string{
		"128x256:s4:c2:g8", "128x128:s6:c2:g4:pp", "256x128:s4:c2:g8",
		"128x256:s4:c2:g8:cl2", "128x256:s4:c2:g4:cl2", "128x256:s4:c2:g16:cl2", "128x256:s3:c2:g8:cl2",
		"256x128:s4:c2:g8:cl2", "128x192:s5:c2:g8:cl2", "128x128:s6:c2:g8:cl2",
	} {
		t, err := hopper.ParseTile(name)
		if err != nil {
			panic(err)
		}
		out = append(out, t)
	}
	return out
}

func parseTiles(s string) ([]hopper.Tile, error) {
	if s == "sweep" {
		return sweep(), nil
	}
	var out []hopper.Tile
	for _, f := range strings.Split(s, ",") {
		t, err := hopper.ParseTile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// bench is one process's GPU state.
type bench struct {
	bf16            bool
	comp            nvrtc.Compiler
	sms             int
	stream          cu.Stream
	util            cu.Module
	fill, fillT     cu.Function
	check, countBad cu.Function
	res, samples    cu.DevicePtr
	lt              *cublaslt.Handle
	ltType          cublaslt.DType
	ws              cu.DevicePtr
}

const tensorB = 0x10000 // TENSOR_B of gemm_util.cu
const seed = 0x5eed

func args(vals ...uint64) []unsafe.Pointer {
	out := make([]unsafe.Pointer, len(vals))
	for i := range vals {
		out[i] = unsafe.Pointer(&vals[i])
	}
	return out
}

func run(shapeList, tileList, dtype string, iters, warmup int) error {
	shapes, err := parseShapes(shapeList)
	if err != nil {
		return err
	}
	tiles, err := parseTiles(tileList)
	if err != nil {
		return err
	}
	if dtype != "bf16" && dtype != "f16" {
		return fmt.Errorf("dtype %q: bf16 or f16", dtype)
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
	b := &bench{bf16: dtype == "bf16", comp: nvrtc.Compiler{Arch: nvrtc.Arch(attrs[0], attrs[1])}, sms: attrs[2]}
	if err := b.setup(); err != nil {
		return err
	}
	fmt.Printf("# %s, %d SMs, %s, %d timed calls after %d warm-up (median), extra options %q\n", name, b.sms, dtype, iters, warmup, extraOpts)
	fmt.Println("shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt")
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
	bf := "0"
	if b.bf16 {
		bf = "1"
	}
	cubin, err := b.comp.Compile(nvrtc.Source{Name: "gemm_util.cu", Text: gpu.UtilSource, Options: []string{"-DDTYPE_BF16=" + bf}})
	if err != nil {
		return err
	}
	if b.util, err = cu.LoadData(string(cubin)); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		dst  *cu.Function
	}{{"fill", &b.fill}, {"fill_t", &b.fillT}, {"check_rows", &b.check}, {"count_bad", &b.countBad}} {
		if *f.dst, err = b.util.Function(f.name); err != nil {
			return fmt.Errorf("gemm_util %s: %w", f.name, err)
		}
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
	if b.ltType, err = cublaslt.DTypeOf(map[bool]string{true: "bf16", false: "f16"}[b.bf16]); err != nil {
		return err
	}
	b.ws, err = cu.MemAlloc(32 << 20)
	return err
}

type buffers struct {
	a, bKN, bNK, c cu.DevicePtr
}

func (b *bench) shape(sh shape, tiles []hopper.Tile, iters, warmup int) error {
	var buf buffers
	var err error
	for _, p := range []struct {
		dst *cu.DevicePtr
		n   int
	}{{&buf.a, sh.m * sh.k}, {&buf.bKN, sh.k * sh.n}, {&buf.bNK, sh.k * sh.n}, {&buf.c, sh.m * sh.n}} {
		if *p.dst, err = cu.MemAlloc(int64(p.n) * 2); err != nil {
			return err
		}
		defer cu.MemFree(*p.dst)
	}
	grid := func(n int) int { return min(max((n+255)/256, 1), 4096) }
	if err := b.fill.Launch(grid(sh.m*sh.k), 1, 1, 256, 1, 1, 0, b.stream, args(uint64(buf.a), uint64(sh.m), uint64(sh.k), uint64(sh.k), 0, seed, 0)); err != nil {
		return err
	}
	if err := b.fill.Launch(grid(sh.k*sh.n), 1, 1, 256, 1, 1, 0, b.stream, args(uint64(buf.bKN), uint64(sh.k), uint64(sh.n), uint64(sh.n), 0, seed, tensorB)); err != nil {
		return err
	}
	if err := b.fillT.Launch(grid(sh.k*sh.n), 1, 1, 256, 1, 1, 0, b.stream, args(uint64(buf.bNK), uint64(sh.k), uint64(sh.n), uint64(sh.k), seed, tensorB)); err != nil {
		return err
	}
	label := fmt.Sprintf("%dx%dx%d", sh.m, sh.n, sh.k)
	flops := 2 * float64(sh.m) * float64(sh.n) * float64(sh.k)

	// cuBLASLt first: its time is the ratio's denominator, and its check
	// shows the checker itself passes a known-good product.
	plan, err := b.lt.Plan(cublaslt.Matmul{M: sh.m, N: sh.n, K: sh.k, DType: b.ltType, Workspace: 32 << 20})
	if err != nil {
		return err
	}
	defer plan.Close()
	// The reference is the fastest of cuBLASLt's first four algorithms
	// (torch's cuBLAS picks its own; bench/mm_baseline.py times that).
	algo, ltUs := 0, math.Inf(1)
	for a := 0; a < min(4, plan.Algos()); a++ {
		call := func() error { return plan.Run(b.stream, a, buf.a, buf.bKN, buf.c, b.ws) }
		rel, err := b.verify(sh, buf.c, call)
		if err != nil {
			return fmt.Errorf("cublaslt algo %d: %w", a, err)
		}
		us, err := b.time(call, iters, warmup)
		if err != nil {
			return err
		}
		fmt.Printf("%s,cublaslt,algo%d,-,%.2e,%.1f,%.0f,-\n", label, a, rel, us, flops/us/1e6)
		if us < ltUs {
			algo, ltUs = a, us
		}
	}
	ltCall := func() error { return plan.Run(b.stream, algo, buf.a, buf.bKN, buf.c, b.ws) }
	// The pipelines' products read B stored [N, K]: the same first four
	// algorithms of that layout, for comparison only (the ratios stay to
	// the [K, N] reference, as in earlier tables).
	if err := b.ltRows(sh, buf, label, flops, iters, warmup); err != nil {
		return err
	}

	for _, t := range tiles {
		row := func(format string, a ...any) {
			fmt.Printf("%s,fused,%s,"+format+"\n", append([]any{label, t}, a...)...)
		}
		if err := t.CheckShape(sh.n, sh.k); err != nil {
			row("-,-,-,-,skipped: %v", err)
			continue
		}
		g, err := gpu.CompileFusedWith(b.comp, t, hopper.Format16(b.bf16), extraOpts)
		if err != nil {
			row("-,-,-,-,%s", strings.ReplaceAll(firstLine(err.Error()), ",", ";"))
			continue
		}
		spill, _ := g.Spills()
		bmat := buf.bNK
		if !t.BKMajor {
			bmat = buf.bKN
		}
		ops, err := g.Maps(buf.a, bmat, buf.c, sh.m, sh.n, sh.k)
		if err != nil {
			g.Close()
			return err
		}
		call := func() error { return g.Launch(b.stream, ops, buf.c, b.sms, gpu.Comm{}) }
		rel, err := b.verify(sh, buf.c, call)
		if err != nil {
			g.Close()
			return fmt.Errorf("%s: %w", t, err)
		}
		if math.IsInf(rel, 1) || rel > tolerance(b.bf16) {
			row("%d,%.2e,-,-,WRONG", spill, rel)
			g.Close()
			continue
		}
		// cuBLASLt right before and after: clocks drift as the GPU heats.
		before, err := b.time(ltCall, iters, warmup)
		if err != nil {
			return err
		}
		us, err := b.time(call, iters, warmup)
		g.Close()
		if err != nil {
			return err
		}
		after, err := b.time(ltCall, iters, warmup)
		if err != nil {
			return err
		}
		row("%d,%.2e,%.1f,%.0f,%.3f (cublaslt algo%d %.1f/%.1f; grid %d)", spill, rel, us, flops/us/1e6, (before+after)/2/us, algo, before, after, g.Grid(sh.m, sh.n, b.sms))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func tolerance(bf16 bool) float64 {
	if bf16 {
		return 1e-2
	}
	return 4e-3
}

// verify poisons C, runs call once and returns the relative error of 64
// sampled rows (first, last and 62 spread over the rest) against the
// float64 reference, or +Inf when any output is NaN/Inf (unwritten).
func (b *bench) verify(sh shape, c cu.DevicePtr, call func() error) (float64, error) {
	if err := cu.MemsetD16Async(c, 0xFFFF, int64(sh.m*sh.n), b.stream); err != nil {
		return 0, err
	}
	if err := cu.MemsetD32Async(b.res, 0, 8, b.stream); err != nil {
		return 0, err
	}
	if err := call(); err != nil {
		return 0, err
	}
	rows := map[int]bool{0: true, sh.m - 1: true}
	for i := 0; len(rows) < min(64, sh.m); i++ {
		rows[(i*7919+13)%sh.m] = true
	}
	var smp []uint64
	keys := make([]int, 0, len(rows))
	for r := range rows {
		keys = append(keys, r)
	}
	sort.Ints(keys)
	for _, r := range keys {
		smp = append(smp, uint64(r), uint64(r), 0, 1)
	}
	if err := cu.MemcpyHtoD(b.samples, unsafe.Pointer(&smp[0]), int64(8*len(smp))); err != nil {
		return 0, err
	}
	if err := b.check.Launch((sh.n+255)/256, len(keys), 1, 256, 1, 1, 0, b.stream,
		args(uint64(c), uint64(sh.n), uint64(b.samples), uint64(sh.n), uint64(sh.k), seed, uint64(b.res))); err != nil {
		return 0, err
	}
	if err := b.countBad.Launch(min((sh.m*sh.n+255)/256, 4096), 1, 1, 256, 1, 1, 0, b.stream,
		args(uint64(c), uint64(sh.m), uint64(sh.n), uint64(sh.n), uint64(b.res))); err != nil {
		return 0, err
	}
	if err := b.stream.Synchronize(); err != nil {
		return 0, err
	}
	var res [4]float64
	if err := cu.MemcpyDtoH(unsafe.Pointer(&res[0]), b.res, 32); err != nil {
		return 0, err
	}
	if res[2] > 0 || res[3] > 0 || res[1] == 0 {
		return math.Inf(1), nil
	}
	return math.Sqrt(res[0] / res[1]), nil
}

// time is the median of iters calls, each between two CUDA events.
func (b *bench) time(call func() error, iters, warmup int) (float64, error) {
	for i := 0; i < warmup; i++ {
		if err := call(); err != nil {
			return 0, err
		}
	}
	evs := make([]cu.Event, 2*iters)
	for i := range evs {
		var err error
		if evs[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return 0, err
		}
		defer cu.DestroyEvent(&evs[i])
	}
	for i := 0; i < iters; i++ {
		if err := evs[2*i].Record(b.stream); err != nil {
			return 0, err
		}
		if err := call(); err != nil {
			return 0, err
		}
		if err := evs[2*i+1].Record(b.stream); err != nil {
			return 0, err
		}
	}
	if err := b.stream.Synchronize(); err != nil {
		return 0, err
	}
	ts := make([]float64, iters)
	for i := range ts {
		ms, err := evs[2*i].Elapsed(evs[2*i+1])
		if err != nil {
			return 0, err
		}
		ts[i] = float64(ms) * 1000
	}
	sort.Float64s(ts)
	return ts[len(ts)/2], nil
}

// ltRows verifies and times cuBLASLt's first four algorithms for B stored
// [N, K] (rows "cublaslt-bt").
func (b *bench) ltRows(sh shape, buf buffers, label string, flops float64, iters, warmup int) error {
	plan, err := b.lt.Plan(cublaslt.Matmul{M: sh.m, N: sh.n, K: sh.k, DType: b.ltType, BT: true, Workspace: 32 << 20})
	if err != nil {
		return err
	}
	defer plan.Close()
	for a := 0; a < min(4, plan.Algos()); a++ {
		call := func() error { return plan.Run(b.stream, a, buf.a, buf.bNK, buf.c, b.ws) }
		rel, err := b.verify(sh, buf.c, call)
		if err != nil {
			return fmt.Errorf("cublaslt [N, K] algo %d: %w", a, err)
		}
		if math.IsInf(rel, 1) || rel > tolerance(b.bf16) {
			return fmt.Errorf("cublaslt [N, K] algo %d: relative error %.2e over tolerance", a, rel)
		}
		us, err := b.time(call, iters, warmup)
		if err != nil {
			return err
		}
		fmt.Printf("%s,cublaslt-bt,algo%d,-,%.2e,%.1f,%.0f,-\n", label, a, rel, us, flops/us/1e6)
	}
	return nil
}

package gpu

import (
	"testing"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

func problemOf(t *testing.T, m, n, k, world int, dtype string) Problem {
	t.Helper()
	p, err := ParseProblem(space.Problem{Shape: space.Shape{"m": int64(m), "n": int64(n), "k": int64(k)}, Dtype: dtype}, world)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	h100x2 = Device{Major: 9, Minor: 0, SMs: 132, Link: "NVLink x18"}
	a100   = Device{Major: 8, Minor: 0, SMs: 108, Link: "NVLink x12"}
)

// TestDefaultOn: one case per family of hardware and dtype; want lists
// the values DefaultOn must set (nil: FitDefault's config, the pipeline).
func TestDefaultOn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kernel  Variant
		d       Device
		m       int
		world   int
		dtype   string
		want    map[string]space.Value
		wantFit bool // FitDefault's answer
	}{
		{"agmm bf16 on 2 x H100: the cluster tile, pushed by copy engines", VariantAGMM, h100x2, 8192, 2, "bf16",
			map[string]space.Value{ParamImpl: space.Str("fused:128x256:s4:c2:g8:cl2"), ParamDirection: space.Str(DirPush), ParamCopy: space.Str(CopyCE), ParamChunks: space.Int(8)}, false},
		{"agmm f16 on 4 GPUs: the cluster tile, 2 chunks pushed by copy engines", VariantAGMM, h100x2, 8192, 4, "f16",
			map[string]space.Value{ParamImpl: space.Str("fused:128x256:s4:c2:g8:cl2"), ParamCopy: space.Str(CopyCE), ParamDirection: space.Str(DirPush), ParamChunks: space.Int(2)}, false},
		{"matmulrs bf16 on 4 GPUs: the 224-wide tile, reduced in the epilogue", VariantMatmulRS, h100x2, 8192, 4, "bf16",
			map[string]space.Value{ParamImpl: space.Str("fused:128x224:s4:c2:g8"), ParamReduce: space.Str(ReduceEpilogue), ParamChunks: space.Int(2)}, false},
		{"agmm FP8 on 4 GPUs: the two-rank family (never measured there)", VariantAGMM, h100x2, 8192, 4, "e4m3",
			map[string]space.Value{ParamImpl: space.Str("fused:128x256:s4:c2:g4")}, false},
		{"matmulrs bf16: the cluster tile, reduced in the epilogue", VariantMatmulRS, h100x2, 8192, 2, "bf16",
			map[string]space.Value{ParamImpl: space.Str("fused:128x256:s4:c2:g8:cl2"), ParamPush: space.Str(PushCE), ParamReduce: space.Str(ReduceEpilogue), ParamChunks: space.Int(4)}, false},
		{"matmulrs bf16, rows not whole tiles: the reduction kernel", VariantMatmulRS, h100x2, 2 * 4160, 2, "bf16",
			map[string]space.Value{ParamImpl: space.Str("fused:128x256:s4:c2:g4:cl2"), ParamReduce: space.Str(ReduceKernel), ParamReduceBlocks: space.Int(264)}, false},
		{"agmm FP8: the searched g4 tile", VariantAGMM, h100x2, 8192, 2, "e4m3",
			map[string]space.Value{ParamImpl: space.Str("fused:128x256:s4:c2:g4"), ParamDirection: space.Str(DirPush), ParamChunks: space.Int(2)}, false},
		{"matmulrs FP8 on a team of two: push=none", VariantMatmulRS, h100x2, 8192, 2, "e4m3_row",
			map[string]space.Value{ParamImpl: space.Str("fused:128x128:s5:c2:g4:pp"), ParamPush: space.Str(PushNone), ParamReduce: space.Str(ReduceEpilogue)}, false},
		{"matmulrs FP8 on four: the partials pushed by copy engines", VariantMatmulRS, h100x2, 8192, 4, "e4m3",
			map[string]space.Value{ParamImpl: space.Str("fused:128x128:s5:c2:g4:pp"), ParamPush: space.Str(PushCE), ParamReduce: space.Str(ReduceEpilogue)}, false},
		{"fewer rows than chunks: fewer chunks", VariantAGMM, h100x2, 2 * 1, 2, "bf16",
			map[string]space.Value{ParamImpl: space.Str("fused:128x224:s5:c2:g4"), ParamChunks: space.Int(1)}, false},
		{"an A100: the pipeline", VariantAGMM, a100, 8192, 2, "bf16", nil, true},
		{"sm_90 over PCIe: the pipeline", VariantMatmulRS, Device{Major: 9, SMs: 114, Link: "PCIe"}, 8192, 2, "bf16", nil, true},
		{"one rank: nothing to overlap, the pipeline", VariantAGMM, h100x2, 8192, 1, "bf16", nil, true},
		{"GPUs unknown: what callers without hardware got", VariantMatmulRS, Device{}, 8192, 2, "bf16", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, tc.m, 3584, 8192, tc.world, tc.dtype)
			c, err := tc.kernel.DefaultOn(p, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := tc.kernel.ParseConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.kernel.Validate(cfg, p); err != nil {
				t.Errorf("DefaultOn's %s does not run: %v", c, err)
			}
			for name, v := range tc.want {
				if c[name] != v {
					t.Errorf("%s = %v, want %v (config %s)", name, c[name], v, c)
				}
			}
			if fit, _ := tc.kernel.FitDefault(p); tc.wantFit != fit.Equal(c) {
				t.Errorf("config %s; FitDefault's %s: want equal %t", c, fit, tc.wantFit)
			}
		})
	}
}

// The four-rank configs as the trial logs of 4 x H100 write them (the
// searches' winners: bench/results/2026-11-28-h100-untuned-rows.md), so a
// change to fourRankDefaults' values fails TestFourRankRules.
const (
	wantAGMMSmall = "algo=1,batch=1,chunks=1,copy=sm,copy_blocks=8,direction=push,fast_accum=1,graph=1,impl=pipeline,sm_reserve=0,streams=2"
	wantAGMMFour  = "algo=0,batch=0,chunks=2,copy=sm,copy_blocks=4,direction=push,fast_accum=1,graph=1,impl=pipeline,sm_reserve=8,streams=3"
	wantAGMMFused = "algo=0,batch=0,chunks=2,copy=ce,copy_blocks=4,direction=push,fast_accum=1,graph=1,impl=fused:128x256:s4:c2:g8:cl2,sm_reserve=0,streams=1"
	wantRSSmall   = "algo=0,batch=0,chunks=1,fast_accum=1,graph=1,impl=fused:128x256:s4:c2:g8:cl2,push=gemm,reduce=kernel,reduce_blocks=264,sm_reserve=0,streams=1"
	wantRS256     = "algo=0,batch=0,chunks=2,fast_accum=1,graph=1,impl=fused:128x256:s4:c2:g4,push=ce,reduce=epilogue,reduce_blocks=132,sm_reserve=0,streams=1"
	wantRSFour    = "algo=0,batch=0,chunks=2,fast_accum=1,graph=1,impl=fused:128x224:s4:c2:g8,push=ce,reduce=epilogue,reduce_blocks=132,sm_reserve=0,streams=1"
)

// TestFourRankRules: on four or more sm_90 ranks, bf16/f16, each rule of
// fourRankDefaults at the jobs it was measured on (the TP block's and the
// paired searches' shapes, 4 x H100) and at its edges: DefaultOn's whole
// config.
func TestFourRankRules(t *testing.T) {
	for _, tc := range []struct {
		name           string
		kernel         Variant
		m, n, k, world int
		dtype          string
		want           string
	}{
		// agmm
		{"agmm 256 rows (TP block m=1024): the small-rows pipeline", VariantAGMM, 1024, 7168, 8192, 4, "bf16", wantAGMMSmall},
		{"agmm 512 rows, the small rule's edge (unmeasured)", VariantAGMM, 2048, 7168, 8192, 4, "bf16", wantAGMMSmall},
		{"agmm 8 ranks, 64 rows (unmeasured): the small-rows pipeline", VariantAGMM, 512, 7168, 8192, 8, "f16", wantAGMMSmall},
		{"agmm 640 rows, past the small rule (unmeasured)", VariantAGMM, 2560, 7168, 8192, 4, "bf16", wantAGMMFused},
		{"agmm 1024 rows (TP block m=4096)", VariantAGMM, 4096, 7168, 8192, 4, "bf16", wantAGMMFused},
		{"agmm 2048 rows (8192x3584x8192): the cluster tile", VariantAGMM, 8192, 3584, 8192, 4, "bf16", wantAGMMFused},
		{"agmm 4096 rows (TP block m=16384)", VariantAGMM, 16384, 7168, 8192, 4, "bf16", wantAGMMFused},
		{"agmm 2048 rows, n=3580 that no fused tile takes: the SM-copy pipeline", VariantAGMM, 8192, 3580, 8192, 4, "bf16", wantAGMMFour},
		// matmulrs
		{"matmulrs 256 rows (TP block m=1024): push=gemm, one chunk", VariantMatmulRS, 1024, 8192, 7168, 4, "bf16", wantRSSmall},
		{"matmulrs 512 rows, the small rule's edge (unmeasured)", VariantMatmulRS, 2048, 8192, 7168, 4, "bf16", wantRSSmall},
		{"matmulrs 1024 rows (TP block m=4096): the 256-wide g4 tile", VariantMatmulRS, 4096, 8192, 7168, 4, "bf16", wantRS256},
		{"matmulrs 768 rows: no epilogue tile fits, the small-rows config", VariantMatmulRS, 3072, 8192, 7168, 4, "bf16", wantRSSmall},
		{"matmulrs 2048 rows (8192x3584x8192): the 224-wide tile", VariantMatmulRS, 8192, 3584, 8192, 4, "bf16", wantRSFour},
		{"matmulrs 4096 rows (TP block m=16384)", VariantMatmulRS, 16384, 8192, 7168, 4, "f16", wantRSFour},
		{"matmulrs 1536 rows: the g8 tile does not fit, the g4 one does", VariantMatmulRS, 6144, 8192, 7168, 4, "bf16", wantRS256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDefaultOn(t, tc.kernel, problemOf(t, tc.m, tc.n, tc.k, tc.world, tc.dtype), tc.want)
		})
	}
}

// checkDefaultOn checks DefaultOn's whole config on p (on 2 x H100) against
// want, and that it runs there.
func checkDefaultOn(t *testing.T, kernel Variant, p Problem, want string) {
	t.Helper()
	c, err := kernel.DefaultOn(p, h100x2)
	if err != nil {
		t.Fatal(err)
	}
	if c.String() != want {
		t.Errorf("DefaultOn = %s, want %s", c, want)
	}
	cfg, err := kernel.ParseConfig(c)
	if err == nil {
		err = kernel.Validate(cfg, p)
	}
	if err != nil {
		t.Errorf("DefaultOn's %s does not run: %v", c, err)
	}
}

// TestTwoRankRules: on two (and three) sm_90 ranks, bf16/f16, the
// small-rows rule of twoRankDefaults up to 512 rows per rank, the family's
// tiles past it: DefaultOn's whole config.
func TestTwoRankRules(t *testing.T) {
	const (
		wantAGMMTwoSmall = "algo=0,batch=0,chunks=2,copy=ce,copy_blocks=4,direction=push,fast_accum=1,graph=0,impl=fused:128x224:s5:c2:g4,sm_reserve=0,streams=1"
		wantAGMMFamily   = "algo=0,batch=0,chunks=8,copy=ce,copy_blocks=4,direction=push,fast_accum=1,graph=1,impl=fused:128x256:s4:c2:g8:cl2,sm_reserve=0,streams=1"
		wantRSFamily     = "algo=0,batch=0,chunks=4,fast_accum=1,graph=1,impl=fused:128x256:s4:c2:g8:cl2,push=ce,reduce=epilogue,reduce_blocks=132,sm_reserve=0,streams=1"
	)
	for _, tc := range []struct {
		name           string
		kernel         Variant
		m, n, k, world int
		dtype          string
		want           string
	}{
		{"agmm 512 rows (TP block m=1024, measured)", VariantAGMM, 1024, 14336, 8192, 2, "bf16", wantAGMMTwoSmall},
		{"agmm 256 rows", VariantAGMM, 512, 3584, 8192, 2, "f16", wantAGMMTwoSmall},
		{"agmm 3 ranks, 512 rows", VariantAGMM, 1536, 3584, 8192, 3, "bf16", wantAGMMTwoSmall},
		{"agmm 640 rows, past the rule", VariantAGMM, 1280, 14336, 8192, 2, "bf16", wantAGMMFamily},
		{"agmm 4096 rows (8192x3584x8192)", VariantAGMM, 8192, 3584, 8192, 2, "bf16", wantAGMMFamily},
		{"matmulrs 512 rows (TP block m=1024, measured)", VariantMatmulRS, 1024, 8192, 14336, 2, "bf16", wantRS256},
		{"matmulrs 4096 rows (8192x3584x8192)", VariantMatmulRS, 8192, 3584, 8192, 2, "bf16", wantRSFamily},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDefaultOn(t, tc.kernel, problemOf(t, tc.m, tc.n, tc.k, tc.world, tc.dtype), tc.want)
		})
	}
}

// TestFourRankRulesKeepOtherFamilies: FP8 and teams of two past the
// two-rank rule keep what they ran before the rules keyed on rows, at the
// row counts those rules key on (FP8 matmulrs on 256 rows of 4 ranks: no
// epilogue tile fits, the pipeline; bf16 matmulrs on 1,024 rows of 2: the
// cluster tile does not fit the epilogue's swizzle groups, the reduction
// kernel's tile).
func TestFourRankRulesKeepOtherFamilies(t *testing.T) {
	for _, tc := range []struct {
		kernel Variant
		m      int
		world  int
		dtype  string
		impl   string
	}{
		{VariantAGMM, 1024, 4, "e4m3", "fused:128x256:s4:c2:g4"},
		{VariantMatmulRS, 1024, 4, "e4m3_row", ImplPipeline},
		{VariantMatmulRS, 4096, 4, "e4m3", "fused:128x128:s5:c2:g4:pp"},
		{VariantAGMM, 1280, 2, "bf16", "fused:128x256:s4:c2:g8:cl2"},
		{VariantMatmulRS, 2048, 2, "bf16", "fused:128x256:s4:c2:g4:cl2"},
	} {
		p := problemOf(t, tc.m, 3584, 8192, tc.world, tc.dtype)
		c, err := tc.kernel.DefaultOn(p, h100x2)
		if err != nil {
			t.Fatal(err)
		}
		if c[ParamImpl].Str != tc.impl {
			t.Errorf("%s %s m=%d world %d: impl %s, want %s (config %s)", tc.kernel, tc.dtype, tc.m, tc.world, c[ParamImpl].Str, tc.impl, c)
		}
	}
}

// TestDefaultOnAlwaysRuns: on Hopper GPUs, over shapes that rule out one
// candidate or another, DefaultOn answers a config Validate accepts
// wherever FitDefault does.
func TestDefaultOnAlwaysRuns(t *testing.T) {
	for _, v := range []Variant{VariantAGMM, VariantMatmulRS} {
		for _, dtype := range []string{"bf16", "e4m3"} {
			for _, world := range []int{1, 2, 3, 4, 8} {
				for _, m := range []int{world, 64 * world, 1000 * world, 8192} {
					for _, nk := range [][2]int{{3584, 8192}, {1792, 4096}, {96, 160}} {
						p, err := ParseProblem(space.Problem{Shape: space.Shape{"m": int64(m), "n": int64(nk[0]), "k": int64(nk[1])}, Dtype: dtype}, world)
						if err != nil {
							continue // a shape the dtype does not take
						}
						if _, err := v.FitDefault(p); err != nil {
							continue
						}
						c, err := v.DefaultOn(p, h100x2)
						if err != nil {
							t.Errorf("%s %s m=%d n=%d k=%d world %d: %v", v, dtype, m, nk[0], nk[1], world, err)
							continue
						}
						cfg, err := v.ParseConfig(c)
						if err == nil {
							err = v.Validate(cfg, p)
						}
						if err != nil {
							t.Errorf("%s %s m=%d n=%d k=%d world %d: %s: %v", v, dtype, m, nk[0], nk[1], world, c, err)
						}
					}
				}
			}
		}
	}
}

func TestDeviceOf(t *testing.T) {
	for _, tc := range []struct {
		f    hardware.Fingerprint
		want Device
	}{
		{hardware.Fingerprint{Kind: "gpu", Compute: "9.0", SMs: 132, Interconnect: "NVLink x18"}, h100x2},
		{hardware.Fingerprint{Kind: "gpu", Compute: "8.9", SMs: 128}, Device{Major: 8, Minor: 9, SMs: 128}},
		{hardware.Fingerprint{Kind: "gpu", Name: "NVIDIA H100 80GB HBM3", Compute: "9.0", SMs: 132},
			Device{Major: 9, Minor: 0, SMs: 132, Name: "NVIDIA H100 80GB HBM3"}},
		{hardware.Fingerprint{Kind: "gpu", Compute: "sm90"}, Device{}},
		{hardware.CPU(), Device{}},
	} {
		if got := DeviceOf(tc.f); got != tc.want {
			t.Errorf("DeviceOf(%s) = %+v, want %+v", tc.f, got, tc.want)
		}
	}
}

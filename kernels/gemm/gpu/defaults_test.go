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
		{"agmm f16 on 4 GPUs: the pipeline with SM copies", VariantAGMM, h100x2, 8192, 4, "f16",
			map[string]space.Value{ParamImpl: space.Str(ImplPipeline), ParamCopy: space.Str(CopySM), ParamStreams: space.Int(3), ParamSMReserve: space.Int(8), ParamChunks: space.Int(2)}, false},
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
		{"fewer rows than chunks: fewer chunks", VariantAGMM, h100x2, 2 * 4, 2, "bf16",
			map[string]space.Value{ParamChunks: space.Int(4)}, false},
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

// TestFitIsFitDefault: fit applied to Default is FitDefault, which keeps
// its own copy of the rule in the hashed space.go (see fit).
func TestFitIsFitDefault(t *testing.T) {
	for _, v := range []Variant{VariantAGMM, VariantMatmulRS} {
		for _, world := range []int{1, 2, 4} {
			for _, m := range []int{world, 4 * world, 8192} {
				p := problemOf(t, m, 3584, 8192, world, "bf16")
				want, werr := v.FitDefault(p)
				got, gerr := v.fit(v.Default(), p)
				if !want.Equal(got) || (werr == nil) != (gerr == nil) {
					t.Errorf("%s m=%d world %d: fit %s (%v), FitDefault %s (%v)", v, m, world, got, gerr, want, werr)
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
		{hardware.Fingerprint{Kind: "gpu", Compute: "sm90"}, Device{}},
		{hardware.CPU(), Device{}},
	} {
		if got := DeviceOf(tc.f); got != tc.want {
			t.Errorf("DeviceOf(%s) = %+v, want %+v", tc.f, got, tc.want)
		}
	}
}

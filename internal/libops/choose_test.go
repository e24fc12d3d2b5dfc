package libops

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/space"
)

// chooseEntry is a tuned winner on testGPU for a GEMM (shape m, n, k) or
// the all-reduce (shape n).
func chooseEntry(kernel, version, dtype string, shape space.Shape, cfg space.Config) cache.Entry {
	return cache.Entry{
		Key: cache.Key{Kernel: kernel, KernelVersion: version, Backend: "cuda", Hardware: testGPU.ID(), World: 4,
			Dtype: dtype, Shape: shape},
		HardwareInfo: testGPU, Config: cfg, MedianUS: 512.5, Trials: 40, TunedAt: t0,
	}
}

func with(c space.Config, kv ...any) space.Config {
	out := maps.Clone(c)
	for i := 0; i < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case int:
			out[kv[i].(string)] = space.Int(int64(v))
		case string:
			out[kv[i].(string)] = space.Str(v)
		}
	}
	return out
}

// choiceSummary is an answer in a few words: source, the config's
// parameters named, the warnings' keys and messages; or the error.
func choiceSummary(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return "error " + e["kind"].(string) + ": " + e["message"].(string)
	}
	var b strings.Builder
	b.WriteString(m["source"].(string) + " " + jsonText(m["config"]) + " median=" + jsonText(m["median_us"]))
	for _, w := range m["warnings"].([]any) {
		w := w.(map[string]any)
		b.WriteString(" | " + w["key"].(string) + ": " + w["message"].(string))
	}
	return b.String()
}

// TestGemmChoose: the first call's choice in one request, from a cache
// as `symmtune search` writes it: tuned, nearest, another version, a
// config that does not run on the problem, the GPU's default and the
// fused rule, forced configs, and the errors.
func TestGemmChoose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	agmm, rs := gpu.VariantAGMM.Default(), gpu.VariantMatmulRS.Default()
	const fused = "fused:128x256:s4:c2:g8"
	tuned := with(agmm, "chunks", 8, "streams", 2, "direction", "push")
	big := space.Shape{"m": 8192, "n": 3584, "k": 8192}
	if err := cache.PutAll(path, []cache.Entry{
		chooseEntry("agmm", gpu.VariantAGMM.KernelVersion(), "bf16", big, tuned),
		chooseEntry("agmm", gpu.VariantAGMM.KernelVersion(), "e4m3", big, with(agmm, "chunks", 4)),
		chooseEntry("matmulrs", "0ld", "bf16", big, rs),
		chooseEntry("matmulrs", gpu.VariantMatmulRS.KernelVersion(), "f16", big, with(rs, "impl", fused, "push", "gemm")),
	}); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(corrupt, []byte("version = 1\n[[entry]\nkernel = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(kernel string, m int, dtype string, kv ...any) map[string]any {
		r := map[string]any{"kernel": kernel, "m": m, "n": 3584, "k": 8192, "world": 4, "dtype": dtype,
			"cache": path, "hardware": testGPU}
		for i := 0; i < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return r
	}
	shape := "m=8192,n=3584,k=8192"
	how := func(kernel, dtype string) string {
		return "tune it with: symmtune search --backend cuda --kernel " + kernel + " --world 4 --shape " + shape + " --dtype " + dtype
	}
	sm80 := "the fused GEMM needs an sm_90 GPU (wgmma, TMA); this one is sm_80, so symmtune.torch runs the default pipeline config"
	rsFused := with(rs, "impl", fused, "push", "gemm")
	p, err := gpu.ParseProblem(space.Problem{Dtype: "f16", Shape: big}, 4)
	if err != nil {
		t.Fatal(err)
	}
	onH100, err := gpu.VariantAGMM.DefaultOn(p, gpu.Device{Major: 9, SMs: 132})
	fit, _ := gpu.VariantAGMM.FitDefault(p)
	if err != nil || onH100.Equal(fit) {
		t.Fatalf("DefaultOn sm_90: %v, %v; want the sm_90 family's, not FitDefault's %v", onH100, err, fit)
	}
	for _, c := range []struct {
		name string
		req  map[string]any
		want string // a prefix of the summary, or a substring of the bad-input message
		bad  bool
	}{
		{"tuned", q("agmm", 8192, "bf16"), "tuned " + jsonText(tuned) + " median=512.5", false},
		{"nearest", q("agmm", 4096, "bf16"), "nearest " + jsonText(tuned), false},
		{"fp8 winners apart", q("agmm", 8192, "e4m3"), "tuned " + jsonText(with(agmm, "chunks", 4)), false},
		{"no fp8 winner", q("agmm", 8192, "e4m3_row"), "default " + jsonText(agmm) + " median=null | agmm/4/e4m3_row/" + shape +
			": symmtune: no tuned agmm for 4 ranks, e4m3_row, " + shape + " (for these kernel sources, version " +
			gpu.VariantAGMM.KernelVersion() + "); running the default config; " + how("agmm", "e4m3_row"), false},
		{"another version", q("matmulrs", 8192, "bf16"), "default " + jsonText(rs) + " median=null | matmulrs/4/bf16/" + shape + ": symmtune: no tuned matmulrs", false},
		{"nearest does not run", q("agmm", 8, "bf16"), "default " + jsonText(with(agmm, "chunks", 2)) + " median=null | agmm/4/bf16/m=8,n=3584,k=8192: " +
			"symmtune: the agmm config tuned for k=8192,m=8192,n=3584 does not run on m=8,n=3584,k=8192 (chunks 8 exceed the 2 rows", false},
		{"no cache", q("agmm", 8192, "bf16", "cache", filepath.Join(dir, "none.toml")), "default " + jsonText(agmm), false},
		{"sm_90 default", q("agmm", 8192, "f16", "major", 9, "minor", 0, "sms", 132), "default " + jsonText(onH100) + " median=null | agmm/4/f16/", false},
		{"sm_80 default", q("agmm", 8192, "f16", "major", 8, "minor", 0), "default " + jsonText(agmm), false},
		{"fused tuned, sm_90", q("matmulrs", 8192, "f16", "major", 9), "tuned " + jsonText(rsFused), false},
		{"fused tuned, no GPU", q("matmulrs", 8192, "f16"), "tuned " + jsonText(rsFused), false},
		{"fused tuned, sm_80", q("matmulrs", 8192, "f16", "major", 8), "default " + jsonText(rs) + " median=null | fused/matmulrs/" + rsFused.String() +
			": symmtune: the tuned matmulrs config for 4 ranks, f16, " + shape + " is impl=" + fused + " (" + rsFused.String() + "); " + sm80, false},
		{"fused nearest, sm_80", q("matmulrs", 4096, "f16", "major", 8), "default " + jsonText(rs) + " median=null | fused/matmulrs/" + rsFused.String() +
			": symmtune: the nearest matmulrs", false},
		{"forced", q("agmm", 8192, "bf16", "config", with(agmm, "chunks", 4)), "forced " + jsonText(with(agmm, "chunks", 4)) + " median=null", false},
		{"forced, not run", q("agmm", 8, "bf16", "config", tuned), "chunks 8 exceed the 2 rows", true},
		{"corrupt cache names file and line", q("agmm", 8192, "bf16", "cache", corrupt), "error corrupt: cache " + corrupt + ": line ", false},
		{"bad problem", q("matmulrs", 8190, "bf16"), "not divisible by world 4", true},
		{"bad dtype", q("agmm", 8192, "f32"), "take bf16 or f16", true},
		{"no dtype", q("agmm", 8192, ""), "dtype: missing", true},
		{"elem", q("agmm", 8192, "bf16", "elem", 1), "elem 1: the dtype says", true},
		{"fp8 alignment", q("agmm", 8192, "e4m3", "k", 8200), "multiples of 16", true},
		{"negative sms", q("agmm", 8192, "bf16", "major", 9, "sms", -1), "sms -1", true},
	} {
		t.Run(c.name, func(t *testing.T) { answers(t, "gemm.choose", c.req, c.want, c.bad, choiceSummary) })
	}
}

// TestGemmChooseLayout: the answer's layout is the problem's (layout.go's
// SymmetricBytes, FP8's included), and B is read [N, K] (b_kn false) by
// every searched config: only a fused tile that is not K-major (none is
// searched) reads it [K, N].
func TestGemmChooseLayout(t *testing.T) {
	agmm := gpu.VariantAGMM.Default()
	for _, c := range []struct {
		kernel, dtype string
		m, n, k       int
		config        space.Config
		bytes         int64
		bkn           bool
	}{
		{"agmm", "bf16", 12, 20, 3, nil, gpu.PayloadOffset + 12*3*2, false},
		{"agmm", "e4m3", 12, 16, 16, nil, gpu.PayloadOffset + 12*16, false},
		{"agmm", "e4m3_row", 64, 16, 48, nil, gpu.PayloadOffset + 64*48 + 64*4, false},
		{"matmulrs", "e4m3", 12, 16, 48, nil, gpu.PayloadOffset + 4*48*2, false},
		{"agmm", "bf16", 8192, 3584, 8192, with(agmm, "impl", "fused:128x256:s4:c2:g8"), 0, false},
	} {
		req := map[string]any{"kernel": c.kernel, "m": c.m, "n": c.n, "k": c.k, "world": 4, "dtype": c.dtype,
			"cache": filepath.Join(t.TempDir(), "none.toml"), "hardware": "any"}
		if c.config != nil {
			req["config"] = c.config
		}
		m, err := call(t, "gemm.choose", req)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if want := c.bytes; want != 0 && int64(m["symmetric_bytes"].(float64)) != want {
			t.Errorf("%s %s m=%d,n=%d,k=%d: symmetric_bytes %v, want %d", c.kernel, c.dtype, c.m, c.n, c.k, m["symmetric_bytes"], want)
		}
		if m["b_kn"] != c.bkn {
			t.Errorf("%v: b_kn %v, want %v", c.config, m["b_kn"], c.bkn)
		}
	}
}

// TestAllreduceChoose: the all-reduce's first call's choice, and n padded.
func TestAllreduceChoose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	v := allreduce.KernelVersion()
	tuned := space.Config{"algorithm": space.Str(allreduce.TwoShotPush), "threads": space.Int(512), "blocks": space.Int(16), "unroll": space.Int(2)}
	ceag := with(tuned, "algorithm", allreduce.TwoShotCEAG)
	if err := cache.PutAll(path, []cache.Entry{
		chooseEntry("allreduce", v, "bf16", space.Shape{"n": 1 << 20}, tuned),
		chooseEntry("allreduce", v, "f32", space.Shape{"n": 1 << 20}, ceag),
	}); err != nil {
		t.Fatal(err)
	}
	q := func(n int64, dtype string) map[string]any {
		return map[string]any{"n": n, "dtype": dtype, "world": 4, "cache": path, "hardware": testGPU}
	}
	how := "tune it with: symmtune search --backend cuda --kernel allreduce --world 4 --shape n=1048576 --dtype "
	def := func(n int64, elt int) string { return jsonText(allreduce.Default(n, elt, 4)) }
	for _, c := range []struct {
		name string
		req  map[string]any
		want string
		bad  bool
	}{
		{"tuned", q(1<<20, "bf16"), "tuned " + jsonText(tuned) + " median=512.5", false},
		{"nearest", q(1000, "bf16"), "nearest " + jsonText(tuned), false},
		{"untuned", q(1<<20, "f16"), "default " + def(1<<20, 2) + " median=null | allreduce/4/f16/n=1048576: symmtune: no tuned all-reduce for 4 ranks, f16, n=1048576 (for these kernel sources, version " + v + "); running the default config; " + how + "f16", false},
		{"not run", q(1<<20, "f32"), "default " + def(1<<20, 4) + " median=null | allreduce/4/f32/n=1048576: symmtune: the tuned all-reduce for 4 ranks, f32, n=1048576 is algorithm=two_shot_ce_ag, which symmtune.torch does not run here (" +
			arNotRun[allreduce.TwoShotCEAG] + "); running the default config; to get a config it runs, " + how + "f32 --where algorithm=<another>", false},
		{"bad dtype", q(8, "e4m3"), `dtype "e4m3"`, true},
		{"no elements", q(0, "bf16"), "n=0", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := answers(t, "allreduce.choose", c.req, c.want, c.bad, choiceSummary)
			if m == nil {
				return
			}
			if want := allreduce.Padded(c.req["n"].(int64), arElt[c.req["dtype"].(string)], 4); int64(m["padded"].(float64)) != want {
				t.Errorf("padded %v, want %d", m["padded"], want)
			}
		})
	}
}

// TestArRegion: the workspace and symmetric bytes per rank of each
// algorithm's runner, which allreduce.choose answers with its choice.
func TestArRegion(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		algo       string
		n          int64
		elt, world int
		bytes      int64
		kind, bad  string
	}{
		// [input | scratch | output] of n padded.
		{"two_shot_push", 1024, 2, 3, 3 * 1032 * 2, "staging", ""},
		{"one_shot", 8192, 2, 2, 3 * 8192 * 2, "staging", ""},
		// The header, then 3 x world slots, each at least 2^19 elements' worth,
		// in a workspace named after the algorithm.
		{"one_shot_lamport", 8192, 2, 2, 256 + 6*mib, "one_shot_lamport", ""},
		{"one_shot_lamport", 3, 4, 8, 256 + 24*2*mib, "one_shot_lamport", ""},
		{"one_shot_lamport", 256 * 8192, 2, 4, 256 + 12*4*mib, "one_shot_lamport", ""}, // the cap: [256, 8192] bf16
		{"one_shot_lamport", 256*8192 + 1, 2, 2, 0, "", "takes messages up to 4194304 bytes"},
		{"one_shot_lamport", 8, 8, 2, 0, "", "elt 8"},
		// The header, then 3 x 2 x world slots of a 1/world chunk of at
		// least 2^19 elements: 6x the message at any world size.
		{"two_shot_lamport", 8192, 2, 2, 256 + 6*mib, "two_shot_lamport", ""},         // chunks of 512 KiB
		{"two_shot_lamport", 64 * 8192, 2, 4, 256 + 6*mib, "two_shot_lamport", ""},    // [64, 8192] bf16: the floor, chunks of 256 KiB
		{"two_shot_lamport", 3, 4, 8, 256 + 12*mib, "two_shot_lamport", ""},           // 2 MiB of f32, chunks of 256 KiB
		{"two_shot_lamport", 512 * 8192, 2, 2, 256 + 48*mib, "two_shot_lamport", ""},  // past one_shot_lamport's cap
		{"two_shot_lamport", 1024 * 8192, 2, 4, 256 + 96*mib, "two_shot_lamport", ""}, // the cap: 16 MiB
		{"two_shot_lamport", 1024*8192 + 1, 2, 2, 0, "", "two_shot_lamport takes messages up to 16777216 bytes"},
		{"two_shot_lamport", 8, 1, 2, 0, "", "elt 1"},
		{"three_shot", 8, 2, 2, 0, "", `algorithm "three_shot"`},
	} {
		bytes, kind, err := arRegion(tc.algo, tc.n, tc.elt, tc.world)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%s n=%d elt=%d: error %v, want one saying %q", tc.algo, tc.n, tc.elt, err, tc.bad)
			}
			continue
		}
		if err != nil || bytes != tc.bytes || kind != tc.kind {
			t.Errorf("%s n=%d elt=%d world=%d: %d %q %v, want %d %q", tc.algo, tc.n, tc.elt, tc.world, bytes, kind, err, tc.bytes, tc.kind)
		}
	}
}

// TestAllreduceChooseLamport: the Lamport algorithms' choices answer
// their own workspaces (a Lamport runner never shares another's), tuned,
// forced or past their caps, where the default runs instead.
func TestAllreduceChooseLamport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	two := space.Config{"algorithm": space.Str(allreduce.TwoShotLamport), "threads": space.Int(512), "blocks": space.Int(32), "unroll": space.Int(1)}
	one := with(two, "algorithm", allreduce.OneShotLamport)
	if err := cache.PutAll(path, []cache.Entry{
		chooseEntry("allreduce", allreduce.KernelVersion(), "bf16", space.Shape{"n": 64 * 8192}, two),
		chooseEntry("allreduce", allreduce.KernelVersion(), "f16", space.Shape{"n": 64 * 8192}, one),
	}); err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	q := func(n int64, dtype string, kv ...any) map[string]any {
		r := map[string]any{"n": n, "dtype": dtype, "world": 4, "cache": path, "hardware": testGPU}
		for i := 0; i < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return r
	}
	def := func(n int64) string { return jsonText(allreduce.Default(n, 2, 4)) }
	forced := map[string]any{"algorithm": "two_shot_lamport", "blocks": 8}
	for _, c := range []struct {
		name      string
		req       map[string]any
		want      string
		workspace string
		bytes     int64
	}{
		{"tuned", q(64*8192, "bf16"), "tuned " + jsonText(two), "two_shot_lamport", 256 + 6*mib},
		{"nearest, past one_shot_lamport's cap", q(512*8192, "bf16"), "nearest " + jsonText(two), "two_shot_lamport", 256 + 48*mib},
		{"nearest, past its cap", q(1024*8192+8, "bf16"), "default " + def(1024*8192+8) + " median=null | allreduce/4/bf16/n=8388616: symmtune: the tuned all-reduce for 4 ranks, bf16, n=8388616 is algorithm=two_shot_lamport, which symmtune.torch does not run here (its buffers take messages up to 16777216 bytes, this one is 16777232)", "staging", 0},
		{"one-shot tuned", q(64*8192, "f16"), "tuned " + jsonText(one), "one_shot_lamport", 256 + 12*mib},
		{"forced", q(16*8192, "bf16", "config", forced), "forced " + jsonText(with(allreduce.Default(16*8192, 2, 4), "algorithm", "two_shot_lamport", "blocks", 8)), "two_shot_lamport", 256 + 6*mib},
		{"forced, past its cap", q(1024*8192+8, "bf16", "config", forced), "default " + def(1024*8192+8) + " median=null | allreduce/4/bf16/n=8388616/forced: symmtune: the forced all-reduce config", "staging", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := answers(t, "allreduce.choose", c.req, c.want, false, choiceSummary)
			if m["workspace"] != c.workspace || c.bytes != 0 && int64(m["region_bytes"].(float64)) != c.bytes {
				t.Errorf("workspace %v of %v bytes, want %s of %d", m["workspace"], m["region_bytes"], c.workspace, c.bytes)
			}
		})
	}
}

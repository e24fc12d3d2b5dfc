package libops

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/space"
)

// The first call's choice in one request: symmtune.torch asks once per
// (op, problem, dtype, group) what to run, and gemm.choose and
// allreduce.choose answer everything the call needs before it lays out
// its memory. The config is the cache's for this machine if it was tuned
// for the kernel's current sources and runs here, else the kernel's
// default, with a warning saying how to tune; the layout is the
// workspace the call needs. The caller agrees on the answer with its
// group and opens the runner (symmtune_gemm_open, symmtune_allreduce_open).
//
// A cache or machine that fails answers {"error": {kind, message}} as
// cache.lookup does (no cache file is no tuned config, not an error); a
// problem the rules reject is bad input.

// chooseReq is where a choice looks: the cache (default: the caller's
// environment's) and the machine (null: this one's, as a search records
// it; "any"; or a fingerprint).
type chooseReq struct {
	loadReq
	Hardware json.RawMessage `json:"hardware"`
}

// lookup is the cache's match for the query on the cuda backend: the
// failure to answer (nil and nil when nothing is tuned), or bad input.
func (r chooseReq) lookup(kernel string, world int, dtype string, shape space.Shape, version string) (*cache.Match, map[string]any, error) {
	m, _, _, fail, err := find(lookupReq{loadReq: r.loadReq, Kernel: kernel, World: world, Dtype: dtype,
		Shape: shape, Backend: "cuda", KernelVersion: version, Hardware: r.Hardware})
	switch {
	case err != nil:
		return nil, nil, err
	case fail == nil:
		return &m, nil, nil
	case fail["error"].(map[string]string)["kind"] == "not_found":
		return nil, nil, nil
	}
	return nil, fail, nil
}

// choice is a config to run, where it came from (tuned, nearest,
// other-driver, default), the tuned median (null for the default) and
// the warnings to give, each once per key in the process.
type choice struct {
	Config   space.Config `json:"config"`
	Source   string       `json:"source"`
	MedianUS *float64     `json:"median_us"`
	Warnings []warning    `json:"warnings"`
}

type warning struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}

// tuned is m's config and source.
func tuned(m *cache.Match) choice {
	source := "nearest"
	switch {
	case m.OtherDriver:
		source = "other-driver"
	case m.Exact:
		source = "tuned"
	}
	us := m.Entry.MedianUS
	return choice{Config: maps.Clone(m.Entry.Config), Source: source, MedianUS: &us, Warnings: []warning{}}
}

// defaulted is cfg, the default, after the warning w.
func defaulted(cfg space.Config, w []warning) choice {
	return choice{Config: cfg, Source: "default", Warnings: w}
}

// gemmChoice is gemm.choose's answer: the choice, the symmetric bytes per
// rank the problem's workspace needs, and whether the products read B
// stored [K, N] (a fused tile that is not K-major) instead of [N, K].
type gemmChoice struct {
	choice
	SymmetricBytes int64 `json:"symmetric_bytes"`
	BKN            bool  `json:"b_kn"`
	// M is the rows the choice and layout are for, and MLo the rows below
	// them that it serves too (with bucket: the bucket (m_lo, m] of the
	// asked rows; else the asked rows alone).
	M   int `json:"m"`
	MLo int `json:"m_lo"`
}

type gemmChooseReq struct {
	chooseReq
	problemReq // with a dtype: its element size is the dtype's
	// The GPU, optional: its compute capability and SMs. Untuned, it
	// runs DefaultOn's family (the fused GEMM on sm_90); where it is not
	// sm_90, a chosen fused config gives way to the pipeline default.
	Major *int `json:"major"`
	Minor int  `json:"minor"`
	SMs   int  `json:"sms"`
	// Config, optional, is run instead of a choice (a benchmark measuring
	// given configs): checked on the problem, source "forced".
	Config space.Config `json:"config"`
	// Bucket: choose for the row bucket of m (gpu.BucketRows), to serve
	// every m of it.
	Bucket bool `json:"bucket"`
}

func gemmChoose(r gemmChooseReq) (any, error) {
	switch {
	case r.Dtype == "":
		return nil, bad("dtype: missing (bf16, f16, e4m3 or e4m3_row)")
	case r.Elem != 0:
		return nil, bad("elem %d: the dtype says the element size", r.Elem)
	}
	mlo := r.M - 1
	if r.Bucket && r.M >= 1 && r.World >= 1 {
		mlo, r.M = gpu.BucketRows(r.M, r.World)
	}
	p, err := r.problem()
	if err != nil {
		return nil, err
	}
	v, _ := variant(r.Kernel) // problem() parsed it
	var dev *gpu.Device
	if r.Major != nil {
		if *r.Major < 0 || r.Minor < 0 || r.SMs < 0 {
			return nil, bad("major %d, minor %d, sms %d: want none negative", *r.Major, r.Minor, r.SMs)
		}
		dev = &gpu.Device{Major: *r.Major, Minor: r.Minor, SMs: r.SMs}
	}
	if r.Config != nil {
		cfg, err := runs(v, r.Config, p)
		if err != nil {
			return nil, badErr(err)
		}
		return gemmAnswer(choice{Config: r.Config, Source: "forced", Warnings: []warning{}}, v, cfg, p, mlo), nil
	}
	shape := fmt.Sprintf("m=%d,n=%d,k=%d", r.M, r.N, r.K)
	how := fmt.Sprintf("tune it with: symmtune search --backend cuda --kernel %s --world %d --shape %s --dtype %s", r.Kernel, r.World, shape, r.Dtype)
	key := fmt.Sprintf("%s/%d/%s/%s", r.Kernel, r.World, r.Dtype, shape)
	fallback := func(w warning) (choice, error) {
		var c space.Config
		var err error
		if dev != nil {
			c, err = v.DefaultOn(p, *dev)
		} else {
			c, err = v.FitDefault(p)
		}
		return defaulted(c, []warning{w}), badErr(err)
	}
	version := v.KernelVersion()
	m, fail, err := r.lookup(r.Kernel, r.World, r.Dtype, space.Shape{"m": int64(r.M), "n": int64(r.N), "k": int64(r.K)}, version)
	if err != nil || fail != nil {
		return fail, err
	}
	var c choice
	if m == nil {
		c, err = fallback(warning{key, fmt.Sprintf("symmtune: no tuned %s for %d ranks, %s, %s (for these kernel sources, version %s); running the default config; %s",
			r.Kernel, r.World, r.Dtype, shape, version, how)})
	} else if _, why := runs(v, m.Entry.Config, p); why != nil {
		c, err = fallback(warning{key, fmt.Sprintf("symmtune: the %s config tuned for %s does not run on %s (%s); running the default config; %s",
			r.Kernel, m.Entry.Shape, shape, oneLine(why.Error()), how)})
	} else {
		c = tuned(m)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := v.ParseConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("the %s config %s: %w", c.Source, c.Config, err) // checked or a default: cannot happen
	}
	if cfg.Impl == gpu.ImplFused && dev != nil && dev.Major != 9 {
		named := c.Config.String()
		c.Warnings = append(c.Warnings, warning{"fused/" + r.Kernel + "/" + named,
			fmt.Sprintf("symmtune: the %s %s config for %d ranks, %s, %s is impl=%s (%s); the fused GEMM needs an sm_90 GPU (wgmma, TMA); this one is sm_%d%d, so symmtune.torch runs the default pipeline config",
				c.Source, r.Kernel, r.World, r.Dtype, shape, c.Config[gpu.ParamImpl], named, dev.Major, dev.Minor)})
		def, err := v.FitDefault(p) // without the GPU: the pipeline default
		if err != nil {
			return nil, badErr(err)
		}
		c = defaulted(def, c.Warnings)
		if cfg, err = v.ParseConfig(def); err != nil {
			return nil, fmt.Errorf("the default config %s: %w", def, err) // cannot happen
		}
	}
	return gemmAnswer(c, v, cfg, p, mlo), nil
}

// gemmAnswer is c, whose config parsed is cfg, with p's layout.
func gemmAnswer(c choice, v gpu.Variant, cfg gpu.Config, p gpu.Problem, mlo int) gemmChoice {
	return gemmChoice{choice: c, SymmetricBytes: v.SymmetricBytes(p),
		BKN: !p.Dtype.FP8() && cfg.Impl == gpu.ImplFused && !cfg.Tile.BKMajor, M: p.M, MLo: mlo}
}

// runs is c parsed, or why it cannot run on p (ParseConfig's or
// Validate's reason).
func runs(v gpu.Variant, c space.Config, p gpu.Problem) (gpu.Config, error) {
	cfg, err := v.ParseConfig(c)
	if err == nil {
		err = v.Validate(cfg, p)
	}
	return cfg, err
}

// arNotRun are the plugin's all-reduce algorithms symmtune.torch does not
// run, with the reason: a tuned entry naming one gives way to the default.
var arNotRun = map[string]string{
	allreduce.TwoShotCEAG: "its host-side copy-engine pipeline (kernels/allreduce/stages.go) is not ported",
}

// arWhyNotRun says why symmtune.torch cannot run config c on n elements
// of elt bytes ("" where it can): an algorithm of arNotRun, or a Lamport
// algorithm past its buffers' cap (a tuned entry of the nearest size may
// name it).
func arWhyNotRun(c space.Config, n int64, elt int) string {
	algo := c["algorithm"].Str
	if why := arNotRun[algo]; why != "" {
		return why
	}
	if m := allreduce.LamportMaxBytes(algo); allreduce.IsLamport(algo) && n*int64(elt) > m {
		return fmt.Sprintf("its buffers take messages up to %d bytes, this one is %d", m, n*int64(elt))
	}
	return ""
}

// arChoice is allreduce.choose's answer: the choice, n padded as the
// kernels run it (allreduce.Padded), and the workspace its runner takes
// ("staging", or a Lamport algorithm's own, named after it) with the
// symmetric bytes per rank it needs there (arRegion).
type arChoice struct {
	choice
	Padded      int64  `json:"padded"`
	Workspace   string `json:"workspace"`
	RegionBytes int64  `json:"region_bytes"`
}

// arAnswer is c with its workspace, for n elements of elt bytes.
func arAnswer(c choice, n int64, elt, world int) (any, error) {
	bytes, kind, err := arRegion(c.Config["algorithm"].Str, n, elt, world)
	if err != nil {
		return nil, err
	}
	return arChoice{choice: c, Padded: allreduce.Padded(n, elt, world), Workspace: kind, RegionBytes: bytes}, nil
}

type arChooseReq struct {
	chooseReq
	N     int64  `json:"n"`
	Dtype string `json:"dtype"`
	World int    `json:"world"`
	// Config, where given, is laid over the default and runs instead of
	// the cache's (benchmarks' forced configs), source "forced"; where it
	// cannot run, the default does, with a warning.
	Config space.Config `json:"config"`
}

var arElt = map[string]int{"bf16": 2, "f16": 2, "f32": 4}

func arChoose(r arChooseReq) (any, error) {
	elt, ok := arElt[r.Dtype]
	if !ok {
		return nil, bad("dtype %q: the CUDA all-reduce supports bf16, f16 and f32", r.Dtype)
	}
	if err := (arReq{N: r.N, Elt: elt, World: r.World}).check(); err != nil {
		return nil, err
	}
	key := fmt.Sprintf("allreduce/%d/%s/n=%d", r.World, r.Dtype, r.N)
	def := allreduce.Default(r.N, elt, r.World)
	if r.Config != nil {
		c := allreduce.Default(r.N, elt, r.World)
		for name, v := range r.Config {
			c[name] = v
		}
		if err := checkArConfig(c); err != nil {
			return nil, err
		}
		if why := arWhyNotRun(c, r.N, elt); why != "" {
			return arAnswer(defaulted(def, []warning{{key + "/forced", fmt.Sprintf("symmtune: the forced all-reduce config %s does not run for n=%d (%s); running the default config", c, r.N, why)}}), r.N, elt, r.World)
		}
		return arAnswer(choice{Config: c, Source: "forced", Warnings: []warning{}}, r.N, elt, r.World)
	}
	version := allreduce.KernelVersion()
	m, fail, err := r.lookup("allreduce", r.World, r.Dtype, space.Shape{"n": r.N}, version)
	if err != nil || fail != nil {
		return fail, err
	}
	how := fmt.Sprintf("tune it with: symmtune search --backend cuda --kernel allreduce --world %d --shape n=%d --dtype %s", r.World, r.N, r.Dtype)
	var c choice
	if m == nil {
		c = defaulted(def, []warning{{key, fmt.Sprintf("symmtune: no tuned all-reduce for %d ranks, %s, n=%d (for these kernel sources, version %s); running the default config; %s",
			r.World, r.Dtype, r.N, version, how)}})
	} else if why := arWhyNotRun(m.Entry.Config, r.N, elt); why != "" {
		c = defaulted(def, []warning{{key, fmt.Sprintf("symmtune: the tuned all-reduce for %d ranks, %s, n=%d is algorithm=%s, which symmtune.torch does not run here (%s); running the default config; to get a config it runs, %s --where algorithm=<another>",
			r.World, r.Dtype, r.N, m.Entry.Config["algorithm"].Str, why, how)}})
	} else {
		c = tuned(m)
	}
	return arAnswer(c, r.N, elt, r.World)
}

func chooseOps() map[string]op {
	return map[string]op{
		"gemm.choose": handler("the config a first GEMM call runs, {kernel, m, n, k, world, dtype, cache, env, hardware, major?, minor, sms, bucket?}: {config, source, median_us, warnings: [{key, message}], symmetric_bytes, b_kn, m, m_lo} or {error}; bucket: for m's row bucket (m_lo, m]",
			gemmChoose),
		"allreduce.choose": handler("the config a first all-reduce call runs, {n, dtype, world, cache, env, hardware}: {config, source, median_us, warnings: [{key, message}], padded, workspace, region_bytes} or {error}",
			arChoose),
	}
}

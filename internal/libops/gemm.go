package libops

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/space"
)

func gemmOps() map[string]op {
	return map[string]op{
		"gemm.space": handler("kernel's search space: [{name, values}] in order, and the parameters added later with the value configs without them ran with",
			func(r struct {
				Kernel string `json:"kernel"`
			}) (any, error) {
				v, err := variant(r.Kernel)
				if err != nil {
					return nil, err
				}
				type param struct {
					Name   string        `json:"name"`
					Values []space.Value `json:"values"`
				}
				var out []param
				for _, p := range v.Space().Params {
					out = append(out, param{p.Name, p.Values})
				}
				added := map[string]space.Value{}
				for _, p := range v.Space().Params {
					// A parameter ParseConfig fills in is one added later.
					c := v.Default()
					delete(c, p.Name)
					if _, err := v.ParseConfig(c); err == nil {
						added[p.Name] = v.Default()[p.Name]
					}
				}
				return map[string]any{"params": out, "added_later": added}, nil
			}),
		"gemm.check_device": handler("Dtype.CheckDevice of {dtype, major, minor}: {} or why a GPU of that compute capability cannot multiply the dtype",
			func(r struct {
				Dtype string `json:"dtype"`
				Major int    `json:"major"`
				Minor int    `json:"minor"`
			}) (any, error) {
				d, err := gpu.ParseDtype(r.Dtype)
				if err == nil {
					err = d.CheckDevice(r.Major, r.Minor)
				}
				return struct{}{}, badErr(err)
			}),
		"gemm.parse_config": handler("ParseConfig of {kernel, config}: the typed config (tile fields for impl=fused)",
			func(r struct {
				Kernel string                     `json:"kernel"`
				Config map[string]json.RawMessage `json:"config"`
			}) (any, error) {
				v, err := variant(r.Kernel)
				if err != nil {
					return nil, err
				}
				if r.Config == nil {
					return nil, bad("config: missing")
				}
				c, err := parseConfig(v, r.Config)
				if err != nil {
					return nil, err
				}
				return configOf(v, c), nil
			}),
		"gemm.validate": handler("Validate of a typed config {config, problem (dtype: ParseProblem's rules too)}: {} or the reason it cannot run",
			func(r struct {
				Config  configJSON `json:"config"`
				Problem problemReq `json:"problem"`
			}) (any, error) {
				v, c, p, err := configProblem(r.Config, r.Problem)
				if err != nil {
					return nil, err
				}
				return struct{}{}, badErr(v.Validate(c, p))
			}),
		"gemm.shard_in_place": handler("ShardInPlace of {config, problem, rank}: {in_place}",
			func(r struct {
				Config  configJSON `json:"config"`
				Problem problemReq `json:"problem"`
				Rank    int        `json:"rank"`
			}) (any, error) {
				_, c, p, err := configProblem(r.Config, r.Problem)
				if err != nil {
					return nil, err
				}
				if r.Rank < 0 || r.Rank >= p.World {
					return nil, bad("rank %d outside 0..%d", r.Rank, p.World-1)
				}
				if c.Impl == gpu.ImplFused && c.Tile.BM < 1 {
					return nil, bad("tile block_m %d: want a positive size", c.Tile.BM)
				}
				return map[string]bool{"in_place": gpu.ShardInPlace(c, p, r.Rank)}, nil
			}),
		"gemm.default": handler("Default(kernel), or with a problem {m, n, k, world, dtype?} FitDefault, or with the GPUs too {major, minor, sms?, link?} DefaultOn: the config, or why none runs",
			func(r struct {
				Kernel  string      `json:"kernel"`
				Problem *problemReq `json:"problem"`
				// The GPUs, all optional (requests before they existed
				// get FitDefault, as before): compute capability, SMs per
				// GPU, the link as hardware.Fingerprint names it. The team
				// is the problem's world.
				Major *int   `json:"major"`
				Minor int    `json:"minor"`
				SMs   int    `json:"sms"`
				Link  string `json:"link"`
			}) (any, error) {
				v, err := variant(r.Kernel)
				if err != nil {
					return nil, err
				}
				if r.Problem == nil {
					if r.Major != nil {
						return nil, bad("major: the GPUs' default needs a problem")
					}
					return v.Default(), nil
				}
				r.Problem.Kernel = r.Kernel
				_, p, err := r.Problem.value()
				if err != nil {
					return nil, err
				}
				if r.Major == nil {
					c, err := v.FitDefault(p)
					return c, badErr(err)
				}
				if *r.Major < 0 || r.Minor < 0 || r.SMs < 0 {
					return nil, bad("major %d, minor %d, sms %d: want none negative", *r.Major, r.Minor, r.SMs)
				}
				c, err := v.DefaultOn(p, gpu.Device{Major: *r.Major, Minor: r.Minor, SMs: r.SMs, Link: r.Link})
				return c, badErr(err)
			}),
		"gemm.shards": handler("Shards(m, world, chunks): spans[owner][index]",
			func(r planReq) (any, error) {
				r.Streams = 1
				if _, err := r.plan(); err != nil {
					return nil, err
				}
				out := [][]spanJSON{}
				for _, sh := range gpu.Shards(r.M, r.World, r.Chunks) {
					out = append(out, spans(sh))
				}
				return out, nil
			}),
		"gemm.step_spans": handler("Step.Spans(rows) of {step, rows}: the spans a (batched) step computes",
			func(r struct {
				Step stepJSON `json:"step"`
				Rows int      `json:"rows"`
			}) (any, error) {
				if r.Step.Batch < 0 || r.Step.Batch > gpu.MaxWorld {
					return nil, bad("step batch %d outside 0..%d", r.Step.Batch, gpu.MaxWorld)
				}
				s := r.Step
				return spans(gpu.Step{Span: gpu.Span{Owner: s.Owner, Index: s.Index, Start: s.Start, Rows: s.Rows},
					Batch: s.Batch, Stream: s.Stream}.Spans(r.Rows)), nil
			}),
		"gemm.plan": handler("PlanAG (agmm) or PlanRS (matmulrs) of {kernel, m, world, rank, chunks, streams, batch}, and MaxProducts over the ranks",
			func(r planReq) (any, error) {
				v, err := variant(r.Kernel)
				if err != nil {
					return nil, err
				}
				o, err := r.plan()
				if err != nil {
					return nil, err
				}
				most := v.MaxProducts(o)
				if v == gpu.VariantAGMM {
					p := gpu.PlanAG(o)
					pulls := [][]spanJSON{}
					for _, ss := range p.Pulls {
						pulls = append(pulls, spans(ss))
					}
					return map[string]any{"peers": append([]int{}, p.Peers...), "pulls": pulls, "own": spans(p.Own),
						"products": steps(p.Products), "max_products": most}, nil
				}
				p := gpu.PlanRS(o)
				return map[string]any{"products": steps(p.Products), "reduces": spans(p.Reduces), "max_products": most}, nil
			}),
		"gemm.fused_plan": handler("PlanFusedAG and PlanFusedRS of {m, n, world, rank, chunks, block_m, block_n, rows_per_tile, push}",
			func(r fusedReq) (any, error) {
				if err := r.check(r.N != 0 || r.BlockM != 0 || r.BlockN != 0); err != nil {
					return nil, err
				}
				ag := gpu.PlanFusedAG(r.M, r.World, r.Rank, r.Chunks, r.RowsPerTile, r.Push)
				out := map[string]any{"ag": map[string]any{"order": nonNil(ag.Order), "bounds": nonNil(ag.Bounds), "flag": nonNil(ag.Flag)}}
				if r.N != 0 || r.BlockM != 0 || r.BlockN != 0 {
					rs := gpu.PlanFusedRS(r.M, r.N, r.World, r.Rank, r.Chunks, r.BlockM, r.BlockN, r.RowsPerTile)
					out["rs"] = map[string]any{"order": nonNil(rs.Order), "bounds": nonNil(rs.Bounds), "owner": rs.Owner,
						"index": rs.Index, "expect": nonNil(rs.Expect)}
				}
				return out, nil
			}),
		"gemm.rs_table": handler("FusedRS.Table: the RSTable bytes (hex) of a fused_plan's rs, {bounds, owner, index, expect, dst, flag, epilogue}",
			func(r rsTableReq) (any, error) {
				n := len(r.Owner)
				if len(r.Bounds) != n+1 || len(r.Index) != n || len(r.Expect) != n || n > gpu.MaxRSChunks {
					return nil, bad("rs plan: %d bounds, %d owners, %d indices, %d expects: want n+1, n, n, n with n <= %d",
						len(r.Bounds), n, len(r.Index), len(r.Expect), gpu.MaxRSChunks)
				}
				for _, c := range r.Index {
					if c < 0 || c >= gpu.MaxChunks {
						return nil, bad("rs plan: chunk index %d outside 0..%d", c, gpu.MaxChunks-1)
					}
				}
				b, err := gpu.FusedRS{Bounds: r.Bounds, Owner: r.Owner, Index: r.Index, Expect: r.Expect}.Table(r.Dst, r.Flag,
					gpu.RSEpilogue{Me: r.Epilogue.Me, World: r.Epilogue.World, SlotBytes: r.Epilogue.SlotBytes, Flags: r.Epilogue.Flags})
				if err != nil {
					return nil, badErr(err)
				}
				return map[string]string{"hex": fmt.Sprintf("%x", b)}, nil
			}),
		"kernel_version": handler("the kernel version of {kernel}: agmm, matmulrs (gpu.KernelVersion) or allreduce (the CUDA build's)",
			func(r struct {
				Kernel string `json:"kernel"`
			}) (any, error) {
				return kernelVersion(r.Kernel)
			}),
	}
}

// gemmConstants are kernels/gemm/gpu's layout and limits.
func gemmConstants() map[string]any {
	partial := make([][]int, gpu.MaxWorld)
	ready, start := make([]int, gpu.MaxWorld), make([]int, gpu.MaxWorld)
	for q := range partial {
		partial[q] = make([]int, gpu.MaxChunks)
		for c := range partial[q] {
			partial[q][c] = gpu.PartialFlag(q, c)
		}
		ready[q], start[q] = gpu.ReadyFlag(q), gpu.StartFlag(q)
	}
	return map[string]any{
		"kernels": []string{gpu.AGMM, gpu.MatmulRS}, "impl_pipeline": gpu.ImplPipeline, "impl_fused": gpu.ImplFused,
		"max_world": gpu.MaxWorld, "max_chunks": gpu.MaxChunks, "max_streams": gpu.MaxStreams,
		"max_owners": gpu.MaxOwners, "max_rs_chunks": gpu.MaxRSChunks,
		"flag_stride": gpu.FlagStride, "payload_offset": gpu.PayloadOffset,
		"partial_flag": partial, "ready_flag": ready, "start_flag": start,
		"copy_threads": gpu.CopyThreads, "reduce_threads": gpu.ReduceThreads,
		"no_flag": gpu.NoFlag, "rs_table_bytes": gpu.RSTableBytes, "rs_count_offset": gpu.RSCountOffset,
		"rs_count_bytes": gpu.RSCountBytes, "rs_epilogue_offset": gpu.RSEpilogueOffset,
	}
}

// parseConfig is gpu.ParseConfig of a config as JSON ({name: value}).
func parseConfig(v gpu.Variant, raw map[string]json.RawMessage) (gpu.Config, error) {
	cfg := space.Config{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		var val space.Value
		if err := json.Unmarshal(raw[name], &val); err != nil {
			return gpu.Config{}, bad("config: parameter %q: %v", name, err)
		}
		cfg[name] = val
	}
	c, err := v.ParseConfig(cfg)
	return c, badErr(err)
}

package gpu

import (
	"strconv"
	"strings"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

// Device is what the default chooser knows of the GPUs a call runs on.
// Zero fields are unknown. The team's size is the problem's World.
type Device struct {
	Major, Minor int    // compute capability
	SMs          int    // streaming multiprocessors per GPU
	Link         string // interconnect as hardware.Fingerprint names it, e.g. "NVLink x18" or "PCIe"
	// Name is the GPU's name as the driver gives it (cuDeviceGetName,
	// hardware.Fingerprint's Name), e.g. "NVIDIA H100 80GB HBM3": the
	// untuned tile rule's factors are per card (cardTileEfficiency), and
	// an H100 SXM and an H200 have the same capability and SMs.
	Name string
}

// DeviceOf reads the GPUs' fields of a hardware fingerprint (Compute
// "9.0"); a CPU's, or a capability that is not "major.minor", leaves them
// unknown.
func DeviceOf(f hardware.Fingerprint) Device {
	d := Device{SMs: f.SMs, Link: f.Interconnect, Name: f.Name}
	if f.Kind != "gpu" {
		return Device{}
	}
	major, minor, ok := strings.Cut(f.Compute, ".")
	if ok {
		ma, err1 := strconv.Atoi(major)
		mi, err2 := strconv.Atoi(minor)
		if err1 == nil && err2 == nil {
			d.Major, d.Minor = ma, mi
		}
	}
	return d
}

// hopper reports whether the fused GEMM's family is measured best on d:
// it is written for sm_90 (wgmma, TMA), and every measurement of it was
// over NVLink, so a link known to be something else keeps the pipeline.
func (d Device) hopper() bool {
	return d.Major == 9 && d.Minor == 0 && (d.Link == "" || strings.HasPrefix(d.Link, "NVLink"))
}

// familyDefaults are the untuned configs of the fused family on sm_90,
// by kernel and by FP8 or not, most preferred first: Default with these
// values set. DefaultOn takes the first that Validate accepts on the
// problem (with fewer chunks if need be), else FitDefault's pipeline.
//
// Why each, from the measurements:
//   - agmm bf16/f16: the 2-cluster 128x256 tile, copy engines pushing 8
//     chunks, from a CUDA graph. The issue 44 measurement on 2 x H100 at
//     8192x3584x8192 put fused:128x256:s4:c2:g8:cl2 at 1.065x cuBLAS alone;
//     in the exhaustive landscapes this config is 1.025x the optimum on 2 x
//     H100 at 8192 and 1.039x on 2 x H200 at 16384, where the pipeline
//     default is 1.105x and 1.060x
//     (tuner/testdata/landscape-cuda-agmm-w2-m{8192,16384}n3584k8192.jsonl.gz).
//   - matmulrs bf16/f16: the same tile, copy engines pushing 4 chunks,
//     reduced in the epilogue: 1.006x the exhaustive optimum on 2 x H200
//     at 8192 (the pipeline default: 1.057x,
//     tuner/testdata/landscape-cuda-matmulrs-w2-m8192n3584k8192.jsonl.gz);
//     where the epilogue cannot reduce (a rank's rows not whole tiles),
//     the reduction kernel (264 blocks) with the g4 tile, the optimum
//     there.
//   - agmm FP8: the searched 128x256:s4:c2:g4, pushed by copy engines in
//     2 chunks, as docs/fp8.md's searches pinned them (the searched tile
//     beat the pinned :cl2 one for row scales,
//     bench/results/2026-11-26-h200x2-h100x2-rs-smem.md §3).
//   - matmulrs FP8: the 5-stage ping-pong 128x128 tile reducing in the
//     epilogue, the peers' partials read where they lie (push=none, teams
//     of two: the buffer fits beside the stages for one peer only), else
//     pushed by copy engines; 2 chunks. push=none was 1.0-4.4% under
//     push=ce in every cell on 2 x H100 and 2 x H200, and chunks did not
//     matter (bench/results/2026-11-26-h200x2-h100x2-rs-smem.md §2-§4).
//     Group 4: the g8 ping-pong tile was 8-22% slower on H100
//     (docs/fp8.md, "On 2 x H100").
var familyDefaults = map[Variant]map[bool][]map[string]space.Value{
	VariantAGMM: {
		false: {{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g8:cl2"), ParamCopy: space.Str(CopyCE),
			ParamDirection: space.Str(DirPush), ParamChunks: space.Int(8), ParamGraph: space.Int(1)}},
		true: {{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g4"), ParamCopy: space.Str(CopyCE),
			ParamDirection: space.Str(DirPush), ParamChunks: space.Int(2), ParamGraph: space.Int(1)}},
	},
	VariantMatmulRS: {
		false: {
			{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g8:cl2"), ParamPush: space.Str(PushCE),
				ParamReduce: space.Str(ReduceEpilogue), ParamChunks: space.Int(4), ParamGraph: space.Int(1)},
			{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g4:cl2"), ParamPush: space.Str(PushCE),
				ParamReduce: space.Str(ReduceKernel), ParamReduceBlocks: space.Int(264), ParamChunks: space.Int(4), ParamGraph: space.Int(1)},
		},
		true: {
			{ParamImpl: space.Str(ImplFused + ":128x128:s5:c2:g4:pp"), ParamPush: space.Str(PushNone),
				ParamReduce: space.Str(ReduceEpilogue), ParamChunks: space.Int(2), ParamGraph: space.Int(1)},
			{ParamImpl: space.Str(ImplFused + ":128x128:s5:c2:g4:pp"), ParamPush: space.Str(PushCE),
				ParamReduce: space.Str(ReduceEpilogue), ParamChunks: space.Int(2), ParamGraph: space.Int(1)},
		},
	},
}

// fourRankRule is a rule of fourRankDefaults: the untuned configs, most
// preferred first, of problems whose rows per rank (Problem.Rows, M/World)
// are at most MaxRows (0: any).
type fourRankRule struct {
	MaxRows int
	Sets    []map[string]space.Value
}

// The bf16/f16 configs of teams of four or more on sm_90 that
// fourRankDefaults names, with what each scored in the tuner over the
// best first-pass score of a search on 4 x H100 (20 iterations a config;
// "re-measured": 60 iterations in 3 interleaved rounds). Every figure is
// from bench/results/2026-11-28-h100-untuned-rows.md, the table of
// bench/experiments/untuned_rows.py over the trial logs of
// bench/results/2026-11-28-h100x4-bench-gpu/ (tp-block-w4: the TP block's
// jobs, agmm m x 7168 x 8192 and matmulrs m x 8192 x 7168 at m = 1024,
// 4096, 16384; gemm-paired-w4: 8192 and 16384 x 3584 x 8192) and
// bench/results/2026-11-28-h100-search-check/w4/ (8192 x 3584 x 8192, 60 s).
// Tuner scores agree with a torch program's times to about 6%.
var (
	// agmmSmallRows: the pipeline, SM copies of 8 blocks, one chunk, the
	// peers' products batched over 2 streams, cuBLASLt's second algorithm.
	// 256 rows per rank (TP block m=1024): the search's best (1.000; the
	// W=4 default agmmFourRank 1.508, re-measured 1.500; the W=2 fused
	// tile's nearest measured configs, chunks or graph apart, 1.15-1.63).
	// 1,024 rows: 1.191, where agmmFourRank is 1.008.
	agmmSmallRows = map[string]space.Value{ParamImpl: space.Str(ImplPipeline), ParamCopy: space.Str(CopySM),
		ParamCopyBlocks: space.Int(8), ParamDirection: space.Str(DirPush), ParamChunks: space.Int(1),
		ParamStreams: space.Int(2), ParamSMReserve: space.Int(0), ParamAlgo: space.Int(1), ParamBatch: space.Int(1),
		ParamGraph: space.Int(1)}
	// agmmFourRank: the pipeline, SM copies (4 blocks, 8 SMs left to
	// them), 2 chunks over 3 streams: the best first-pass score at 2,048
	// rows (both searches of 8192 x 3584 x 8192: the 30-trial and the
	// 1,668-trial one) and at 4,096 (16384 x 3584 x 8192 and the TP
	// block's m=16384; re-measured 1.017 there); 1.008 at 1,024 rows
	// (TP block m=4096; re-measured 1.075, against the 128x224 s5 g4
	// fused tile, which is 1.280 at 2,048 rows and 1.107 at 4,096). In a
	// torch program at 8192 x 3584 x 8192 it ran at 1.245 and 1.311 of
	// cuBLAS alone where the W=2 fused tile ran at 1.415
	// (bench/results/2026-11-28-h100-search-check.md).
	agmmFourRank = map[string]space.Value{ParamImpl: space.Str(ImplPipeline), ParamCopy: space.Str(CopySM),
		ParamCopyBlocks: space.Int(4), ParamDirection: space.Str(DirPush), ParamChunks: space.Int(2),
		ParamStreams: space.Int(3), ParamSMReserve: space.Int(8), ParamAlgo: space.Int(0), ParamGraph: space.Int(1)}
	// agmmFusedFourRank: the 128x256 cluster tile, copy engines pushing 2
	// chunks from one stream. Every fused measurement at four ranks before
	// 2026-11-28 05:37 UTC (the figures above) ran with the peers' chunks
	// landing in the reverse of the tile order; with that fixed (c466b13),
	// in one call on 4 x H100, paired rounds in a torch program, ratio to
	// cuBLAS alone, two passes: 8192 x 3584 x 8192 1.188 / 1.104 (the
	// pipeline agmmFourRank 1.195 / 1.112, torch's fused op 1.482 /
	// 1.290); 16384 x 3584 x 8192 1.074 / 1.070 (pipeline 1.080 / 1.074,
	// torch 1.211 / 1.200); in the tuner 691.8 µs against the pipeline's
	// 726.0-740.6 (bench/results/2026-11-28-h100x4-agmm-order.md). At
	// 1,024 rows not yet measured with the fix.
	agmmFusedFourRank = map[string]space.Value{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g8:cl2"), ParamCopy: space.Str(CopyCE),
		ParamDirection: space.Str(DirPush), ParamChunks: space.Int(2), ParamGraph: space.Int(1)}
	// rsSmallRows: the 128x256 cluster tile storing peers' rows straight
	// into their owners' slots (push=gemm), one chunk, the reduction
	// kernel on 264 blocks after it. It runs on any rows (no epilogue
	// reduction to fit). 256 rows per rank (TP block m=1024): the
	// search's best (1.000; the default then, the W=2 family's reduction
	// kernel tile, 1.676, re-measured 1.631; the epilogue tiles do not
	// fit 256 rows on 4 ranks). 1,024 rows: 1.081; 4,096 rows (m=16384):
	// 1.033; but 1.160 at 2,048 rows of 8192 x 3584 x 8192.
	rsSmallRows = map[string]space.Value{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g8:cl2"),
		ParamPush: space.Str(PushGEMM), ParamReduce: space.Str(ReduceKernel), ParamReduceBlocks: space.Int(264),
		ParamChunks: space.Int(1), ParamGraph: space.Int(1)}
	// rsTile256: the 128x256 g4 tile reducing in the epilogue, 2 chunks
	// pushed by copy engines. 1,024 rows per rank (TP block m=4096): the
	// best (1.000), where rsFourRank is 1.111 (re-measured 1.202 against
	// it). 4,096 rows (m=16384 of the TP block): 1.000 (re-measured
	// 1.027). At 2,048 rows (8192 x 3584 x 8192): 1.051 in the 60 s
	// search (graph=0: 1.005); 4,096 rows of 16384 x 3584 x 8192: only
	// graph=0 measured, 1.094 (re-measured 1.039).
	rsTile256 = map[string]space.Value{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g4"), ParamPush: space.Str(PushCE),
		ParamReduce: space.Str(ReduceEpilogue), ParamChunks: space.Int(2), ParamGraph: space.Int(1)}
	// rsFourRank: the 128x224 g8 tile reducing in the epilogue, 2 chunks
	// pushed by copy engines: 1.000 and 1.005 at 2,048 rows (the 60 s and
	// the 30-trial searches of 8192 x 3584 x 8192), 1.000 and 1.007 at
	// 4,096 (16384 x 3584 x 8192; the TP block's m=16384, re-measured
	// 1.006); but 1.111 at 1,024 rows (rsTile256's row). In a torch
	// program at 8192 x 3584 x 8192: 1.209 and 1.240 of cuBLAS alone, the
	// W=2 fused tile 1.334.
	rsFourRank = map[string]space.Value{ParamImpl: space.Str(ImplFused + ":128x224:s4:c2:g8"), ParamPush: space.Str(PushCE),
		ParamReduce: space.Str(ReduceEpilogue), ParamChunks: space.Int(2), ParamGraph: space.Int(1)}
)

// fourRankDefaults are the untuned bf16/f16 configs on sm_90 for teams of
// four or more, by rows per rank: DefaultOn tries the Sets of the first
// rule whose MaxRows covers the problem's, then familyDefaults. The fused
// GEMM's advantage at two ranks does not carry over (issue 45), and what
// is best moves with the rows each rank holds (issue 44): per rule, the
// configs above.
//
// Measured on 4 x H100 only, at 256, 1,024, 2,048 and 4,096 rows per rank.
// Unmeasured: fewer than 256 rows; 257-1,023 (the 512 bound is halfway, on
// a log scale, between the 256 rows the small-rows configs won and the
// 1,024 where they lost by 8-19%); 1,025-2,047 (matmulrs' 1,024 bound is
// the largest row count rsTile256 was measured best at); more than 4,096;
// 8 ranks (larger teams take these rules as the closest measured); H200s.
// A config that Validate rejects on the problem (the epilogue tiles need a
// rank's rows in whole tiles and the peers' in whole swizzle groups:
// rsTile256 takes multiples of 512 rows on 4 ranks, rsFourRank of 1,024)
// gives way to the next.
var fourRankDefaults = map[Variant][]fourRankRule{
	VariantAGMM: {
		{MaxRows: 512, Sets: []map[string]space.Value{agmmSmallRows}},
		// The fused tile where it fits the rows, else the pipeline.
		{Sets: []map[string]space.Value{agmmFusedFourRank, agmmFourRank}},
	},
	VariantMatmulRS: {
		{MaxRows: 512, Sets: []map[string]space.Value{rsSmallRows}},
		// Where rsTile256 does not fit, rsSmallRows before the family's
		// reduction-kernel tile: at 1,024 rows 1.081, the family tile's
		// nearest measured config (chunks and reduce_blocks apart) 1.173.
		{MaxRows: 1024, Sets: []map[string]space.Value{rsTile256, rsFourRank, rsSmallRows}},
		{Sets: []map[string]space.Value{rsFourRank, rsTile256}},
	},
}

// agmmTwoRankSmall: the 224-wide 5-stage tile, copy engines pushing 2
// chunks, launched without a graph. On 2 x H200 at 512 rows per rank (the
// TP block's m=1024 x 14336 x 8192, 1,735 trials of a 40 s search,
// 2026-11-28): the best first-pass score (1.000), where the two-rank
// family default (128x256 g8 cl2, 8 chunks, graph) scored 1.353 and, in
// the block untuned, ran it at 1.460x the matmuls alone eagerly and
// 1.425x in a graph, behind NCCL + cuBLAS (1.286, 1.315); the same tile
// with a graph 1.036, chunks 1 or 4 1.003-1.011
// (bench/results/2026-11-28-h200x2-search-check.md).
var agmmTwoRankSmall = map[string]space.Value{ParamImpl: space.Str(ImplFused + ":128x224:s5:c2:g4"), ParamCopy: space.Str(CopyCE),
	ParamDirection: space.Str(DirPush), ParamChunks: space.Int(2), ParamGraph: space.Int(0)}

// twoRankDefaults are the untuned bf16/f16 configs on sm_90 for teams of
// two and three, by rows per rank, before familyDefaults (measured at 2,048
// rows and more: the family's tiles were the best there). At 512 rows per
// rank (2 x H200, the TP block's m=1024, the search above): agmm
// agmmTwoRankSmall; matmulrs rsTile256 (1.010 of the best first pass,
// the 128x256 g4 tile itself with one chunk and no graph; the family's
// reduction-kernel tile 1.283: its epilogue tile does not fit 512 rows).
// Unmeasured: 513-2,047 rows (the bound is the four-rank rule's, where
// small-rows configs stopped winning), H100 (the 2 x H100 TP block logs of
// 2026-11-25 are 40-trial searches that measured neither config).
var twoRankDefaults = map[Variant][]fourRankRule{
	VariantAGMM:     {{MaxRows: 512, Sets: []map[string]space.Value{agmmTwoRankSmall}}},
	VariantMatmulRS: {{MaxRows: 512, Sets: []map[string]space.Value{rsTile256}}},
}

// rowSets are the Sets of the first of v's rules (fourRankDefaults or
// twoRankDefaults) that covers rows rows per rank.
func rowSets(rules map[Variant][]fourRankRule, v Variant, rows int) []map[string]space.Value {
	for _, r := range rules[v] {
		if r.MaxRows == 0 || rows <= r.MaxRows {
			return r.Sets
		}
	}
	return nil
}

// DefaultOn is what an untuned caller of p runs on GPUs d: the family
// measured best on such GPUs (familyDefaults: the fused GEMM on sm_90 over
// NVLink, on teams of two or more; for bf16 and f16 first the rule for p's
// rows per rank of fourRankDefaults on four or more, of twoRankDefaults on
// two or three) where Validate accepts it on p, with
// fewer chunks if need be; else FitDefault, the cuBLASLt pipeline, which
// runs on any GPU. With d unknown (the zero Device) it is FitDefault,
// what callers that pass no hardware got before.
func (v Variant) DefaultOn(p Problem, d Device) (space.Config, error) {
	if d.hopper() && p.World >= 2 {
		sets := familyDefaults[v][p.Dtype.FP8()]
		if !p.Dtype.FP8() {
			rules := twoRankDefaults
			if p.World >= 4 {
				rules = fourRankDefaults
			}
			sets = append(append([]map[string]space.Value{}, rowSets(rules, v, p.Rows())...), sets...)
		}
		for _, set := range sets {
			c := v.Default()
			for name, val := range set {
				c[name] = val
			}
			if fitted, err := v.fit(c, p); err == nil {
				return fitted, nil
			}
		}
	}
	return v.FitDefault(p)
}

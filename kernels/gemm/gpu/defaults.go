package gpu

import (
	"strconv"
	"strings"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

// Device is what the default chooser knows of the GPUs a call runs on.
// Zero fields are unknown. The team's size is the problem's World.
type Device struct {
	Major, Minor int    // compute capability
	SMs          int    // streaming multiprocessors per GPU
	Link         string // interconnect as hardware.Fingerprint names it, e.g. "NVLink x18" or "PCIe"
}

// DeviceOf reads the GPUs' fields of a hardware fingerprint (Compute
// "9.0"); a CPU's, or a capability that is not "major.minor", leaves them
// unknown.
func DeviceOf(f hardware.Fingerprint) Device {
	d := Device{SMs: f.SMs, Link: f.Interconnect}
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

// smallTiles are DefaultTile's bf16 and f16 candidates, largest first
// (a tie goes to the earlier): the tiles that were best at some shape of
// bench/results/2026-12-02-h200-gemmalone-smallm.md (M 64-1024). No
// split-K tile here: a split runs plain products only, which DefaultTile
// cannot tell from a fused kernel's; DefaultTileFor splits its pick
// (splitK) where the caller's kernel and problem may.
var smallTiles = []string{"128x256:s4:c2:g8", "128x224:s5:c2:g4", "128x128:s6:c2:g4:pp",
	"64x256:s5:c2:g8:pp", "64x224:s6:c2:g8:pp", "64x128:s6:c2:g8:pp"}

// rowsEfficiency64 is what a 64-row (ping-pong) tile keeps of a 128-row
// tile's tensor throughput where both are compute-bound: ncu on 1 x H200
// (2026-12-02, bench/results/2026-12-02-h200-ncu.md) at 4096 x 14336 x
// 4096 had 64x128:pp's tensor pipe 79.4% busy against 96.6% for 128x256
// (0.82). Counting waves alone, 64x128's finer quantization (55 waves,
// 99% of the last full) came out 2% under 128x256's (14 waves, 97%), and
// it ran 18% slower (0.82x cuBLASLt). Of the 25 small-M shapes measured
// (M 64-1024), one pick changed with the factor: 1024 x 1280 x 8192 from
// 64x224:pp to 128x128:pp, 2.7% behind it in both rounds measured.
const rowsEfficiency64 = 0.82

// computeBound says whether an m x n x k bf16 product takes longer in
// multiply-adds on sms SMs than in HBM bytes (productBytes), by splitK's
// roofline (smMACsPerByte). Only there does a tile's tensor throughput
// decide (rowsEfficiency64): at 128 x 14336 x 4096, memory-bound,
// 64x224:pp was the best tile and 128x128:pp 3.2% slower (one round,
// 2026-12-02-h200-gemmalone-smallm).
//
// FP8 (fp8 true): one-byte operands, and twice bf16's multiply-adds an SM
// (1,979 against 989 TFLOP/s dense).
func computeBound(m, n, k, sms int, fp8 bool) bool {
	macs := float64(m) * float64(n) * float64(k)
	bytes, rate := productBytes(m, n, k), smMACsPerByte
	if fp8 {
		bytes, rate = fp8ProductBytes(m, n, k), 2*smMACsPerByte
	}
	return macs > bytes*rate*float64(sms)
}

// productBytes is what an m x n x k product moves through HBM at least: A
// and B in bf16 or f16 once each, C in OutElemBytes.
func productBytes(m, n, k int) float64 {
	return 2*(float64(m)+float64(n))*float64(k) + hopper.OutElemBytes*float64(m)*float64(n)
}

// fp8ProductBytes is productBytes with one-byte (e4m3) A and B.
func fp8ProductBytes(m, n, k int) float64 {
	return (float64(m)+float64(n))*float64(k) + hopper.OutElemBytes*float64(m)*float64(n)
}

// fp8SmallRows: below this many rows an FP8 product takes the bf16 rule's
// tile (DefaultTile), from it agmm's FP8 family tile. On 1 x H200
// (2026-12-02, bench/results/2026-12-02-h200-pdl.md) the family tile ran
// at 0.60-0.81x cuBLASLt FP8 at 64-256 rows and 0.98x at 1,024 and 8,192.
const fp8SmallRows = 1024

// clusterRows: from this many rows DefaultTile's 128x256 tile runs in
// clusters of two (:cl2), the best tile sustained at 8192 and 16384 x
// 3584 x 8192 on an H200 (bench/results/2026-11-24-h200-sustained-gemm.md);
// at 512-1024 rows the plain tile was 1-7% faster on 1 x H200 (2026-12-02).
const clusterRows = 4096

// DefaultTile is the fused GEMM's untuned tile for an m x n x k product on
// one sm_90 GPU of sms SMs (fp8: e4m3 operands): the tile issue 56's
// "untuned defaults" bar measures against the best tile of each shape
// (bin/gemmalone -tiles default, bench/gemmalone_table.py).
//
// bf16 and f16: of smallTiles, the one whose waves (output tiles over
// SMs, rounded up) times its area is least: the rows and columns the
// busiest SM computes, a 64-row tile's counted at 1/rowsEfficiency64
// where the product is compute-bound (its lower tensor throughput,
// measured). On 1 x H200
// (2026-12-02, 25 shapes at M 64-1024, one round each) it was within 3%
// of the best of six tiles on all 25, where agmm's family tile
// (128x256:s4:c2:g8:cl2) was on 1 and up to 4x slower; at 4096 x 1792 x
// 4096 it picks 128x224, the tile recorded best there (H100 and H200,
// 2026-11-28). FP8: the same rule below fp8SmallRows rows (its bytes and
// multiply-adds in computeBound), agmm's family tile from there. Whole tiles only, for any kernel at
// any world; DefaultTileFor adds split-K where the caller may run it.
//
// At 128 x 28672 x 8192 the cost ties: 128x224 (128 tiles, one wave) and
// 64x224:pp (256 tiles, two waves) both come to 28,672. The tie stays
// with the larger tile: for the same outputs it loads 1.6x fewer bytes
// of A and B from L2 ((128+224)/(128*224) against (64+224)/(64*224)).
// The measurements do not overrule that: one round each, the 2026-12-02
// runs disagree (smallm: 128x224 best, 64x224 +1.3%; splitk: 64x224 best,
// 128x224 +5.9% by ratio but +2.7% in µs, cuBLASLt around the 64-row
// tile at 124.8 and 137.9 µs, and 128x256 faster than both in µs).
func DefaultTile(m, n, k, sms int, fp8 bool) hopper.Tile {
	family := func() hopper.Tile {
		impl := familyDefaults[VariantAGMM][fp8][0][ParamImpl].Str
		t, err := hopper.ParseTile(strings.TrimPrefix(impl, ImplFused+":"))
		if err != nil {
			panic("gpu: familyDefaults' agmm tile " + impl + ": " + err.Error())
		}
		return t
	}
	if m <= 0 || n <= 0 || sms <= 0 || fp8 && m >= fp8SmallRows {
		return family()
	}
	// The least busiest-SM work of the 128-row tiles, and of the 64-row
	// ones: a 64-row tile is taken only where its cost is below
	// rowsEfficiency64 of the best 128-row tile's.
	var best, best64 hopper.Tile
	bestCost, bestCost64 := int64(-1), int64(-1)
	for _, name := range smallTiles {
		t, err := hopper.ParseTile(name)
		if err != nil {
			panic("gpu: smallTiles' " + name + ": " + err.Error())
		}
		tiles := int64((m+t.BM-1)/t.BM) * int64((n+t.BN-1)/t.BN)
		cost := (tiles + int64(sms) - 1) / int64(sms) * int64(t.BM) * int64(t.BN)
		switch {
		case t.BM >= 128 && (bestCost < 0 || cost < bestCost):
			best, bestCost = t, cost
		case t.BM < 128 && (bestCost64 < 0 || cost < bestCost64):
			best64, bestCost64 = t, cost
		}
	}
	keep := 1.0 // what a 64-row tile keeps of a 128-row one's speed
	if computeBound(m, n, k, sms, fp8) {
		keep = rowsEfficiency64
	}
	if bestCost64 >= 0 && float64(bestCost64) < keep*float64(bestCost) {
		best = best64
	}
	if best.BM == 128 && best.BN == 256 && m >= clusterRows {
		return family()
	}
	return best
}

// DefaultTileFor is the untuned tile of kernel v on p, on one sm_90 GPU
// of sms SMs: DefaultTile's, cut into k-slices (hopper.Tile.SplitK) where
// splitK estimates that faster and v.Validate accepts the split tile on
// p. Validate takes split tiles on plain products only (agmm on one rank,
// at most SplitKMaxRows rows, SplitKMinK of K a slice), so the fused
// kernels at world > 1 and the reduce-scatter get DefaultTile's whole
// tiles.
//
// On 1 x H200 at N = 1280 (10-40 tiles of 64x128 for 132 SMs) it picks
// the split that was best there, in bf16 (2026-12-02-h200-splitk.md) and
// in FP8 with tensor and row scales (2026-12-02-h200-fp8-smallm.md): :sk4
// at 64 and 128 rows, :sk2 at 256. bin/gemmalone -tiles default times it.
// Untuned calls of symmtune.torch do not run it: on one rank DefaultOn
// gives the cuBLASLt pipeline (FitDefault), which the fused GEMM's best
// tile trailed on most small-M bf16 shapes measured (0.90-0.98x, 2026-12-02).
func DefaultTileFor(v Variant, p Problem, sms int) hopper.Tile {
	t := DefaultTile(p.M, p.N, p.K, sms, p.Dtype.FP8())
	return splitK(t, p.M, p.N, p.K, sms, p.Dtype.FP8(), smMACsPerByte, func(s hopper.Tile) bool {
		c := v.Default()
		c[ParamImpl] = space.Str(ImplFused + ":" + s.String())
		c[ParamChunks] = space.Int(1)
		cfg, err := v.ParseConfig(c)
		return err == nil && v.Validate(cfg, p) == nil
	})
}

// smMACsPerByte is the multiply-adds one SM does at dense bf16 peak while
// HBM moves one byte. H100 SXM: 989 TFLOP/s over 132 SMs is 3.75e12 MAC/s
// an SM, over 3.35 TB/s: 1.12. H200 (4.8 TB/s): 0.78. splitK takes the
// H100's figure: with the slower memory more products are memory-bound,
// so it splits fewer. Both give the picks measured best at N = 1280
// (TestDefaultTileFor); they can differ elsewhere (100 x 1288 x 4144:
// :sk2 here, :sk4 at the H200's). FP8 doubles it (computeBound).
const smMACsPerByte = 1.12

// splitK is t (whole tiles), or t in S = 2, 4 or 8 k-slices where the
// estimate below is lower and runs says the caller may run the split.
// fp8: e4m3 operands (one byte, 128-element k-blocks, twice the
// multiply-adds an SM).
//
// The estimate is a roofline in one SM's multiply-adds: the busiest SM's
// (waves of units x the tile's area x a slice's k: waves x area / S), or
// the HBM bytes times macsPerByte, whichever is more. The bytes are A, B
// and C once each, plus a split's fp32 partials, written and read back.
// The partials mostly stay in L2 (a tile's slices run on neighbouring
// CTAs), so counting them as HBM traffic leans against splitting. The
// bytes term keeps products whose whole tiles already stream B at memory
// speed unsplit: at 64 x 8192 x 3584 (64 tiles) :sk2 was 7% slower.
//
// Only splits whose units fit in one wave (tiles x S <= SMs), so only
// tiles that fill at most half the SMs. A slice beyond the SMs adds no
// SM; it cuts the same SMs' work into more units, each with its own
// pipeline fill, partial and fixup, which waves x area does not count.
// On 1 x H200 every split that took a second wave was slower than a
// one-wave split of the same shape (2026-12-02-h200-splitk/).
// A tie goes to fewer slices: fewer partials.
func splitK(t hopper.Tile, m, n, k, sms int, fp8 bool, macsPerByte float64, runs func(hopper.Tile) bool) hopper.Tile {
	if t.KSplits() > 1 || 2*t.Tiles(m, n) > sms {
		return t
	}
	bk, base := hopper.BK, productBytes(m, n, k)
	if fp8 {
		bk, base, macsPerByte = hopper.ElemE4M3.BK(), fp8ProductBytes(m, n, k), 2*macsPerByte
	}
	kblocks := (k + bk - 1) / bk
	cost := func(s hopper.Tile) float64 {
		waves := (s.Units(m, n) + sms - 1) / sms
		slice := (kblocks + s.KSplits() - 1) / s.KSplits() // the longest slice's k-blocks
		busiest := float64(waves) * float64(s.BM*s.BN) * float64(slice*bk)
		parts, _ := s.SplitKBytes(m, n)
		return max(busiest, (base+2*float64(parts))*macsPerByte)
	}
	best, bestCost := t, cost(t)
	for _, slices := range []int{2, 4, 8} {
		s := t
		s.SplitK = slices
		if s.Units(m, n) > sms || !runs(s) {
			continue
		}
		if c := cost(s); c < bestCost {
			best, bestCost = s, c
		}
	}
	return best
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

package gpu

import (
	"fmt"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

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
		// A pipeline of one rank writes its products straight into the
		// output (matmulrs.launch): it pushes nothing and runs no
		// reduction, so push and reduce_blocks would only repeat a
		// measurement (ten pipelines per config in a world-1 search).
		if d := parsedDefault(v); p.World == 1 && c.Impl == ImplPipeline && (c.Push != d.Push || c.ReduceBlocks != d.ReduceBlocks) {
			return fmt.Errorf("push=%s, reduce_blocks %d: a pipeline of one rank pushes nothing and runs no reduction (only push=%s, reduce_blocks=%d is measured)", c.Push, c.ReduceBlocks, d.Push, d.ReduceBlocks)
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
	if err := validateSplitK(v, c.Tile, p); err != nil {
		return err
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
		// A fused matmulrs of one rank is the GEMM alone (FusedPlain):
		// push, reduce, reduce_blocks and sm_reserve would only repeat
		// a measurement.
		if FusedPlain(v, p) && (c.Push != d.Push || c.Reduce != d.Reduce || c.ReduceBlocks != d.ReduceBlocks || c.SMReserve != d.SMReserve) {
			return fmt.Errorf("push=%s, reduce=%s, reduce_blocks %d, sm_reserve %d: a fused matmulrs of one rank is its GEMM alone, which pushes and reduces nothing (only push=%s, reduce=%s, reduce_blocks=%d, sm_reserve=%d is measured)",
				c.Push, c.Reduce, c.ReduceBlocks, c.SMReserve, d.Push, d.Reduce, d.ReduceBlocks, d.SMReserve)
		}
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

// Split-K's bounds in the search space (the kernel takes any shape with a
// k-block per slice: hopper.Tile.CheckShapeFor): products of at most
// SplitKMaxRows rows, where too few output tiles leave SMs idle (issue 56:
// 64x128 tiles fill at most 64 of 132 SMs at 64 x 8192), and at least
// SplitKMinK of K per slice, so that each unit's main loop (8 k-blocks of
// bf16 at the least) is longer than its ring of 3-6 stages, and its
// partial's traffic stays a sixth of its loads or less (a 64x128 tile's
// fp32 partial, 32 KiB, is what 85 of K cost its A and B in bf16). Chosen,
// not measured.
const (
	SplitKMaxRows = 256
	SplitKMinK    = 512
)

// validateSplitK rejects split-K tiles (hopper.Tile.SplitK) on problems
// other than a plain product of few rows, and stream-K tiles
// (hopper.Tile.StreamK) on problems other than a plain product: the kernel
// sums a tile's parts without any communication (no reduce-scatter table:
// its epilogue counts and waits for whole tiles; no all-gather, whose
// chunk waits with shared tiles are not measured), so only a call of one
// rank (FusedPlain) runs them.
func validateSplitK(v Variant, t hopper.Tile, p Problem) error {
	s := t.KSplits()
	switch {
	case t.StreamK && !FusedPlain(v, p):
		return fmt.Errorf("impl=fused with stream-K (tile %s): only plain products (a call of one rank) run stream-K; a reduce-scatter's epilogue and an all-gather's chunk waits work on whole tiles", t)
	case s < 2:
		return nil
	case !FusedPlain(v, p):
		return fmt.Errorf("impl=fused with split-K (tile %s): only plain products (a call of one rank) run split-K; a reduce-scatter's epilogue and an all-gather's chunk waits work on whole tiles", t)
	case p.M > SplitKMaxRows:
		return fmt.Errorf("impl=fused with split-K (tile %s): m=%d fills the SMs with output tiles; split-K is for at most %d rows", t, p.M, SplitKMaxRows)
	case p.K/s < SplitKMinK:
		return fmt.Errorf("impl=fused with split-K (tile %s): k=%d in %d slices leaves %d each, under %d", t, p.K, s, p.K/s, SplitKMinK)
	}
	return nil
}

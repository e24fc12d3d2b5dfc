package allreduce

import "fmt"

// The pipeline of TwoShotCEAG, the CUDA build's pipelined copy-engine
// two-shot: the SMs reduce-scatter the message piece by piece (push
// scatter, per-block barrier, local reduce) while the copy engines
// all-gather the pieces already reduced, so the SMs' stores and the copy
// engines' writes share the links at once. Its pieces are "stages" (one
// flag each).

// pStages is the CUDA all-reduce's pipeline depth: how many pieces
// two_shot_ce_ag splits the message into (1 for every other algorithm).
const pStages = "stages"

// stageValues are the depths the search tries.
var stageValues = []int64{1, 2, 4, 8, 16}

// maxStages bounds stages: the flag words each rank allocates.
const maxStages = 16

// piece is one stage of two_shot_ce_ag in 16-byte vectors: it covers
// vectors [off, off+world*shard) of the message, and rank q reduces (and
// copies to every peer) [off+q*shard, off+(q+1)*shard).
type piece struct{ off, shard int64 }

// stagePlan splits nvec vectors (a multiple of world) into stages pieces
// whose shards differ by at most one vector, exactly as kernels/algos.cu
// (ALGO 6) computes them: piece p's shards start at units*p/stages of
// every rank's units = nvec/world vectors.
func stagePlan(nvec int64, world int, stages int64) []piece {
	units := nvec / int64(world)
	out := make([]piece, stages)
	for p := range stages {
		lo := units * p / stages
		out[p] = piece{off: int64(world) * lo, shard: units*(p+1)/stages - lo}
	}
	return out
}

// checkStages says why stages cannot run (nil if it can) for a config of
// algorithm algo with blocks blocks of tile vectors (threads x unroll) on
// nvec vectors over world ranks: only two_shot_ce_ag pipelines, none of its
// pieces may be empty, and every block needs work in a piece.
func checkStages(algo string, stages, blocks, tile, nvec int64, world int) error {
	if algo != TwoShotCEAG {
		if stages != 1 {
			return fmt.Errorf("%s %d: only %s pipelines (want 1 for %s)", pStages, stages, TwoShotCEAG, algo)
		}
		return nil
	}
	if stages > maxStages {
		return fmt.Errorf("%s %d over the %d flag words", pStages, stages, maxStages)
	}
	units := nvec / int64(world)
	if units < stages {
		return fmt.Errorf("%s %d: only %d vectors per rank, some pieces would be empty", pStages, stages, units)
	}
	if blocks > 1 && (blocks-1)*tile >= units/stages {
		return fmt.Errorf("%d blocks of %d-vector tiles leave blocks with no work in a piece of %d vectors per rank (%s %d)", blocks, tile, units/stages, pStages, stages)
	}
	return nil
}

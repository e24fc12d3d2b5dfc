package libops

import (
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// arReq is n elements of Elt bytes on World ranks.
type arReq struct {
	N     int64 `json:"n"`
	Elt   int   `json:"elt"`
	World int   `json:"world"`
}

func (r arReq) check() error {
	switch {
	case r.N < 1 || r.N > 1<<50:
		return bad("n=%d: want a positive number of elements", r.N)
	case r.Elt != 1 && r.Elt != 2 && r.Elt != 4 && r.Elt != 8:
		return bad("elt %d: want the element size in bytes, 1, 2, 4 or 8", r.Elt)
	case r.World < 1 || r.World > cudamem.MaxWorld:
		return bad("world %d outside 1..%d", r.World, cudamem.MaxWorld)
	}
	return nil
}

func allreduceOps() map[string]op {
	return map[string]op{
		"allreduce.default": handler("the CUDA all-reduce's untuned config for {n, elt, world} (kernels/defaults.json's rules) and n padded as the kernels run it",
			func(r arReq) (any, error) {
				if err := r.check(); err != nil {
					return nil, err
				}
				return map[string]any{"config": allreduce.Default(r.N, r.Elt, r.World),
					"padded": allreduce.Padded(r.N, r.Elt, r.World)}, nil
			}),
		"allreduce.macros": handler("the NVRTC macros of {dtype, world}",
			func(r struct {
				Dtype string `json:"dtype"`
				World int    `json:"world"`
			}) (any, error) {
				switch {
				case r.Dtype != "bf16" && r.Dtype != "f16" && r.Dtype != "f32":
					return nil, bad("dtype %q: the CUDA all-reduce supports bf16, f16 and f32", r.Dtype)
				case r.World < 1 || r.World > cudamem.MaxWorld:
					return nil, bad("world %d outside 1..%d", r.World, cudamem.MaxWorld)
				}
				return allreduce.Macros(r.Dtype, r.World), nil
			}),
	}
}

// kernelVersion is a kernel's version by name.
func kernelVersion(kernel string) (any, error) {
	if v, err := gpu.ParseVariant(kernel); err == nil {
		return map[string]string{"version": v.KernelVersion()}, nil
	}
	if kernel == "allreduce" {
		return map[string]string{"version": allreduce.KernelVersion()}, nil
	}
	return nil, bad("kernel %q: want %q, %q or %q", kernel, gpu.AGMM, gpu.MatmulRS, "allreduce")
}

// allreduceConstants are the all-reduce's data (lamport_max_bytes: each
// Lamport algorithm's cap) and the barrier's layout.
func allreduceConstants() map[string]any {
	algos := map[string]int{}
	for _, a := range allreduce.Algorithms {
		algos[a.Name] = a.Algo
	}
	lamport := map[string]int64{}
	for _, a := range allreduce.Algorithms {
		if allreduce.IsLamport(a.Name) {
			lamport[a.Name] = allreduce.LamportMaxBytes(a.Name)
		}
	}
	return map[string]any{
		"algorithms": algos, "max_world": cudamem.MaxWorld, "pad_slots": cudamem.PadSlots,
		"max_blocks": cudamem.MaxBlocks, "pad_bytes": cudamem.PadBytes, "lamport_max_bytes": lamport,
	}
}

// constants is every family's data.
func constants() map[string]any {
	return map[string]any{"gemm": gemmConstants(), "hopper": hopperConstants(), "allreduce": allreduceConstants()}
}

// lamportFloorElements: symmtune.torch's Lamport workspaces hold at least
// this many elements' buffers (1 MiB of bf16), or the algorithm's cap, so
// that warming up at growing sizes does not grow them (and reopen every
// runner on them) at each.
const lamportFloorElements = 1 << 19

// arRegion is the symmetric bytes per rank that symmtune.torch's
// all-reduce runner of algo needs for n elements of elt bytes on world
// ranks, and its workspace: "staging", [input | scratch | output] of n
// padded; or, for a Lamport algorithm (allreduce.IsLamport), its buffers,
// a workspace of their own named after it (a runner of another algorithm,
// or of the other Lamport algorithm, whose layout differs, would overwrite
// their sentinels), at least lamportFloorElements' worth.
func arRegion(algo string, n int64, elt, world int) (int64, string, error) {
	if allreduce.AlgoNumber(algo) == 0 {
		return 0, "", bad("algorithm %q: not an all-reduce algorithm", algo)
	}
	if !allreduce.IsLamport(algo) {
		return 3 * allreduce.Padded(n, elt, world) * int64(elt), "staging", nil
	}
	maxBytes := allreduce.LamportMaxBytes(algo)
	switch {
	case elt != 2 && elt != 4:
		return 0, "", bad("elt %d: the CUDA all-reduce takes 2- or 4-byte elements", elt)
	case n*int64(elt) > maxBytes:
		return 0, "", bad("%s takes messages up to %d bytes, n=%d of %d bytes is %d", algo, maxBytes, n, elt, n*int64(elt))
	}
	floor := min(lamportFloorElements, maxBytes/int64(elt))
	return allreduce.LamportRegionBytes(algo, max(n, floor), elt, world), algo, nil
}

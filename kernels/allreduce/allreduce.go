// Package allreduce is symmtune's all-reduce (sum) kernel family: the
// kernel on the CPU shared-memory backend (CPU, cpu.go), the CUDA kernel
// (CUDA, the cuda-tagged cuda_*.go), the Runner that enqueues it on a
// caller's stream and tensor (runner_cuda.go: symmtune.torch's launch
// sequence, through libsymmtune) and the CUDA all-reduce's rules that
// need no GPU: its CUDA C (kernels/, embedded here so the plugin,
// libsymmtune and the Python runtime read the same files), the algorithms
// and the ALGO number each compiles as, the NVRTC macros of an element type
// and team, the padding the kernels run on, the untuned default by message
// size (kernels/defaults.json) and the kernel version cache entries carry.
// plugins/allreduce serves CPU, or CUDA when built with -tags cuda, and
// cmd/libsymmtune imports the rules (and the Runner, with -tags cuda); built without the cuda tag, the package
// imports nothing that links CUDA.
package allreduce

import (
	"embed"
	"fmt"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// The algorithms, as configs name them.
const (
	// OneShot: every rank reads all peers and reduces the whole vector.
	OneShot = "one_shot"
	// TwoShot: reduce-scatter through peers' buffers (pull), then all-gather.
	TwoShot = "two_shot"
	// TwoShotPush is a two-shot whose remote traffic is all SM stores:
	// scatter chunks to their owners, reduce locally, push the results.
	TwoShotPush = "two_shot_push"
	// TwoShotCE moves the same bytes as TwoShotPush with the copy engines
	// around a local reduce kernel.
	TwoShotCE = "two_shot_ce"
	// TwoShotOverlap is TwoShotPush with the reduce of each tile waiting
	// only for that tile's scatter instead of the block's whole share.
	TwoShotOverlap = "two_shot_overlap"
	// TwoShotCEAG: SM reduce-scatter and copy-engine all-gather, pipelined
	// by piece (stages.go).
	TwoShotCEAG = "two_shot_ce_ag"
	// OneShotLamport: every rank stores its input into a slot of every
	// rank's Lamport buffer, then sums its own buffer as the slots fill;
	// the data is its own flag, so no barrier at all (lamport.go).
	OneShotLamport = "one_shot_lamport"
	// TwoShotLamport: a reduce-scatter and an all-gather through Lamport
	// buffers, no barrier either: each rank pushes its copy of chunk q to
	// rank q, which reduces it and pushes the sum to every rank (about
	// twice the message over each rank's links, not world-1 times).
	TwoShotLamport = "two_shot_lamport"
)

// Algorithm is an algorithm of the CUDA build and the ALGO macro value
// its CUDA C (Allreduce) compiles it as.
type Algorithm struct {
	Name string
	Algo int
}

// Algorithms are the CUDA build's algorithms in its space's order.
var Algorithms = []Algorithm{{OneShot, 1}, {TwoShot, 2}, {TwoShotPush, 3}, {TwoShotCE, 4}, {TwoShotOverlap, 5}, {TwoShotCEAG, 6}, {OneShotLamport, 7}, {TwoShotLamport, 8}}

// AlgoNumber is name's ALGO macro value, 0 for an unknown name.
func AlgoNumber(name string) int {
	for _, a := range Algorithms {
		if a.Name == name {
			return a.Algo
		}
	}
	return 0
}

//go:embed kernels/common.cuh kernels/allreduce.cu kernels/algos.cu kernels/lamport.cu kernels/util.cu
var kernels embed.FS

func kernelText(name string) string {
	b, err := kernels.ReadFile("kernels/" + name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return string(b)
}

// The kernels' CUDA C: Common is included by both, Allreduce is the
// all-reduce (ALGO selects the algorithm), Util the fill and check kernels.
// Each is compiled after cudamem.DeviceSource (the barrier).
//
// Allreduce is one text of three files, concatenated in this order (not
// #included):
//   - allreduce.cu: the header comment (ALGO values, arguments, barriers),
//     the macros, the tile helpers (push_tile, reduce_tile) and the direct
//     entry's helpers (tensor_of ... copy_out, ALGO 3 and 5);
//   - algos.cu: the entry points of ALGO 1 to 6, one #if ALGO == 1 ...
//     #elif ... #endif chain whose last #elif sends ALGO 7 and 8 on to
//     lamport.cu (and #errors on any other value);
//   - lamport.cu: one_shot_lamport and two_shot_lamport (ALGO 7, 8).
//
// Each file's #if blocks close in that file (TestAllreduceFiles). algos.cu
// is the tail of allreduce.cu as it stood, cut off unchanged, so it starts
// at its chain's #if with no file comment of its own (this is it), and
// allreduce.cu's header still says lamport.cu "follows this file":
// the concatenation is byte for byte the one before the cut, and so is
// KernelVersion (version_test.go), which any edit of the text, comments
// included, changes. The same list is in python/symmtune/kernels.py
// (kernel_sources), python/tests/test_kernels.py and cuda/nvrtc/nvrtc_test.go.
var (
	Common    = kernelText("common.cuh")
	Allreduce = kernelText("allreduce.cu") + kernelText("algos.cu") + kernelText("lamport.cu")
	Util      = kernelText("util.cu")
)

// KernelVersion is the CUDA plugin's Description.KernelVersion:
// sdk.SourceHash of the barrier, common.cuh, Allreduce and util.cu.
func KernelVersion() string {
	return sdk.SourceHash([]byte(cudamem.DeviceSource), []byte(Common), []byte(Allreduce), []byte(Util))
}

// Macros are the element type and team size as the kernels take them.
func Macros(dtype string, world int) []string {
	bf, f16 := 0, 0
	switch dtype {
	case "bf16":
		bf = 1
	case "f16":
		f16 = 1
	}
	return []string{fmt.Sprintf("-DDTYPE_BF16=%d", bf), fmt.Sprintf("-DDTYPE_F16=%d", f16), fmt.Sprintf("-DWORLD=%d", world)}
}

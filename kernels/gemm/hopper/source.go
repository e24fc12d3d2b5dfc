package hopper

import _ "embed"

//go:generate go run ./internal/wgmmagen/cmd wgmma.cuh

var (
	//go:embed wgmma.cuh
	wgmmaHeader string
	//go:embed hopper_ptx.cuh
	ptxHeader string
	//go:embed hopper_tile.cuh
	tileHeader string
	//go:embed hopper_split.cuh
	splitHeader string
	//go:embed hopper_comm.cuh
	commHeader string
	//go:embed hopper_gemm.cu
	kernelSource string
)

// Source is the CUDA C NVRTC compiles (with Tile.Options): the generated
// wgmma wrappers, the PTX wrappers, the compile-time config and what follows
// from it, the split-K and stream-K units, the communication's flags, tables
// and warps, then the kernel (Parts, in this order). Its entry point is Entry.
var Source = wgmmaHeader + ptxHeader + tileHeader + splitHeader + commHeader + kernelSource

// Parts are Source's files in order (python/symmtune/hopper.py reads them).
var Parts = []string{"wgmma.cuh", "hopper_ptx.cuh", "hopper_tile.cuh", "hopper_split.cuh", "hopper_comm.cuh", "hopper_gemm.cu"}

// Entry is the kernel's extern "C" name.
const Entry = "hopper_gemm"

// EpilogueOption builds the variant whose epilogue can sum a
// reduce-scatter's own rows (RS_EPILOGUE in hopper_tile.cuh), an NVRTC
// option beside Tile.Options.
const EpilogueOption = "-DRS_EPILOGUE=1"

package hopper

import _ "embed"

//go:generate go run ./internal/wgmmagen/cmd wgmma.cuh

var (
	//go:embed wgmma.cuh
	wgmmaHeader string
	//go:embed hopper_ptx.cuh
	ptxHeader string
	//go:embed hopper_gemm.cu
	kernelSource string
)

// Source is the CUDA C NVRTC compiles (with Tile.Options): the generated
// wgmma wrappers, the PTX wrappers, then the kernel. Its entry point is
// Entry.
var Source = wgmmaHeader + ptxHeader + kernelSource

// Entry is the kernel's extern "C" name.
const Entry = "hopper_gemm"

// EpilogueOption builds the variant whose epilogue can sum a
// reduce-scatter's own rows (RS_EPILOGUE in hopper_gemm.cu), an NVRTC
// option beside Tile.Options.
const EpilogueOption = "-DRS_EPILOGUE=1"

package gpu

// Values of the cuda-tagged code that GPU-free callers (libsymmtune, and
// through it the Python runtime) need. This file is not among the sources
// KernelVersion hashes, so naming them here leaves cached versions as they
// are; consts_cuda.go holds the tagged code's own names equal to these.
const (
	// MaxStreams is the largest streams value of the space.
	MaxStreams = 3
	// CopyThreads is the block size of the SM copy kernel (agmm).
	CopyThreads = 512
	// ReduceThreads is the block size of the reduction kernel (matmulrs).
	ReduceThreads = 256
	// MaxOwners and MaxRSChunks size hopper_comm.cuh's RSTable.
	MaxOwners   = maxOwners
	MaxRSChunks = maxRSChunks
	// RSEpilogueOffset is where RSTable's epilogue fields start.
	RSEpilogueOffset = rsEpilogueOffset
)

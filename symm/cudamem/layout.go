package cudamem

import _ "embed"

// This file builds without the cuda tag: the barrier's source and the pad
// layout are pure data that GPU-free code needs too (the all-reduce's
// kernel version in kernels/allreduce, libsymmtune's constants).

// DeviceSource is the CUDA C of the signal-pad barrier. Kernels that run on
// a Team prepend it to their own source to call symm_block_barrier.
//
//go:embed barrier.cuh
var DeviceSource string

// Layout constants, matching barrier.cuh.
const (
	MaxWorld = 8
	PadSlots = 1024
	// MaxBlocks is how many blocks a kernel may barrier with (one slot each);
	// the last slot is the Team barrier's.
	MaxBlocks = PadSlots - 1
	// PadBytes is each rank's signal-pad area: PadSlots x MaxWorld u32
	// counters, then the barrier's timeout flag word.
	PadBytes = PadSlots*MaxWorld*4 + 256
)

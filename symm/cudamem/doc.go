// Package cudamem is symmtune's CUDA symmetric-memory backend. Each rank
// process owns one GPU (ordinal = rank among the visible devices, so
// CUDA_VISIBLE_DEVICES selects and orders them), allocates its symmetric
// region plus signal pads with cuMemAlloc through cuda/cu, and exports
// them as a CUDA IPC handle: the blob the host hands to peers. Connect
// maps every peer's region with cuIpcOpenMemHandle (lazy peer access), so
// a kernel can load and store peers' memory directly over NVLink. The Team
// exposes the context, the local and peer device pointers, a device-side
// pointer table for kernels, and a cross-GPU barrier on the signal pads
// (see barrier.cuh) that kernels can also embed.
//
// What touches a device builds under the cuda tag. The rest builds
// without it, as GPU-free code needs it too: the barrier's source and the
// pad layout, the fail-stop poison and its error, the trial timing's
// settings and the watchdog's logic.
//
// All CUDA calls of a rank run on one OS thread that holds the rank's
// context (Team.Do): the driver API's current context is per thread, and Go
// moves goroutines between threads.
//
// It also owns what a runner in another program's process needs to close
// without disturbing that program's graph captures: LastCall, the point
// after a runner's latest eager call that its close waits for, and
// Relaxed, the capture mode such a close runs in.
package cudamem

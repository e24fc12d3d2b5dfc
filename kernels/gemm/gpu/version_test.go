package gpu

import "testing"

// TestKernelVersions pins the GPU kernels' versions, which cache entries
// carry. A change to a hashed source (version.go's //go:embed list and the
// Hopper GEMM) makes every entry of the kernel stale: when that is what you
// meant, put the new value here. Moving or renaming other files must not
// change them.
func TestKernelVersions(t *testing.T) {
	// 323cccb3401b, f9484c36acaf: fail-stop (issue 54): the end barrier
	// (barrier.cuh) poisons the workspace on timeout, and the fused GEMM's
	// start gate is bounded.
	// f4af3a5bee9c, 8249f30bdfb2: symmtune.torch's runtime (issue 54)
	// plans a row count with its power-of-two bucket's cuBLASLt ranking,
	// so a config's algo names the algorithm ranked at the bucket's top
	// (pipeline_cuda.go's plans through the engine's planFor; the tuner's own engines rank each row
	// count as before), and closed runners' graphs are destroyed on the
	// engine's thread (runner_cuda.go).
	// c9148cac079b, 927ca2c37e21: barrier.cuh's poison spread has an
	// inline body (symm_spread) beside the out-of-line symm_poison, for the
	// Lamport all-reduces; the GEMMs' barrier code is the same.
	// 323dab8ef288, a8a17390733c: split-K in the Hopper GEMM (issue 56): SPLIT_K work
	// units and the fixup in the kernel, two more kernel parameters (the
	// workspace) in the launch, the runner's workspace and Validate's
	// split-K rule. Unsplit tiles compile and run as before, but the
	// sources they compile from and launch with changed.
	// 5dfc1be50fd9, 1869b54aaca6: a fused call forks and joins only the
	// streams it uses (none at world 1), and the launch sequence marks its
	// host steps for internal/calltime.
	// f2e37046c2e7, 4a6bb2c27ffb: fail-stop (issue 54): a stream's wait
	// for a peer's flag (agmm's pulls and pipelined pushes, matmulrs's
	// reduction kernel) is gemm_util.cu's bounded wait_flags, one launch
	// per kind and chunk of flag, where cuStreamWaitValue32 and a clear
	// per flag were. The fused GEMMs themselves are the same.
	// 3ad1d9282228, 631225ce86da: both of the above.
	// 1b360a653e1d, 1bea4a03f09e: an agmm of one rank pushes by default
	// (FitDefault in space.go): it reads A in place.
	// bff94483d4f8, 301eb6fa77f3: the own flag's wait is a stream memory
	// operation again (no SM spinning beside the product).
	// 392cb1a82f45, dbc31103bfe9: a comment in matmulrs_cuda.go only (the
	// hash covers the launch code's text); what runs is bff94483d4f8's.
	// 93e98308a5d9, 2f406f2cc203: the Hopper GEMM is launched as the
	// programmatic dependent of the kernel before it, waits for it
	// (griddepcontrol.wait) before touching global memory, prefetches its
	// tensor maps, and lets its own dependents launch early only before the
	// fused call's end barrier (a kernel parameter).
	// 2f00811617ff, f94ff92d2196: a trial's bench is timed as the host
	// asks (BenchRequest.timing, check_cuda.go); what runs is the same.
	// f812dd4df1f1, eff015628fa2: a fused agmm of one rank ends with its
	// GEMM, without the end barrier (FusedEndBarrier); matmulrs runs as
	// before (the hash covers the shared launch code).
	// 251860e12004, 8af4c8134206: a matmulrs pipeline of one rank writes
	// its product straight into the output (no slot, flag or reduction
	// kernel); agmm runs as before (the hash covers the shared files).
	// b82f9ddb41a3, d1ac956de9ff: a comment in matmulrs_cuda.go only;
	// what runs is 251860e12004's and 8af4c8134206's.
	// d8b464395924, 819b9cc32662: a matmulrs pipeline of one rank takes
	// only the default push and reduce_blocks (Validate: it uses neither);
	// what runs is the same.
	// d6afab557024, a923c8a605b8: a fused matmulrs of one rank runs the
	// GEMM alone into the output (FusedPlain: no table, flags, epilogue or
	// end barrier) and takes only the default push, reduce, reduce_blocks
	// and sm_reserve; split-K tiles run there; agmm runs as before.
	// 4b56736c8ae2, 4001b353db3d: stream-K tiles (issue 56, ":st"): the
	// kernel's work units come from a schedule (hopper_split.cuh, split-K's
	// fixup moved there), one more kernel parameter (the stream-K tiles),
	// the workspace sized by the grid. Other tiles compile and run as
	// before, but the sources they compile from and launch with changed.
	// b2165a4d30de, dfbe1b83571c: a unit carries fewer registers through
	// the main loop (a stream-K 128x256 tile spilled 8 bytes); split-K's
	// partials are indexed by the walk's tile instead of tm * tiles_n + tn.
	// 5bdcbf4a5fbc, cf43d1267173: Launch picks a stream-K tile's grid from
	// StreamKTiles alone (StreamKGrid removed); what runs is the same.
	// 1ab28633f987, 8bf8f5d37052: wgmma.cuh gains the 160-column wrapper
	// (the 128x160 and 256x160 tiles); other tiles compile as before.
	// 53a58a5b5b52, 9b0da66a8774: a reduce-scatter's rows bound for this
	// GPU's memory go by TMA stores through owner maps (two more kernel
	// parameters, rs_maps and rs_tma), each tile signalled at the warp's
	// next epilogue; plain products' code is as before, but the sources
	// they compile from and launch with changed.
	// 455daa33c87c, 36bb36bd0cb4: the local-slot rule named (LocalSlot);
	// what runs is 53a58a5b5b52's and 9b0da66a8774's.
	// ff61b3b83076, b0e022764031: stream-K tiles in clusters of two (the
	// fixup's partials and counts indexed by CTA, a cluster's pair walking
	// the same ranges); tiles without clusters compile as before.
	// c481dc36908f, 6546f058d477: FP8 tiles load their epilogue's scales
	// while the last k-block's MMAs run (TileScales; split-K and stream-K
	// after the fixup, as before); bf16 compiles as before.
	// 9d1e683c22d5, 5b2214ef5254: FP8 ping-pong tiles load them before
	// the consumer's turn (EARLY_SCALES); other tiles compile as before.
	// 6e422034e73e, 5104bfdc8236: with row scales only where no
	// all-gather's rows are waited for (early_scales: a gathered row's
	// scale is ordered only by the stages' mbarriers); store_tile_tma moved
	// to hopper_comm.cuh.
	// 9b79cc9799a7, 3e83a8c1e83b: tiles may load B evict-first (":ef",
	// B_EVICT_FIRST); every other tile compiles as before.
	// 2c7e0baa64ef, f2079746deca: wgmma wrappers 48, 80, 96 and 112 wide,
	// and the epilogue's pairs of 16-column blocks may end in one (BN a
	// multiple of 16, not 32); the earlier widths compile as before.
	// 06fc9c65bc22, b91f13558625: a runner's frees wait for a fence its runtime
	// marks at eviction (Fence), not for a point recorded at close on the
	// engine's thread, where a capture could take it in; only eager calls
	// set the stream they wait for, the legacy default stream (handle 0)
	// included. What runs is the same.
	// 25584572bfea, f46aafb532c5: that point is cudamem.LastCall, which the
	// runtime's all-reduce runners share, and EnqueueKnown takes the
	// caller's answer to whether its stream is being captured (cfc40e6ec2dd,
	// a2efdc035469 for a few commits without it). What runs is the same.
	for kernel, want := range map[Variant]string{VariantAGMM: "25584572bfea", VariantMatmulRS: "f46aafb532c5"} {
		if got := kernel.KernelVersion(); got != want {
			t.Errorf("%s kernel version %s, pinned %s", kernel, got, want)
		}
	}
}

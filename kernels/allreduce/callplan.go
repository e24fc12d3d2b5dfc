package allreduce

// callPlan is what one Runner call does around the kernel (runner_cuda.go),
// decided without a GPU so its rules are tested here.
type callPlan struct {
	stageIn    bool   // copy the tensor into the input region first
	zeroPad    bool   // zero the padding past n (a larger call may have left data there)
	direct     bool   // the kernel writes the sum into the tensor itself (its out argument)
	pushDirect bool   // the kernel is DirectEntry: it reads its input from the tensor too
	out        uint64 // the kernel's out argument
	copyBack   bool   // copy the sum from where it landed into the tensor
	from       uint64 // where the sum landed (copyBack's source)
	oneLaunch  bool   // the whole call is one kernel: launched as it is, no graph
}

// inPlaceAlgo says whether algo sums in place over the input region: the
// push two-shots, compiled with PUSH_OUT=0 by the Runner. They also have
// the direct entry (DirectEntry).
func inPlaceAlgo(algo string) bool { return algo == TwoShotPush || algo == TwoShotOverlap }

// DirectEntry is the push two-shots' second kernel (kernels/algos.cu; its
// helpers and tensor_t are in kernels/allreduce.cu): allreduce's arguments
// with out the caller's tensor, then n and outoff, the output region's byte
// offset in every region.
const DirectEntry = "allreduce_direct"

// directOutOff is DirectEntry's outoff where the Runner launches it: the
// Runner builds the push two-shots with PUSH_OUT=0, so a peer that stages
// its tensor or owns the input region pushes its sums over the input
// region, at byte 0, and so must every rank. The plugin's Verify passes
// it too, so that it checks the code the Runner runs, aliasing included.
const directOutOff = 0

// regionScratch is where a Runner's scratch region starts in each rank's
// region of regionBytes, in bytes: a third of it (16-byte aligned), for
// every call whatever its size, so the layout is [input | scratch |
// output] by thirds and a call of npad elements of elt bytes fits when
// npad*elt <= regionScratch (the same as 3*npad*elt <= regionBytes, npad*elt
// being a multiple of 16).
//
// Why not npad*elt, the call's own size: the push two-shots (and the
// copy-engine one) start scattering into peers' scratch with no barrier,
// as soon as their previous kernel is over, which needs only this rank's
// blocks to have reached its last barrier, not what follows it here (the
// copy of the sum back into the tensor, or the direct entry's copy-out).
// Had a smaller call's scratch started at its own npad*elt, inside the
// previous call's input or output, a fast peer's scatter could overwrite
// the sum before this rank had copied it out. Thirds keep every scratch
// write clear of both, at any sequence of sizes and configs on the region.
func regionScratch(regionBytes int64) int64 { return regionBytes / 3 &^ 15 }

// planCall is the plan of the all-reduce of the n elements (padded to
// npad) at address t, on this rank's region at input ([input | scratch |
// output], the scratch region at byte offset scratch, the output at
// 2*scratch: regionScratch). one_shot and two_shot write the sum to their
// out argument while peers read this rank's input region: it is the
// tensor itself only when the tensor was staged, needs no padding and is
// 16-byte aligned; else the output region. The push two-shots leave the
// sum in place over the input region, the copy-engine two-shot in the
// output region.
//
// A push two-shot on any other tensor is one launch of its direct entry
// when hasDirect (the Runner loaded it, and its grid fits on the GPU at
// once) and the tensor is 16-byte aligned: it reads the tensor and writes
// the sum into it, any n (it reads +0.0 past n, so nothing is zeroed).
// A misaligned tensor is staged instead: the direct entry would move all
// of it element by element, a path nobody has timed, while the copies
// run at the copy engine's speed. Each rank decides for itself: the
// direct and in-place entries exchange the same data in the same places
// with the same barriers, so ranks may differ.
func planCall(algo string, t, input uint64, n, npad int64, scratch uint64, hasDirect bool) callPlan {
	staged := t != input
	if staged && inPlaceAlgo(algo) && hasDirect && t%16 == 0 {
		return callPlan{direct: true, pushDirect: true, out: t, from: t, oneLaunch: true}
	}
	p := callPlan{stageIn: staged, zeroPad: npad > n, out: input + 2*scratch}
	p.direct = staged && (algo == OneShot || algo == TwoShot) && npad == n && t%16 == 0
	if p.direct {
		p.out = t
	}
	p.from = input + 2*scratch
	if inPlaceAlgo(algo) {
		p.from = input
	}
	p.copyBack = !p.direct && t != p.from
	p.oneLaunch = !staged && npad == n && inPlaceAlgo(algo)
	return p
}

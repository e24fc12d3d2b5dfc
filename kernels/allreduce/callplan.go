package allreduce

// callPlan is what one Runner call does around the kernel (runner_cuda.go),
// decided without a GPU so its rules are tested here.
type callPlan struct {
	stageIn   bool   // copy the tensor into the input region first
	zeroPad   bool   // zero the padding past n (a larger call may have left data there)
	direct    bool   // the kernel writes the sum into the tensor itself (its out argument)
	out       uint64 // the kernel's out argument
	copyBack  bool   // copy the sum from where it landed into the tensor
	from      uint64 // where the sum landed (copyBack's source)
	oneLaunch bool   // the whole call is one kernel: launched as it is, no graph
}

// inPlaceAlgo says whether algo sums in place over the input region: the
// push two-shots, compiled with PUSH_OUT=0 by the Runner.
func inPlaceAlgo(algo string) bool { return algo == TwoShotPush || algo == TwoShotOverlap }

// planCall is the plan of the all-reduce of the n elements (of elt bytes,
// padded to npad) at address t, on this rank's region at input ([input |
// scratch | output] of npad elements each). one_shot and two_shot write the
// sum to their out argument while peers read this rank's input region: it
// is the tensor itself only when the tensor was staged, needs no padding
// and is 16-byte aligned; else the output region. The push two-shots leave
// the sum in place over the input region, the copy-engine two-shot in the
// output region.
func planCall(algo string, t, input uint64, n, npad int64, elt int) callPlan {
	staged := t != input
	p := callPlan{stageIn: staged, zeroPad: npad > n, out: input + uint64(2*npad*int64(elt))}
	p.direct = staged && (algo == OneShot || algo == TwoShot) && npad == n && t%16 == 0
	if p.direct {
		p.out = t
	}
	p.from = input + uint64(2*npad*int64(elt))
	if inPlaceAlgo(algo) {
		p.from = input
	}
	p.copyBack = !p.direct && t != p.from
	p.oneLaunch = !staged && npad == n && inPlaceAlgo(algo)
	return p
}

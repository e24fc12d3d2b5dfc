package allreduce

import "testing"

// TestPlanCall: each branch of symmtune.torch's all-reduce call (the
// Runner's), for a tensor staged or living in the input region, aligned or
// not, padded or not, per algorithm.
func TestPlanCall(t *testing.T) {
	const in = 1 << 20 // the input region; output region at in + 2*npad*elt
	cases := []struct {
		name    string
		algo    string
		t       uint64
		n, npad int64
		want    callPlan
	}{
		{"one_shot staged aligned unpadded: sum straight into the tensor", OneShot, 4096, 64, 64,
			callPlan{stageIn: true, direct: true, out: 4096, from: in + 256}},
		{"two_shot staged aligned unpadded: likewise", TwoShot, 4096, 64, 64,
			callPlan{stageIn: true, direct: true, out: 4096, from: in + 256}},
		{"one_shot staged unaligned: output region, copied back", OneShot, 4098, 64, 64,
			callPlan{stageIn: true, out: in + 256, copyBack: true, from: in + 256}},
		{"one_shot staged padded: output region, copied back", OneShot, 4096, 60, 64,
			callPlan{stageIn: true, zeroPad: true, out: in + 256, copyBack: true, from: in + 256}},
		{"one_shot in the input region: output region, copied back", OneShot, in, 64, 64,
			callPlan{out: in + 256, copyBack: true, from: in + 256}},
		{"push staged: in place over the input, copied back", TwoShotPush, 4096, 64, 64,
			callPlan{stageIn: true, out: in + 256, copyBack: true, from: in}},
		{"push in the input region unpadded: one kernel, nothing copied", TwoShotPush, in, 64, 64,
			callPlan{out: in + 256, from: in, oneLaunch: true}},
		{"overlap in the input region padded: padding zeroed, no copy, a graph", TwoShotOverlap, in, 60, 64,
			callPlan{zeroPad: true, out: in + 256, from: in}},
		{"ce staged: output region, copied back", TwoShotCE, 4096, 64, 64,
			callPlan{stageIn: true, out: in + 256, copyBack: true, from: in + 256}},
		{"ce in the input region: copied back, never one launch", TwoShotCE, in, 64, 64,
			callPlan{out: in + 256, copyBack: true, from: in + 256}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := planCall(c.algo, c.t, in, c.n, c.npad, 2); got != c.want {
				t.Errorf("planCall = %+v, want %+v", got, c.want)
			}
		})
	}
}

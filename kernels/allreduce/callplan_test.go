package allreduce

import "testing"

// TestPlanCall: each branch of symmtune.torch's all-reduce call (the
// Runner's), for a tensor staged or living in the input region, aligned or
// not, padded or not, per algorithm.
func TestPlanCall(t *testing.T) {
	// The input region; the scratch region 128 bytes on, the output at
	// in + 256 (a region of 3*128 bytes, by thirds: regionScratch).
	const in, scratch = 1 << 20, 128
	cases := []struct {
		name     string
		algo     string
		t        uint64
		n, npad  int64
		noDirect bool // the Runner has no direct entry (its grid cannot be resident)
		want     callPlan
	}{
		{"one_shot staged aligned unpadded: sum straight into the tensor", OneShot, 4096, 64, 64, false,
			callPlan{stageIn: true, direct: true, out: 4096, from: in + 256}},
		{"two_shot staged aligned unpadded: likewise", TwoShot, 4096, 64, 64, false,
			callPlan{stageIn: true, direct: true, out: 4096, from: in + 256}},
		{"one_shot staged unaligned: output region, copied back", OneShot, 4098, 64, 64, false,
			callPlan{stageIn: true, out: in + 256, copyBack: true, from: in + 256}},
		{"one_shot staged padded: output region, copied back", OneShot, 4096, 60, 64, false,
			callPlan{stageIn: true, zeroPad: true, out: in + 256, copyBack: true, from: in + 256}},
		{"one_shot in the input region: output region, copied back", OneShot, in, 64, 64, false,
			callPlan{out: in + 256, copyBack: true, from: in + 256}},
		{"push plain aligned: the direct entry, one launch, nothing copied", TwoShotPush, 4096, 64, 64, false,
			callPlan{direct: true, pushDirect: true, out: 4096, from: 4096, oneLaunch: true}},
		{"push plain aligned padded: direct, the padding read as zeros, nothing zeroed", TwoShotPush, 4096, 60, 64, false,
			callPlan{direct: true, pushDirect: true, out: 4096, from: 4096, oneLaunch: true}},
		{"overlap plain aligned: direct too", TwoShotOverlap, 4096, 64, 64, false,
			callPlan{direct: true, pushDirect: true, out: 4096, from: 4096, oneLaunch: true}},
		{"push plain misaligned: staged, in place over the input, copied back", TwoShotPush, 4098, 64, 64, false,
			callPlan{stageIn: true, out: in + 256, copyBack: true, from: in}},
		{"overlap plain 8-byte aligned: staged", TwoShotOverlap, 4104, 60, 64, false,
			callPlan{stageIn: true, zeroPad: true, out: in + 256, copyBack: true, from: in}},
		{"push plain aligned, no direct entry: staged", TwoShotPush, 4096, 64, 64, true,
			callPlan{stageIn: true, out: in + 256, copyBack: true, from: in}},
		{"push in the input region unpadded: one kernel, nothing copied", TwoShotPush, in, 64, 64, false,
			callPlan{out: in + 256, from: in, oneLaunch: true}},
		{"overlap in the input region padded: padding zeroed, no copy, a graph", TwoShotOverlap, in, 60, 64, false,
			callPlan{zeroPad: true, out: in + 256, from: in}},
		{"ce staged: output region, copied back", TwoShotCE, 4096, 64, 64, false,
			callPlan{stageIn: true, out: in + 256, copyBack: true, from: in + 256}},
		{"ce in the input region: copied back, never one launch", TwoShotCE, in, 64, 64, false,
			callPlan{out: in + 256, copyBack: true, from: in + 256}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := planCall(c.algo, c.t, in, c.n, c.npad, scratch, !c.noDirect); got != c.want {
				t.Errorf("planCall = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestRegionScratch: the Runner's scratch offset is a third of the region,
// whatever the call's size (so that a smaller call's scatter, which starts
// with no barrier, never lands in the previous call's input or output,
// which this rank may still be copying out), 16-byte aligned, and every
// call the region fits (3*npad*elt bytes) fits below it.
func TestRegionScratch(t *testing.T) {
	for _, c := range []struct{ region, want int64 }{
		{3 * 1024, 1024},    // symmtune.torch.empty's region: exactly the tensor's third
		{3*1024 + 47, 1024}, // a third is 1039: down to 1024
		{3 << 21, 1 << 21},  // the staging workspace's first size (bf16)
		{100, 32},           // 33 down to 32
		{47, 0},             // holds nothing
	} {
		if got := regionScratch(c.region); got != c.want {
			t.Errorf("regionScratch(%d) = %d, want %d", c.region, got, c.want)
		}
	}
	for _, elt := range []int{2, 4} {
		for _, world := range []int{2, 4, 8} {
			for _, n := range []int64{1, 7, 8, 1000, 4097, 1 << 20, 1<<20 + 3} {
				npad := Padded(n, elt, world)
				bytes := npad * int64(elt)
				for _, extra := range []int64{0, 1, 15, 16, 17, 3*bytes + 5} {
					region := 3*bytes + extra
					s := regionScratch(region)
					if bytes > s || 3*s > region || s%16 != 0 {
						t.Errorf("elt %d world %d n %d region %d: scratch at %d, want >= %d, 16-aligned, 3x within the region", elt, world, n, region, s, bytes)
					}
				}
			}
		}
	}
}

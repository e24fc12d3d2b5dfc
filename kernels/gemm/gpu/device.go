package gpu

import "fmt"

// CheckDevice refuses d on a GPU of compute capability major.minor that
// cannot multiply it: FP8 products need FP8 tensor cores, which came with
// compute capability 8.9 (Ada; Hopper is 9.0). The plugins (Kernel.Open)
// and the runtime library check it before a runner is made, so a run on an
// A100 stops once, with the reason, instead of failing every trial in
// cuBLASLt's plan. (Not in the kernel version's sources: it decides what
// is refused, not what runs.)
func (d Dtype) CheckDevice(major, minor int) error {
	if d.FP8() && (major < 8 || major == 8 && minor < 9) {
		return fmt.Errorf("dtype %s needs FP8 tensor cores (compute capability 8.9 or newer: Ada, Hopper); this GPU is %d.%d", d, major, minor)
	}
	return nil
}

//go:build cuda

package main

import (
	"math"
	"sort"
	"strings"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
)

// cell is a message fit for one CSV cell: its first line, commas replaced.
func cell(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.ReplaceAll(s, ",", ";")
}

// tolerance of the relative RMS error of the sampled rows: bf16 outputs
// round at 2^-9, f16 at 2^-11; FP8 products add fast accumulation's error
// (docs/fp8.md, "Verification").
func tolerance(dtype string) float64 {
	switch dtype {
	case "bf16":
		return 1e-2
	case "f16":
		return 4e-3
	}
	return 2e-2
}

// verify poisons C, runs call once and returns the relative error of 64
// sampled rows (first, last and 62 spread over the rest) against the
// float64 reference of u's inputs (rank 0's A, B and their scales), or
// +Inf when any output is NaN/Inf (unwritten).
func (b *bench) verify(sh shape, u *util, c cu.DevicePtr, call func() error) (float64, error) {
	if err := cu.MemsetD16Async(c, 0xFFFF, int64(sh.m*sh.n), b.stream); err != nil {
		return 0, err
	}
	if err := cu.MemsetD32Async(b.res, 0, 8, b.stream); err != nil {
		return 0, err
	}
	if err := call(); err != nil {
		return 0, err
	}
	rows := map[int]bool{0: true, sh.m - 1: true}
	for i := 0; len(rows) < min(64, sh.m); i++ {
		rows[(i*7919+13)%sh.m] = true
	}
	var smp []uint64
	keys := make([]int, 0, len(rows))
	for r := range rows {
		keys = append(keys, r)
	}
	sort.Ints(keys)
	for _, r := range keys {
		smp = append(smp, uint64(r), uint64(r), 0, 1)
	}
	if err := cu.MemcpyHtoD(b.samples, unsafe.Pointer(&smp[0]), int64(8*len(smp))); err != nil {
		return 0, err
	}
	chk, err := gpu.CheckRowsArgs(u.dtype, uint64(c), sh.n, uint64(b.samples), sh.n, sh.k, seed, uint64(b.res), gpu.ScaleRankSource)
	if err != nil {
		return 0, err
	}
	if err := u.check.Launch((sh.n+255)/256, len(keys), 1, 256, 1, 1, 0, b.stream, args(chk...)); err != nil {
		return 0, err
	}
	if err := u.countBad.Launch(min((sh.m*sh.n+255)/256, 4096), 1, 1, 256, 1, 1, 0, b.stream,
		args(uint64(c), uint64(sh.m), uint64(sh.n), uint64(sh.n), uint64(b.res))); err != nil {
		return 0, err
	}
	if err := b.stream.Synchronize(); err != nil {
		return 0, err
	}
	var res [4]float64
	if err := cu.MemcpyDtoH(unsafe.Pointer(&res[0]), b.res, 32); err != nil {
		return 0, err
	}
	if res[2] > 0 || res[3] > 0 || res[1] == 0 {
		return math.Inf(1), nil
	}
	return math.Sqrt(res[0] / res[1]), nil
}

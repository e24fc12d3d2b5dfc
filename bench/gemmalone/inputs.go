//go:build cuda

package main

import (
	"errors"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
)

// buffers are one shape's operands, filled from the generator: A and B in
// the run's 16-bit type (bf16 for FP8 runs: the bf16 reference's), B both
// [K, N] and [N, K]; for FP8 runs e4m3 A and B stored [N, K] (the only
// layout FP8 wgmma and cuBLASLt's sm_90 FP8 kernels read) with their fp32
// scales; C, bf16 or f16.
type buffers struct {
	a, bKN, bNK, c cu.DevicePtr
	a8, b8, sa, sb cu.DevicePtr
	all            []cu.DevicePtr
}

func (buf *buffers) free() {
	for _, p := range buf.all {
		cu.MemFree(p)
	}
}

// inputs allocates and fills sh's operands on the stream: A is rank 0's
// tensor, B TensorB's (the plugins' generator ranks), and so are their
// scales (gpu.FillScalesArgs): one each (e4m3) or one per row of A and per
// column of C (e4m3_row).
func (b *bench) inputs(sh shape) (*buffers, error) {
	buf := &buffers{}
	n16 := 2 * int64(sh.k) * int64(sh.n)
	sizes := []struct {
		dst   *cu.DevicePtr
		bytes int64
	}{{&buf.a, 2 * int64(sh.m) * int64(sh.k)}, {&buf.bKN, n16}, {&buf.bNK, n16}, {&buf.c, 2 * int64(sh.m) * int64(sh.n)}}
	na, nb := 1, 1
	if b.format.RowScales {
		na, nb = sh.m, sh.n
	}
	if fp8(b.dtype) {
		sizes = append(sizes, []struct {
			dst   *cu.DevicePtr
			bytes int64
		}{{&buf.a8, int64(sh.m) * int64(sh.k)}, {&buf.b8, int64(sh.k) * int64(sh.n)}, {&buf.sa, 4 * int64(na)}, {&buf.sb, 4 * int64(nb)}}...)
	}
	for _, s := range sizes {
		p, err := cu.MemAlloc(s.bytes)
		if err != nil {
			buf.free()
			return nil, err
		}
		*s.dst, buf.all = p, append(buf.all, p)
	}
	launch := func(f cu.Function, n int, vals ...uint64) error {
		return f.Launch(fillGrid(n), 1, 1, 256, 1, 1, 0, b.stream, args(vals...))
	}
	m, n, k := uint64(sh.m), uint64(sh.n), uint64(sh.k)
	u := b.u16
	err := errors.Join(
		launch(u.fill, sh.m*sh.k, uint64(buf.a), m, k, k, 0, seed, 0),
		launch(u.fill, sh.k*sh.n, uint64(buf.bKN), k, n, n, 0, seed, gpu.TensorB),
		launch(u.fillT, sh.k*sh.n, uint64(buf.bNK), k, n, k, seed, gpu.TensorB))
	if err == nil && fp8(b.dtype) {
		u := b.u8
		err = errors.Join(
			launch(u.fill, sh.m*sh.k, uint64(buf.a8), m, k, k, 0, seed, 0),
			launch(u.fillT, sh.k*sh.n, uint64(buf.b8), k, n, k, seed, gpu.TensorB),
			launch(u.fillScales, na, gpu.FillScalesArgs(uint64(buf.sa), na, 0, seed, 0)...),
			launch(u.fillScales, nb, gpu.FillScalesArgs(uint64(buf.sb), nb, 0, seed, gpu.TensorB)...))
	}
	if err != nil {
		buf.free()
		return nil, err
	}
	return buf, nil
}

// fillGrid is the grid of a fill kernel (256 threads a block, grid-stride)
// over n elements.
func fillGrid(n int) int { return min(max((n+255)/256, 1), 4096) }

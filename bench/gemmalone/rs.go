//go:build cuda

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// rsRow times tile t once more as a one-rank fused matmul + reduce-scatter
// runs it (matmulrs impl=fused, reduce=kernel, world 1): the same kernel
// with PlanFusedRS's tile order and table, every row stored into the
// rank's slot (here C) and a flag per chunk; by TMA through the slots' maps
// (gpu.RSMap) as rows bound for this GPU's memory go, or with regs by each
// warp's own stores as rows bound for a peer's go ("rs-regs"). Its ratio
// to the plain row above is what that epilogue costs the GEMM, with no
// peer, copy or reduction pass in the way. The row is checked as the
// plain one. -rsworld and -rschunks make it rank 0's part of a larger
// call: its tile order (the peers' rows first) and chunk table, still
// with no peer.
func (b *bench) rsRow(sh shape, t hopper.Tile, buf *buffers, flops float64, iters, warmup int, refs []*ltRef, infos []refInfo,
	regs bool, row func(format string, a ...any)) (err error) {
	g, err := gpu.CompileFusedWith(b.comp, t, b.format, extraOpts)
	if err != nil {
		return err
	}
	var dev []cu.DevicePtr
	defer func() {
		for _, d := range dev {
			err = errors.Join(err, cu.MemFree(d))
		}
		err = errors.Join(err, g.Close())
	}()
	alloc := func(b []byte) (cu.DevicePtr, error) {
		d, err := cu.MemAlloc(int64(len(b)))
		if err != nil {
			return 0, err
		}
		dev = append(dev, d)
		return d, cu.MemcpyHtoD(d, unsafe.Pointer(&b[0]), int64(len(b)))
	}
	// -rsworld W: rank 0's plan of a W-rank call, owner q's rows into
	// C's rows of rank q (for q > 0 the staging a push=ce call copies out
	// from), so C ends up as in a one-rank call and is checked the same way.
	world, rows := rsWorld, sh.m/rsWorld
	plan := gpu.PlanFusedRS(sh.m, sh.n, world, 0, rsChunks, t.BM, t.BN, t.RowsPerTile())
	flags, err := alloc(make([]byte, len(plan.Owner)*gpu.FlagStride))
	if err != nil {
		return err
	}
	flagAt := make([]uint64, len(plan.Owner))
	for i := range flagAt {
		flagAt[i] = uint64(flags) + uint64(i*gpu.FlagStride)
	}
	dst := make([]uint64, world)
	for q := range dst {
		dst[q] = uint64(buf.c) + uint64(q*rows*sh.n*hopper.OutBytes)
	}
	// Every slot is in this GPU's memory: each owner's rows go by TMA
	// stores, as a matmulrs's rows bound for its own GPU do (gpu.RSMap);
	// with regs none has a map, as a peer's slot has not.
	impl, maps := "rs-regs", [][128]byte(nil)
	if !regs {
		impl, maps = "rs", make([][128]byte, world)
		for q := range maps {
			if maps[q], err = g.RSMap(cu.DevicePtr(dst[q]), rows, sh.n); err != nil {
				return err
			}
		}
	}
	tab, err := plan.Table(dst, flagAt, gpu.RSEpilogue{})
	if err != nil {
		return err
	}
	rs, err := alloc(tab)
	if err != nil {
		return err
	}
	order := make([]byte, 4*len(plan.Order))
	for i, v := range plan.Order {
		binary.LittleEndian.PutUint32(order[4*i:], v)
	}
	ord, err := alloc(order)
	if err != nil {
		return err
	}
	status, err := alloc(make([]byte, 8))
	if err != nil {
		return err
	}
	a, bmat, u := buf.a, buf.bNK, b.u16
	if !t.BKMajor {
		bmat = buf.bKN
	}
	if fp8(b.dtype) {
		a, bmat, u = buf.a8, buf.b8, b.u8
	}
	ops, err := g.Maps(a, bmat, 0, sh.m, sh.n, sh.k)
	if err != nil {
		return err
	}
	ops.ScaleA, ops.ScaleB = buf.sa, buf.sb
	comm := gpu.Comm{Order: ord, Status: status, TimeoutNs: 2_000_000_000, RS: rs, RowsPerRank: rows, RSMaps: maps}
	call := func() error { return g.Launch(b.stream, ops, buf.c, b.dev.SMs, comm) }
	rel, err := b.verify(sh, u, buf.c, call)
	if err != nil {
		return err
	}
	if math.IsInf(rel, 1) || rel > tolerance(b.dtype) {
		row("%s,%.2e,-,-,WRONG,%s,-,-", impl, rel, b.dtype)
		return nil
	}
	us, kernel, around, err := b.bracketed(call, refs, iters, warmup)
	if err == nil {
		err = b.profiled(call, fmt.Sprintf("%dx%dx%d %s %s", sh.m, sh.n, sh.k, impl, t))
	}
	if err != nil {
		return err
	}
	c := cellsOf(infos, around, us)
	row("%s,%.2e,%.1f,%.0f,%s (reduce-scatter epilogue of rank 0 of %d; %d chunks a rank; %s %.1f/%.1f%s),%s,%s,%s", impl, rel, us, flops/us/1e6,
		c.ratio, world, rsChunks, c.name, c.before, c.after, kernelNote(kernelOutside, kernel), b.dtype, c.fp8Us, c.fp8Ratio)
	return nil
}

//go:build cuda

package main

import (
	"fmt"
	"strings"

	"github.com/symmtune/symmtune/cuda/cu"
)

// launchModes is -launch: how each tile is launched and timed, one row
// per mode: true the programmatic dependent of the kernel before it (the
// default launch, as the plugins and the runtime launch it: impl "fused"),
// false a plain launch (impl "fused-plain", gpu.FusedGEMM's PlainLaunch;
// the only launch before 2026-12-02, whose CSVs call it "fused").
var launchModes = []bool{true}

// parseLaunch reads -launch: "plain", "pdl" or both, comma-separated.
func parseLaunch(s string) ([]bool, error) {
	var modes []bool
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "plain":
			modes = append(modes, false)
		case "pdl":
			modes = append(modes, true)
		default:
			return nil, fmt.Errorf("-launch %q: want plain, pdl or plain,pdl", s)
		}
	}
	return modes, nil
}

// implOf is a tile row's impl column for a launch mode.
func implOf(dependent bool) string {
	if dependent {
		return "fused"
	}
	return "fused-plain"
}

// fillKiB is -fill-before: a fill kernel of this many KiB runs before
// every timed call, cuBLASLt's and the tiles' alike, so that each product
// follows another kernel, as in a model (a norm or an activation before a
// projection), instead of following itself.
var fillKiB int

// fillCall returns call preceded by -fill-before's kernel (call itself
// without it). The fill writes a scratch buffer nothing else reads, from
// the generator (rows of 1,024 elements).
func (b *bench) fillCall(call func() error) func() error {
	if fillKiB == 0 {
		return call
	}
	rows := uint64(max(fillKiB/2, 1)) // 2 KiB a row of 1,024 two-byte elements
	n := int(rows) * 1024
	return func() error {
		vals := []uint64{uint64(b.scratch), rows, 1024, 1024, 0, seed, 0}
		if err := b.u16.fill.Launch(fillGrid(n), 1, 1, 256, 1, 1, 0, b.stream, args(vals...)); err != nil {
			return fmt.Errorf("-fill-before: %w", err)
		}
		return call()
	}
}

// refilledA returns call preceded by a poisoning of the A that tile reads
// (all ones: NaN in bf16, f16 and e4m3) and its refill from the generator
// by a kernel: a dependent launch of call that read A before that
// kernel's end would see NaN, which verify reports as a wrong product.
func (b *bench) refilledA(sh shape, buf *buffers, call func() error) func() error {
	a, u := buf.a, b.u16
	bytes := 2 * int64(sh.m) * int64(sh.k)
	if fp8(b.dtype) {
		a, u, bytes = buf.a8, b.u8, int64(sh.m)*int64(sh.k)
	}
	n := sh.m * sh.k
	return func() error {
		if err := cu.MemsetD8Async(a, 0xFF, bytes, b.stream); err != nil {
			return err
		}
		vals := []uint64{uint64(a), uint64(sh.m), uint64(sh.k), uint64(sh.k), 0, seed, 0}
		if err := u.fill.Launch(fillGrid(n), 1, 1, 256, 1, 1, 0, b.stream, args(vals...)); err != nil {
			return err
		}
		return call()
	}
}

// verifyDependent checks call, a dependent launch: A poisoned and
// refilled by the kernel right before it, twice (the second launch also
// follows the first one's checks).
func (b *bench) verifyDependent(sh shape, u *util, buf *buffers, call func() error) (float64, error) {
	rel, err := b.verify(sh, u, buf.c, b.refilledA(sh, buf, call))
	if err != nil || rel > tolerance(b.dtype) {
		return rel, err
	}
	again, err := b.verify(sh, u, buf.c, b.refilledA(sh, buf, call))
	return max(rel, again), err
}

//go:build cuda

package main

import (
	"errors"
	"math"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// tileWork is a split-K or stream-K tile's workspace for one shape (none
// for other tiles), allocated here as the runner allocates it from its engine.
type tileWork struct {
	gpu.SplitKWork
	all []cu.DevicePtr
}

// allocWork allocates g's split-K or stream-K workspace for sh on sms SMs:
// the partials, and the counts zeroed, as the kernel needs them before its
// first launch.
func allocWork(g *gpu.FusedGEMM, sh shape, sms int) (*tileWork, error) {
	w := &tileWork{}
	var err error
	w.SplitKWork, err = g.AllocSplitK(sh.m, sh.n, sms, func(n int64, zeroed bool) (cu.DevicePtr, error) {
		d, err := cu.MemAlloc(n)
		if err != nil {
			return 0, err
		}
		w.all = append(w.all, d)
		if zeroed {
			err = cu.MemsetD8(d, 0, n)
		}
		return d, err
	})
	if err != nil {
		return nil, errors.Join(err, w.free())
	}
	return w, nil
}

func (w *tileWork) free() error {
	var errs []error
	for _, d := range w.all {
		errs = append(errs, cu.MemFree(d))
	}
	w.all = nil
	return errors.Join(errs...)
}

// verifyTile is verify, twice for a split-K or stream-K tile: the second launch starts
// from the counts the first left, which must be zero again, and its
// output is poisoned anew. The worse of the two errors.
func (b *bench) verifyTile(sh shape, u *util, c cu.DevicePtr, call func() error, t hopper.Tile) (float64, error) {
	rel, err := b.verify(sh, u, c, call)
	if err != nil || !t.Shares() || math.IsInf(rel, 1) {
		return rel, err
	}
	again, err := b.verify(sh, u, c, call)
	return max(rel, again), err
}

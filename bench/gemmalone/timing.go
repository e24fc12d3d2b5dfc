//go:build cuda

package main

import (
	"fmt"
	"sort"

	"github.com/symmtune/symmtune/cuda/cu"
)

// bracketed times call with cuBLASLt's refs right before and after it, in
// mirrored order (clocks drift as the GPU heats): call's median, and each
// ref's medians before and after.
func (b *bench) bracketed(call func() error, refs []*ltRef, iters, warmup int) (float64, [][2]float64, error) {
	around := make([][2]float64, len(refs))
	var err error
	for i, r := range refs {
		if around[i][0], err = b.time(r.call, iters, warmup); err != nil {
			return 0, nil, err
		}
	}
	us, err := b.time(call, iters, warmup)
	if err != nil {
		return 0, nil, err
	}
	for i := len(refs) - 1; i >= 0; i-- {
		if around[i][1], err = b.time(refs[i].call, iters, warmup); err != nil {
			return 0, nil, err
		}
	}
	return us, around, nil
}

// fp8Cells are the cuBLASLt FP8 columns of a row: its mean around a call
// of us, and its ratio to us ("-" without an FP8 reference).
func fp8Cells(around [][2]float64, us float64) (string, string) {
	if len(around) < 2 {
		return "-", "-"
	}
	lt8 := (around[1][0] + around[1][1]) / 2
	return fmt.Sprintf("%.1f", lt8), fmt.Sprintf("%.3f", lt8/us)
}

// time is the median of iters calls, each between two CUDA events.
func (b *bench) time(call func() error, iters, warmup int) (float64, error) {
	for i := 0; i < warmup; i++ {
		if err := call(); err != nil {
			return 0, err
		}
	}
	evs := make([]cu.Event, 2*iters)
	for i := range evs {
		var err error
		if evs[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return 0, err
		}
		defer cu.DestroyEvent(&evs[i])
	}
	for i := 0; i < iters; i++ {
		if err := evs[2*i].Record(b.stream); err != nil {
			return 0, err
		}
		if err := call(); err != nil {
			return 0, err
		}
		if err := evs[2*i+1].Record(b.stream); err != nil {
			return 0, err
		}
	}
	if err := b.stream.Synchronize(); err != nil {
		return 0, err
	}
	ts := make([]float64, iters)
	for i := range ts {
		ms, err := evs[2*i].Elapsed(evs[2*i+1])
		if err != nil {
			return 0, err
		}
		ts[i] = float64(ms) * 1000
	}
	sort.Float64s(ts)
	return ts[len(ts)/2], nil
}

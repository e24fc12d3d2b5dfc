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

// traffic is -beside's copy engine traffic: each timed call starts a copy
// of bytes between two buffers of this GPU on a side stream (a read and a
// write of bytes each through L2 and HBM, as a peer's pushes out of and into
// this GPU cause), and the next call waits for it, outside its events.
type traffic struct {
	bytes      int64
	side       cu.Stream
	src, dst   cu.DevicePtr
	start, end cu.Event
}

func newTraffic(bytes int64) (*traffic, error) {
	t := &traffic{bytes: bytes}
	var err error
	if t.side, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return nil, err
	}
	if t.src, err = cu.MemAlloc(bytes); err != nil {
		return nil, err
	}
	if t.dst, err = cu.MemAlloc(bytes); err != nil {
		return nil, err
	}
	if t.start, err = cu.MakeEvent(cu.DisableTiming); err != nil {
		return nil, err
	}
	t.end, err = cu.MakeEvent(cu.DisableTiming)
	return t, err
}

// beside returns call with the copy started on the side stream with it.
func (t *traffic) beside(s cu.Stream, call func() error) func() error {
	return func() error {
		if err := t.start.Record(s); err != nil {
			return err
		}
		if err := t.side.Wait(t.start, 0); err != nil {
			return err
		}
		if err := cu.MemcpyDtoDAsync(t.dst, t.src, t.bytes, t.side); err != nil {
			return fmt.Errorf("traffic copy: %w", err)
		}
		if err := t.end.Record(t.side); err != nil {
			return err
		}
		return call()
	}
}

// time is the median of iters calls, each between two CUDA events (with
// -beside, each beside its copy).
func (b *bench) time(call func() error, iters, warmup int) (float64, error) {
	if b.traffic != nil {
		call = b.traffic.beside(b.stream, call)
	}
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
		if b.traffic != nil {
			// The last call's copy is done before this call's start.
			if err := b.stream.Wait(b.traffic.end, 0); err != nil {
				return 0, err
			}
		}
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

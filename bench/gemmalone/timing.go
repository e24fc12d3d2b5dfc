//go:build cuda

package main

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/symmtune/symmtune/cuda/cu"
)

// bracketed times call with cuBLASLt's refs in bracketSteps' order (clocks
// drift as the GPU heats): call's mean time (its median; with
// -kernel-outside the mean of its two), its first and last times, and each
// ref's medians before and after (the same twice with -kernel-outside).
func (b *bench) bracketed(call func() error, refs []*ltRef, iters, warmup int) (float64, [2]float64, [][2]float64, error) {
	steps := bracketSteps(len(refs), kernelOutside)
	times := make([]float64, len(steps))
	for j, s := range steps {
		f := call
		if s >= 0 {
			f = refs[s].call
		}
		var err error
		if times[j], err = b.time(f, iters, warmup); err != nil {
			return 0, [2]float64{}, nil, err
		}
	}
	us, kernel, around := bracketTimes(steps, times, len(refs))
	return us, kernel, around, nil
}

// traffic is -beside's copy engine traffic: each timed call starts a copy
// of bytes between two buffers of this GPU on a side stream (a read and a
// write of bytes each through L2 and HBM, as a peer's pushes out of and into
// this GPU cause), and the next call waits for it, outside its events. With
// -peer the bytes cross NVLink instead: this GPU's copy engine pushes them
// to GPU 1 while GPU 1's pushes as many into this GPU, as the two ranks of a
// matmul + reduce-scatter do.
type traffic struct {
	bytes      int64
	side       cu.Stream
	src, dst   cu.DevicePtr
	start, end cu.Event
	// -peer: GPU 1's context, stream, copy (src1 into this GPU's in) and
	// its end.
	ctx0, ctx1 cu.CUContext
	side1      cu.Stream
	src1, in   cu.DevicePtr
	end1       cu.Event
}

func newTraffic(bytes int64, peer bool) (*traffic, error) {
	t := &traffic{bytes: bytes}
	var err error
	if t.side, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return nil, err
	}
	if t.src, err = cu.MemAlloc(bytes); err != nil {
		return nil, err
	}
	if t.start, err = cu.MakeEvent(cu.DisableTiming); err != nil {
		return nil, err
	}
	if t.end, err = cu.MakeEvent(cu.DisableTiming); err != nil {
		return nil, err
	}
	if !peer {
		t.dst, err = cu.MemAlloc(bytes)
		return t, err
	}
	if t.in, err = cu.MemAlloc(bytes); err != nil {
		return nil, err
	}
	if t.ctx0, err = cu.CurrentContext(); err != nil {
		return nil, err
	}
	// GPU 1: its buffers, stream and event, made in its own context; then
	// each context may address the other's memory.
	if t.ctx1, err = cu.Device(1).MakeContext(cu.SchedAuto); err != nil {
		return nil, fmt.Errorf("-peer needs a second GPU: %w", err)
	}
	if t.dst, err = cu.MemAlloc(bytes); err != nil {
		return nil, err
	}
	if t.src1, err = cu.MemAlloc(bytes); err != nil {
		return nil, err
	}
	if t.side1, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return nil, err
	}
	if t.end1, err = cu.MakeEvent(cu.DisableTiming); err != nil {
		return nil, err
	}
	if err = cu.EnablePeerAccess(t.ctx0); err != nil {
		return nil, err
	}
	if err = cu.SetCurrentContext(t.ctx0); err != nil {
		return nil, err
	}
	return t, cu.EnablePeerAccess(t.ctx1)
}

// beside returns call with the copies started on the side streams with it.
func (t *traffic) beside(s cu.Stream, call func() error) func() error {
	return func() error {
		if err := t.start.Record(s); err != nil {
			return err
		}
		if err := t.side.Wait(t.start, 0); err != nil {
			return err
		}
		// Out of this GPU: into its own second buffer, or GPU 1's.
		if err := cu.MemcpyDtoDAsync(t.dst, t.src, t.bytes, t.side); err != nil {
			return fmt.Errorf("traffic copy: %w", err)
		}
		if err := t.end.Record(t.side); err != nil {
			return err
		}
		if t.side1 != (cu.Stream{}) {
			if err := t.pushIn(); err != nil {
				return err
			}
		}
		return call()
	}
}

// pushIn enqueues GPU 1's copy into this GPU, in GPU 1's context.
func (t *traffic) pushIn() error {
	if err := cu.SetCurrentContext(t.ctx1); err != nil {
		return err
	}
	err := t.side1.Wait(t.start, 0)
	if err == nil {
		err = cu.MemcpyDtoDAsync(t.in, t.src1, t.bytes, t.side1)
	}
	if err == nil {
		err = t.end1.Record(t.side1)
	}
	return errors.Join(err, cu.SetCurrentContext(t.ctx0))
}

// wait makes s wait for the last call's copies.
func (t *traffic) wait(s cu.Stream) error {
	if err := s.Wait(t.end, 0); err != nil {
		return err
	}
	if t.side1 != (cu.Stream{}) {
		return s.Wait(t.end1, 0)
	}
	return nil
}

// time is the median of iters calls, each between two CUDA events (with
// -beside, each beside its copy; with -fill-before, each after the fill,
// which the events time too).
func (b *bench) time(call func() error, iters, warmup int) (float64, error) {
	call = b.fillCall(call)
	if sustain > 0 {
		return b.sustained(call, sustain)
	}
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
			if err := b.traffic.wait(b.stream); err != nil {
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

// sustain is -sustain: time runs each kernel back to back for this long.
var sustain time.Duration

// surveySustain is -survey-sustain: with sustain, the window timeSurvey
// gives each of cuBLASLt's algorithms (0: sustain's).
var surveySustain time.Duration

// timeSurvey is time for picking cuBLASLt's algorithm: in surveySustain's
// windows where set. Only the pick's time around each tile makes a ratio,
// so a shorter window there saves device time (a bf16 shape in 2 s
// windows spent 8 of its 14 s a round on the four algorithms) without
// moving the ratios; where two algorithms are that close, either is a
// fair reference.
func (b *bench) timeSurvey(call func() error, iters, warmup int) (float64, error) {
	if sustain > 0 && surveySustain > 0 {
		return b.sustained(b.fillCall(call), surveySustain)
	}
	return b.time(call, iters, warmup)
}

// sustainBatch is how many calls are enqueued between the host's checks
// of the clock; two batches are in flight, so the GPU never waits.
const sustainBatch = 16

// sustained runs call back to back for d: the first third untimed (the
// clock settles under the power cap), then the mean per call, in µs, of
// the rest, from events around all of it.
func (b *bench) sustained(call func() error, d time.Duration) (float64, error) {
	var evs [4]cu.Event
	for i := range evs {
		var err error
		if evs[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return 0, err
		}
		defer cu.DestroyEvent(&evs[i])
	}
	start, end, batches := evs[0], evs[1], evs[2:]
	// batch enqueues sustainBatch calls and an event after them, first
	// waiting for the batch before the last: one batch always queued.
	k := 0
	batch := func() error {
		ev := batches[k%2]
		if k >= 2 {
			if err := ev.Synchronize(); err != nil {
				return err
			}
		}
		for i := 0; i < sustainBatch; i++ {
			if err := call(); err != nil {
				return err
			}
		}
		k++
		return ev.Record(b.stream)
	}
	t0 := time.Now()
	for time.Since(t0) < d/3 {
		if err := batch(); err != nil {
			return 0, err
		}
	}
	if err := start.Record(b.stream); err != nil {
		return 0, err
	}
	calls := 0
	for t1 := time.Now(); time.Since(t1) < d-d/3 || calls == 0; calls += sustainBatch {
		if err := batch(); err != nil {
			return 0, err
		}
	}
	if err := end.Record(b.stream); err != nil {
		return 0, err
	}
	if err := b.stream.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := start.Elapsed(end)
	if err != nil {
		return 0, err
	}
	return ms * 1000 / float64(calls), nil
}

//go:build cuda

package cudamem

import (
	"fmt"
	"runtime"

	"github.com/symmtune/symmtune/cuda/cu"
)

// LastCall is the point after an owner's latest eager call (a runner the
// symmtune.torch runtime holds), which its close waits for instead of the
// whole device. A context-wide synchronize, or a wait recorded on a
// stream another thread captures, invalidates that capture in any mode
// (torch's global one included), so a close that may run while the
// program captures a graph must wait for its own work alone. Captured
// calls need no point: the graph holding them holds the owner, and its
// hold ends only once its launches are done (CUDA user objects).
//
// The zero value has seen no call. Not safe for concurrent use.
type LastCall struct {
	stream cu.Stream
	set    bool // stream is set: the legacy default stream's handle is zero
	ev     cu.Event
	marked bool
}

// Eager notes an eager call on s, a stream not being captured.
func (l *LastCall) Eager(s cu.Stream) { l.stream, l.set = s, true }

// Stream is the latest eager call's stream; false: none was made.
func (l *LastCall) Stream() (cu.Stream, bool) { return l.stream, l.set }

// Mark records, now, the point after the latest eager call, for a close
// that may run later or on another thread. False, nil: that stream is
// being captured now (by another thread; the legacy stream answers an
// error then), so no point can be marked yet: try again later. True with
// no eager call made: there is nothing to wait for.
func (l *LastCall) Mark() (bool, error) {
	if !l.set {
		return true, nil
	}
	if capturing, err := l.stream.IsCapturing(); err != nil || capturing {
		return false, nil
	}
	if !l.marked {
		ev, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return false, fmt.Errorf("mark the last call: %w", err)
		}
		l.ev, l.marked = ev, true
	}
	if err := l.ev.Record(l.stream); err != nil {
		return false, fmt.Errorf("mark the last call: %w", err)
	}
	return true, nil
}

// Marked is the point Mark recorded; false: none was.
func (l *LastCall) Marked() (*cu.Event, bool) { return &l.ev, l.marked }

// Wait blocks the caller until the marked point is reached (nothing to
// wait for without one: Mark comes first where an eager call was made).
func (l *LastCall) Wait() error {
	if !l.marked {
		return nil
	}
	if err := l.ev.Synchronize(); err != nil {
		return fmt.Errorf("wait for the last call: %w", err)
	}
	return nil
}

// Close destroys the mark's event. Waits already enqueued on it stand.
func (l *LastCall) Close() error {
	if !l.marked {
		return nil
	}
	l.marked = false
	return cu.DestroyEvent(&l.ev)
}

// Relaxed runs f with the calling OS thread in the relaxed capture mode,
// where a close's destructions and waits on its own points leave another
// thread's capture (in torch's global mode) whole; the thread's mode is
// restored after.
func Relaxed(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := cu.ExchangeCaptureMode(cu.CaptureRelaxed)
	if err != nil {
		// A driver without the call has no global capture mode either.
		return f()
	}
	defer func() { _, _ = cu.ExchangeCaptureMode(prev) }()
	return f()
}

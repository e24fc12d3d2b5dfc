package cu

/*
#include "driver.h"
// A handle from another runtime, as a number: converted here, not in Go,
// where a number may not become a pointer.
static inline CUstream cu_stream_of(uintptr_t h) { return (CUstream)h; }
*/
import "C"

import "unsafe"

// StreamFlags are cuStreamCreate's flags.
type StreamFlags byte

// Stream flags (values from cuda.h).
const (
	DefaultStream StreamFlags = 0
	// NonBlocking: the stream does not synchronise with the legacy NULL
	// stream.
	NonBlocking StreamFlags = 1
)

// EventFlags are cuEventCreate's flags.
type EventFlags byte

// Event flags (values from cuda.h).
const (
	DefaultEvent  EventFlags = 0
	BlockingSync  EventFlags = 1
	DisableTiming EventFlags = 2
)

// Stream is a CUDA stream; the zero Stream is the legacy default stream.
type Stream struct{ s C.CUstream }

// C is the CUstream handle, for other bindings' C calls.
func (s Stream) C() unsafe.Pointer { return unsafe.Pointer(s.s) }

// StreamFromHandle is the Stream of a raw CUstream handle another runtime
// made (torch's current stream, torch.cuda.current_stream().cuda_stream;
// 0 the legacy default stream). The Stream does not own it.
func StreamFromHandle(h uintptr) Stream { return Stream{s: C.cu_stream_of(C.uintptr_t(h))} }

// IsCapturing says whether s is being captured into a graph
// (cuStreamIsCapturing: any status but none).
func (s Stream) IsCapturing() (bool, error) {
	if err := ensure(); err != nil {
		return false, err
	}
	var st C.int
	if err := check("cuStreamIsCapturing", C.cu_stream_is_capturing(s.s, &st)); err != nil {
		return false, err
	}
	return st != 0, nil
}

// ExchangeCaptureMode sets the calling OS thread's stream capture
// interaction mode to mode and returns the one it had
// (cuThreadExchangeStreamCaptureMode). Under CaptureRelaxed the thread may
// make calls that are unsafe during a capture (a graph's destruction,
// which waits for the GPU) while another thread captures in global mode,
// which would otherwise invalidate that capture. The caller must hold its
// OS thread (runtime.LockOSThread) for the mode to mean anything.
func ExchangeCaptureMode(mode CaptureMode) (CaptureMode, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	m := C.int(mode)
	if err := check("cuThreadExchangeStreamCaptureMode", C.cu_thread_exchange_stream_capture_mode(&m)); err != nil {
		return 0, err
	}
	return CaptureMode(m), nil
}

// MakeStream creates a stream in the current context.
func MakeStream(flags StreamFlags) (Stream, error) {
	if err := ensure(); err != nil {
		return Stream{}, err
	}
	var s Stream
	err := check("cuStreamCreate", C.cu_stream_create(&s.s, C.uint(flags)))
	return s, err
}

// Destroy destroys the stream (its pending work still runs) and zeroes it.
func (s *Stream) Destroy() error {
	if err := ensure(); err != nil {
		return err
	}
	err := check("cuStreamDestroy_v2", C.cu_stream_destroy(s.s))
	*s = Stream{}
	return err
}

// Synchronize waits for the stream's work.
func (s Stream) Synchronize() error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuStreamSynchronize", C.cu_stream_synchronize(s.s))
}

// Wait makes later work on s wait for ev's last record.
func (s Stream) Wait(ev Event, flags uint) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuStreamWaitEvent", C.cu_stream_wait_event(s.s, ev.ev, C.uint(flags)))
}

// Stream memory-operation flags (values from cuda.h).
const (
	WriteValueDefault = 0 // CU_STREAM_WRITE_VALUE_DEFAULT: ordered after earlier writes
	WaitValueGEQ      = 0 // CU_STREAM_WAIT_VALUE_GEQ: (int32)(*addr - value) >= 0
	WaitValueEQ       = 1 // CU_STREAM_WAIT_VALUE_EQ
)

// WriteValue32 enqueues a store of value to the 4-byte word at addr
// (cuStreamWriteValue32_v2: the v1 entry point answers NOT_SUPPORTED on
// recent drivers).
func (s Stream) WriteValue32(addr DevicePtr, value uint32, flags uint) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuStreamWriteValue32_v2", C.cu_stream_write_value32(s.s, C.CUdeviceptr(addr), C.uint32_t(value), C.uint(flags)))
}

// WaitOnValue32 makes later work on s wait until the word at addr
// satisfies flags' comparison with value (cuStreamWaitValue32_v2).
func (s Stream) WaitOnValue32(addr DevicePtr, value uint32, flags uint) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuStreamWaitValue32_v2", C.cu_stream_wait_value32(s.s, C.CUdeviceptr(addr), C.uint32_t(value), C.uint(flags)))
}

// Event is a CUDA event.
type Event struct{ ev C.CUevent }

// MakeEvent creates an event in the current context.
func MakeEvent(flags EventFlags) (Event, error) {
	if err := ensure(); err != nil {
		return Event{}, err
	}
	var e Event
	err := check("cuEventCreate", C.cu_event_create(&e.ev, C.uint(flags)))
	return e, err
}

// DestroyEvent destroys the event and zeroes it.
func DestroyEvent(e *Event) error {
	if err := ensure(); err != nil {
		return err
	}
	err := check("cuEventDestroy_v2", C.cu_event_destroy(e.ev))
	*e = Event{}
	return err
}

// Record captures the work enqueued on stream so far.
func (e Event) Record(stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuEventRecord", C.cu_event_record(e.ev, stream.s))
}

// Synchronize waits for the event's last record.
func (e Event) Synchronize() error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuEventSynchronize", C.cu_event_synchronize(e.ev))
}

// Elapsed is the time from e's record to end's, in milliseconds.
func (e Event) Elapsed(end Event) (float64, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var ms C.float
	err := check("cuEventElapsedTime", C.cu_event_elapsed_time(&ms, e.ev, end.ev))
	return float64(ms), err
}

// Done says whether the work the event last recorded has completed
// (cuEventQuery), without waiting for it.
func (e Event) Done() (bool, error) {
	if err := ensure(); err != nil {
		return false, err
	}
	r := C.cu_event_query(e.ev)
	if r == 600 { // CUDA_ERROR_NOT_READY
		return false, nil
	}
	return true, check("cuEventQuery", r)
}

//go:build cuda

package cudamem

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
)

// The driver calls beyond plain allocation that the backend and the GEMM
// pipelines make: IPC, stream memory operations, graph capture, mapped host
// words and device queries, all through cuda/cu (errors name the entry point and the
// driver's error).

// ipcHandleSize is the size of a CUipcMemHandle (64 bytes).
const ipcHandleSize = cu.IPCHandleSize

// ipcGet exports the allocation holding p as an IPC handle.
func ipcGet(p cu.DevicePtr) ([]byte, error) {
	h, err := cu.IpcGetMemHandle(p)
	if err != nil {
		return nil, err
	}
	return h[:], nil
}

// ipcOpen maps another process's allocation into this context. Lazy peer
// access: the driver enables access to the owning GPU on first use, so
// ranks need not call cuCtxEnablePeerAccess for each other.
func ipcOpen(h []byte) (cu.DevicePtr, error) {
	if len(h) != ipcHandleSize {
		return 0, fmt.Errorf("IPC handle of %d bytes, want %d", len(h), ipcHandleSize)
	}
	return cu.IpcOpenMemHandle([ipcHandleSize]byte(h), cu.IpcLazyEnablePeerAccess)
}

func ipcClose(p cu.DevicePtr) error { return cu.IpcCloseMemHandle(p) }

// WriteFlag enqueues on stream a store of v to the 4-byte word at addr (local
// or a peer's, mapped by IPC), after everything the stream wrote before it
// is visible: a producer's "chunk ready" signal. The _v2 entry point: the
// v1 one answers CUDA_ERROR_NOT_SUPPORTED on driver 580.
func WriteFlag(stream cu.Stream, addr cu.DevicePtr, v uint32) error {
	return stream.WriteValue32(addr, v, cu.WriteValueDefault)
}

// WaitFlag makes stream wait until the word at addr reaches v (wrap-safe
// int32 comparison, so epochs may wrap): a consumer waiting for an epoch,
// with no host involved. The wait has no bound (fail-stop: barrier.cuh),
// so it is only for words this rank's own work always sets, whatever its
// peers do (a kernel whose waits are bounded and which sets them anyway);
// a flag a peer sets needs a bounded wait in a kernel (kernels/gemm/gpu:
// gemm_util.cu's wait_flags).
func WaitFlag(stream cu.Stream, addr cu.DevicePtr, v uint32) error {
	return stream.WaitOnValue32(addr, v, cu.WaitValueGEQ)
}

// Graph is a captured, instantiated CUDA graph: a call's whole launch
// sequence, replayed with one launch.
type Graph = cu.Graph

// Capture records what enqueue puts on stream (and on the streams it forks
// from stream and joins back) into a graph, instead of running it. Relaxed
// mode, since library calls inside the capture (cuBLASLt) may make calls
// that are not captured.
func Capture(stream cu.Stream, enqueue func() error) (*Graph, error) {
	return capture(stream, cu.CaptureRelaxed, enqueue)
}

// CaptureLocal is Capture in thread-local mode, on a stream of the
// caller's own: only this thread's unsafe calls are refused meanwhile, so
// other threads of the process (torch's, another rank's) go on. cuBLASLt's
// calls capture in it, as under torch's own graphs.
func CaptureLocal(stream cu.Stream, enqueue func() error) (*Graph, error) {
	return capture(stream, cu.CaptureThreadLocal, enqueue)
}

// capture is Capture and CaptureLocal in the given mode.
func capture(stream cu.Stream, mode cu.CaptureMode, enqueue func() error) (*Graph, error) {
	if err := stream.BeginCapture(mode); err != nil {
		return nil, err
	}
	werr := enqueue()
	g, err := stream.EndCapture()
	if werr != nil {
		if g != nil {
			g.Destroy()
		}
		return nil, fmt.Errorf("capture: %w", werr)
	}
	if err != nil {
		return nil, fmt.Errorf("end capture and instantiate: %w", err)
	}
	return g, nil
}

// IsCapturing says whether stream is being captured into a graph (the
// caller's own capture, torch.cuda.graph's or torch.compile's): work
// enqueued on it then lands in that graph.
func IsCapturing(stream cu.Stream) (bool, error) { return stream.IsCapturing() }

// StreamOf is the cu.Stream of a raw CUstream handle another runtime made
// (torch's current stream, as torch.cuda.current_stream().cuda_stream).
func StreamOf(raw uint64) cu.Stream { return cu.StreamFromHandle(uintptr(raw)) }

// A HostWord is a u32 in pinned, mapped host memory: kernels of this
// context write it through Dev, the host reads it with Load, no copy or
// sync between them.
type HostWord struct {
	host unsafe.Pointer
	Dev  cu.DevicePtr
}

// NewHostWord allocates a zeroed word.
func NewHostWord() (*HostWord, error) {
	host, dev, err := cu.MemHostAllocMapped(4)
	if err != nil {
		return nil, fmt.Errorf("allocate a mapped host word: %w", err)
	}
	w := &HostWord{host: host, Dev: dev}
	w.Store(0)
	return w, nil
}

// Load reads the word.
func (w *HostWord) Load() uint32 { return atomic.LoadUint32((*uint32)(w.host)) }

// Store writes the word (while no kernel writes it).
func (w *HostWord) Store(v uint32) { atomic.StoreUint32((*uint32)(w.host), v) }

// Free releases the word.
func (w *HostWord) Free() error {
	if w == nil || w.host == nil {
		return nil
	}
	err := cu.MemFreeHost(w.host)
	w.host = nil
	return err
}

// driverVersion is cuDriverGetVersion as "13.0".
func driverVersion() (string, error) {
	v, err := cu.DriverVersion()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10), nil
}

func pciBusID(dev int) (string, error) { return cu.Device(dev).PCIBusID() }

// p2p reports whether src can access dst's memory and whether atomics
// between them are native (true over NVLink, false over most PCIe paths).
func p2p(src, dst int) (access, atomics bool, err error) {
	a, err := cu.Device(src).P2PAttribute(cu.P2PAccessSupported, cu.Device(dst))
	if err != nil {
		return false, false, err
	}
	n, err := cu.Device(src).P2PAttribute(cu.P2PNativeAtomicSupported, cu.Device(dst))
	if err != nil {
		return false, false, err
	}
	return a != 0, n != 0, nil
}

//go:build cuda

package cudamem

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
#include <string.h>

// CUDA IPC and a few device queries that gorgonia.org/cu v0.9.6 does not wrap.
static CUresult symm_ipc_get(void* out64, CUdeviceptr p) {
	CUipcMemHandle h;
	CUresult r = cuIpcGetMemHandle(&h, p);
	if (r == CUDA_SUCCESS) memcpy(out64, h.reserved, sizeof(h.reserved));
	return r;
}
static CUresult symm_ipc_open(CUdeviceptr* p, const void* in64) {
	CUipcMemHandle h;
	memcpy(h.reserved, in64, sizeof(h.reserved));
	// Lazy peer access: the driver enables access to the owning GPU on first
	// use, so ranks need not call cuCtxEnablePeerAccess for each other.
	return cuIpcOpenMemHandle(p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
}
static CUresult symm_ipc_close(CUdeviceptr p) { return cuIpcCloseMemHandle(p); }
static CUresult symm_driver_version(int* v) { return cuDriverGetVersion(v); }
static CUresult symm_pci_bus_id(char* buf, int len, int dev) { return cuDeviceGetPCIBusId(buf, len, (CUdevice)dev); }
static CUresult symm_p2p_attr(int* v, int attr, int src, int dst) {
	return cuDeviceGetP2PAttribute(v, (CUdevice_P2PAttribute)attr, (CUdevice)src, (CUdevice)dst);
}
static const char* symm_err_name(CUresult r) {
	const char* s = 0;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) return "unknown CUDA error";
	return s;
}
// Stream memory operations, _v2: the v1 entry points that cu wraps answer
// CUDA_ERROR_NOT_SUPPORTED on driver 580. The write is fenced (the default
// flags order it after every earlier write of the stream, remote ones
// included); the wait is (int32)(*addr - value) >= 0, so epochs may wrap.
static CUresult symm_write_flag(void* stream, CUdeviceptr addr, cuuint32_t v) {
	return cuStreamWriteValue32_v2((CUstream)stream, addr, v, CU_STREAM_WRITE_VALUE_DEFAULT);
}
static CUresult symm_wait_flag(void* stream, CUdeviceptr addr, cuuint32_t v) {
	return cuStreamWaitValue32_v2((CUstream)stream, addr, v, CU_STREAM_WAIT_VALUE_GEQ);
}
// Graph capture: relaxed mode, since library calls inside the capture
// (cuBLASLt) may make calls that are not captured.
static CUresult symm_capture_begin(void* stream) {
	return cuStreamBeginCapture((CUstream)stream, CU_STREAM_CAPTURE_MODE_RELAXED);
}
static CUresult symm_capture_end(void* stream, CUgraphExec* exec, CUgraph* graph) {
	*exec = 0;
	CUresult r = cuStreamEndCapture((CUstream)stream, graph);
	if (r != CUDA_SUCCESS) return r;
	return cuGraphInstantiateWithFlags(exec, *graph, 0);
}
static CUresult symm_graph_launch(CUgraphExec exec, void* stream) { return cuGraphLaunch(exec, (CUstream)stream); }
static CUresult symm_graph_destroy(CUgraphExec exec, CUgraph graph) {
	CUresult r = CUDA_SUCCESS;
	if (exec) r = cuGraphExecDestroy(exec);
	if (graph) { CUresult r2 = cuGraphDestroy(graph); if (r == CUDA_SUCCESS) r = r2; }
	return r;
}
// Thread-local capture: other threads' CUDA calls go on meanwhile (torch's
// own mode for its graphs, under which cuBLASLt's calls capture).
static CUresult symm_capture_begin_local(void* stream) {
	return cuStreamBeginCapture((CUstream)stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
}
static CUresult symm_is_capturing(void* stream, int* active) {
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUresult r = cuStreamIsCapturing((CUstream)stream, &st);
	*active = st != CU_STREAM_CAPTURE_STATUS_NONE;
	return r;
}
// A u32 of pinned host memory that kernels write through its device
// address (mapped): the host reads it without a copy or a sync.
static CUresult symm_host_word(void** host, CUdeviceptr* dev) {
	CUresult r = cuMemHostAlloc(host, 4, CU_MEMHOSTALLOC_DEVICEMAP);
	if (r != CUDA_SUCCESS) return r;
	memset(*host, 0, 4);
	return cuMemHostGetDevicePointer(dev, *host, 0);
}
static CUresult symm_host_free(void* host) { return cuMemFreeHost(host); }
static int symm_ipc_handle_size(void) { return (int)sizeof(((CUipcMemHandle*)0)->reserved); }
static int symm_p2p_access_supported(void) { return CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED; }
static int symm_p2p_native_atomic(void) { return CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED; }
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"gorgonia.org/cu"
)

// ipcHandleSize is the size of a CUipcMemHandle (64 bytes).
var ipcHandleSize = int(C.symm_ipc_handle_size())

func cuErr(what string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s (%d)", what, C.GoString(C.symm_err_name(r)), int(r))
}

// ipcGet exports the allocation holding p as an IPC handle.
func ipcGet(p cu.DevicePtr) ([]byte, error) {
	buf := make([]byte, ipcHandleSize)
	r := C.symm_ipc_get(unsafe.Pointer(&buf[0]), C.CUdeviceptr(p))
	if err := cuErr("cuIpcGetMemHandle", r); err != nil {
		return nil, err
	}
	return buf, nil
}

// ipcOpen maps another process's allocation into this context.
func ipcOpen(h []byte) (cu.DevicePtr, error) {
	if len(h) != ipcHandleSize {
		return 0, fmt.Errorf("IPC handle of %d bytes, want %d", len(h), ipcHandleSize)
	}
	var p C.CUdeviceptr
	r := C.symm_ipc_open(&p, unsafe.Pointer(&h[0]))
	if err := cuErr("cuIpcOpenMemHandle", r); err != nil {
		return 0, err
	}
	return cu.DevicePtr(p), nil
}

func ipcClose(p cu.DevicePtr) error {
	return cuErr("cuIpcCloseMemHandle", C.symm_ipc_close(C.CUdeviceptr(p)))
}

// WriteFlag enqueues on stream a store of v to the 4-byte word at addr (local
// or a peer's, mapped by IPC), after everything the stream wrote before it
// is visible: a producer's "chunk ready" signal.
func WriteFlag(stream cu.Stream, addr cu.DevicePtr, v uint32) error {
	return cuErr("cuStreamWriteValue32_v2", C.symm_write_flag(unsafe.Pointer(stream.C()), C.CUdeviceptr(addr), C.cuuint32_t(v)))
}

// WaitFlag makes stream wait until the word at addr reaches v (wrap-safe
// int32 comparison): a consumer waiting for an epoch, with no host involved.
func WaitFlag(stream cu.Stream, addr cu.DevicePtr, v uint32) error {
	return cuErr("cuStreamWaitValue32_v2", C.symm_wait_flag(unsafe.Pointer(stream.C()), C.CUdeviceptr(addr), C.cuuint32_t(v)))
}

// Graph is a captured, instantiated CUDA graph: a call's whole launch
// sequence, replayed with one launch.
type Graph struct {
	exec  C.CUgraphExec
	graph C.CUgraph
}

// Capture records what enqueue puts on stream (and on the streams it forks
// from stream and joins back) into a graph, instead of running it.
func Capture(stream cu.Stream, enqueue func() error) (*Graph, error) {
	s := unsafe.Pointer(stream.C())
	if err := cuErr("cuStreamBeginCapture", C.symm_capture_begin(s)); err != nil {
		return nil, err
	}
	werr := enqueue()
	g := &Graph{}
	r := C.symm_capture_end(s, &g.exec, &g.graph)
	if werr != nil {
		g.Destroy()
		return nil, fmt.Errorf("capture: %w", werr)
	}
	if err := cuErr("end capture and instantiate", r); err != nil {
		g.Destroy()
		return nil, err
	}
	return g, nil
}

// CaptureLocal is Capture in thread-local mode, on a stream of the
// caller's own: only this thread's unsafe calls are refused meanwhile, so
// other threads of the process (torch's, another rank's) go on.
func CaptureLocal(stream cu.Stream, enqueue func() error) (*Graph, error) {
	s := unsafe.Pointer(stream.C())
	if err := cuErr("cuStreamBeginCapture", C.symm_capture_begin_local(s)); err != nil {
		return nil, err
	}
	werr := enqueue()
	g := &Graph{}
	r := C.symm_capture_end(s, &g.exec, &g.graph)
	if werr != nil {
		g.Destroy()
		return nil, fmt.Errorf("capture: %w", werr)
	}
	if err := cuErr("end capture and instantiate", r); err != nil {
		g.Destroy()
		return nil, err
	}
	return g, nil
}

// IsCapturing says whether stream is being captured into a graph (the
// caller's own capture, torch.cuda.graph's or torch.compile's): work
// enqueued on it then lands in that graph.
func IsCapturing(stream cu.Stream) (bool, error) {
	var active C.int
	if err := cuErr("cuStreamIsCapturing", C.symm_is_capturing(unsafe.Pointer(stream.C()), &active)); err != nil {
		return false, err
	}
	return active != 0, nil
}

// StreamOf is the cu.Stream of a raw CUstream handle another runtime made
// (torch's current stream, as torch.cuda.current_stream().cuda_stream).
// cu.Stream holds the handle and nothing else.
func StreamOf(raw uint64) cu.Stream {
	h := uintptr(raw)
	return *(*cu.Stream)(unsafe.Pointer(&h))
}

// StreamOf's cast needs cu.Stream to be one handle: a constant index out
// of range otherwise.
var _ = [1]struct{}{}[unsafe.Sizeof(cu.Stream{})-unsafe.Sizeof(uintptr(0))]

// A HostWord is a u32 in pinned, mapped host memory: kernels of this
// context write it through Dev, the host reads it with Load, no copy or
// sync between them.
type HostWord struct {
	host unsafe.Pointer
	Dev  cu.DevicePtr
}

// NewHostWord allocates a zeroed word.
func NewHostWord() (*HostWord, error) {
	w := &HostWord{}
	var dev C.CUdeviceptr
	if err := cuErr("allocate a mapped host word", C.symm_host_word(&w.host, &dev)); err != nil {
		if w.host != nil {
			C.symm_host_free(w.host)
		}
		return nil, err
	}
	w.Dev = cu.DevicePtr(dev)
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
	err := cuErr("cuMemFreeHost", C.symm_host_free(w.host))
	w.host = nil
	return err
}

// Launch enqueues one replay of the graph on stream.
func (g *Graph) Launch(stream cu.Stream) error {
	return cuErr("cuGraphLaunch", C.symm_graph_launch(g.exec, unsafe.Pointer(stream.C())))
}

// Destroy frees the graph.
func (g *Graph) Destroy() error {
	err := cuErr("destroy graph", C.symm_graph_destroy(g.exec, g.graph))
	g.exec, g.graph = nil, nil
	return err
}

// driverVersion is cuDriverGetVersion as "13.0".
func driverVersion() (string, error) {
	var v C.int
	if err := cuErr("cuDriverGetVersion", C.symm_driver_version(&v)); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", int(v)/1000, int(v)%1000/10), nil
}

func pciBusID(dev int) (string, error) {
	buf := make([]byte, 64)
	r := C.symm_pci_bus_id((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)), C.int(dev))
	if err := cuErr("cuDeviceGetPCIBusId", r); err != nil {
		return "", err
	}
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0]))), nil
}

// p2p reports whether src can access dst's memory and whether atomics
// between them are native (true over NVLink, false over most PCIe paths).
func p2p(src, dst int) (access, atomics bool, err error) {
	var a, n C.int
	if err := cuErr("cuDeviceGetP2PAttribute(access)", C.symm_p2p_attr(&a, C.symm_p2p_access_supported(), C.int(src), C.int(dst))); err != nil {
		return false, false, err
	}
	if err := cuErr("cuDeviceGetP2PAttribute(atomics)", C.symm_p2p_attr(&n, C.symm_p2p_native_atomic(), C.int(src), C.int(dst))); err != nil {
		return false, false, err
	}
	return a != 0, n != 0, nil
}

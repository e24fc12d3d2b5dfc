package cu

/*
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Device is a device ordinal (the driver's CUdevice).
type Device int

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int

// The device attributes symmtune reads (values from cuda.h).
const (
	MultiprocessorCount    DeviceAttribute = 16
	ComputeCapabilityMajor DeviceAttribute = 75
	ComputeCapabilityMinor DeviceAttribute = 76
)

// P2PAttribute is a CUdevice_P2PAttribute.
type P2PAttribute int

// Peer-to-peer attributes (values from cuda.h).
const (
	P2PPerformanceRank       P2PAttribute = 1
	P2PAccessSupported       P2PAttribute = 2
	P2PNativeAtomicSupported P2PAttribute = 3
)

// ContextFlags are cuCtxCreate's flags.
type ContextFlags byte

// SchedAuto is CU_CTX_SCHED_AUTO: the driver picks spinning or yielding.
const SchedAuto ContextFlags = 0

// CUContext is a CUDA context.
type CUContext struct{ ctx C.CUcontext }

func (ctx CUContext) String() string { return fmt.Sprintf("0x%x", uintptr(unsafe.Pointer(ctx.ctx))) }

// NumDevices is the number of visible devices.
func NumDevices() (int, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var n C.int
	err := check("cuDeviceGetCount", C.cu_device_get_count(&n))
	return int(n), err
}

// Name is the device's product name.
func (d Device) Name() (string, error) {
	if err := ensure(); err != nil {
		return "", err
	}
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.cu_device_get_name(&buf[0], C.int(len(buf)), C.CUdevice(d))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// Attribute reads one device attribute.
func (d Device) Attribute(attrib DeviceAttribute) (int, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var v C.int
	err := check("cuDeviceGetAttribute", C.cu_device_get_attribute(&v, C.int(attrib), C.CUdevice(d)))
	return int(v), err
}

// Attributes reads several device attributes, in order.
func (d Device) Attributes(attrs ...DeviceAttribute) ([]int, error) {
	if len(attrs) == 0 {
		return nil, nil
	}
	out := make([]int, len(attrs))
	for i, a := range attrs {
		v, err := d.Attribute(a)
		if err != nil {
			return out, fmt.Errorf("device attribute %d: %w", int(a), err)
		}
		out[i] = v
	}
	return out, nil
}

// TotalMem is the device's memory in bytes.
func (d Device) TotalMem() (int64, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var n C.size_t
	err := check("cuDeviceTotalMem_v2", C.cu_device_total_mem(&n, C.CUdevice(d)))
	return int64(n), err
}

// PCIBusID is the device's PCI bus id ("0000:1b:00.0").
func (d Device) PCIBusID() (string, error) {
	if err := ensure(); err != nil {
		return "", err
	}
	var buf [64]C.char
	if err := check("cuDeviceGetPCIBusId", C.cu_device_get_pci_bus_id(&buf[0], C.int(len(buf)), C.CUdevice(d))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// P2PAttribute reads a peer-to-peer attribute of the link from d to dst.
func (d Device) P2PAttribute(attrib P2PAttribute, dst Device) (int, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var v C.int
	err := check("cuDeviceGetP2PAttribute", C.cu_device_get_p2p_attribute(&v, C.int(attrib), C.CUdevice(d), C.CUdevice(dst)))
	return int(v), err
}

// MakeContext creates a context on d and makes it current on this thread.
func (d Device) MakeContext(flags ContextFlags) (CUContext, error) {
	if err := ensure(); err != nil {
		return CUContext{}, err
	}
	var ctx CUContext
	err := check("cuCtxCreate_v2", C.cu_ctx_create(&ctx.ctx, C.uint(flags), C.CUdevice(d)))
	return ctx, err
}

// RetainPrimaryCtx retains d's primary context (the one the CUDA runtime,
// and so torch, uses); it does not make it current.
func (d Device) RetainPrimaryCtx() (CUContext, error) {
	if err := ensure(); err != nil {
		return CUContext{}, err
	}
	var ctx CUContext
	err := check("cuDevicePrimaryCtxRetain", C.cu_primary_ctx_retain(&ctx.ctx, C.CUdevice(d)))
	return ctx, err
}

// ReleasePrimaryCtx releases a reference RetainPrimaryCtx took.
func (d Device) ReleasePrimaryCtx() error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuDevicePrimaryCtxRelease_v2", C.cu_primary_ctx_release(C.CUdevice(d)))
}

// SetCurrentContext binds ctx to the calling OS thread.
func SetCurrentContext(ctx CUContext) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuCtxSetCurrent", C.cu_ctx_set_current(ctx.ctx))
}

// EnablePeerAccess lets the current context's kernels and copies address
// peer's memory directly (cuCtxEnablePeerAccess); already enabled is no
// error.
func EnablePeerAccess(peer CUContext) error {
	if err := ensure(); err != nil {
		return err
	}
	const alreadyEnabled = 704 // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
	if r := C.cu_ctx_enable_peer_access(peer.ctx, 0); r != alreadyEnabled {
		return check("cuCtxEnablePeerAccess", r)
	}
	return nil
}

// CurrentContext is the context bound to the calling OS thread (zero if
// none).
func CurrentContext() (CUContext, error) {
	if err := ensure(); err != nil {
		return CUContext{}, err
	}
	var ctx CUContext
	err := check("cuCtxGetCurrent", C.cu_ctx_get_current(&ctx.ctx))
	return ctx, err
}

// CurrentDevice is the device of the current context (an error when the
// calling thread has none).
func CurrentDevice() (Device, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var d C.CUdevice
	err := check("cuCtxGetDevice", C.cu_ctx_get_device(&d))
	return Device(d), err
}

// Synchronize waits for all work of the current context.
func Synchronize() error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.cu_ctx_synchronize())
}

// ProfilerStart opens the current context's profiled range: a profiler
// started with profiling off until then (Nsight Compute's
// --profile-from-start off) profiles the kernels launched until
// ProfilerStop. Without a profiler attached both do nothing.
func ProfilerStart() error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuProfilerStart", C.cu_profiler_start())
}

// ProfilerStop closes the range ProfilerStart opened.
func ProfilerStop() error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuProfilerStop", C.cu_profiler_stop())
}

// DriverVersion is cuDriverGetVersion's number, e.g. 13000 for CUDA 13.0.
func DriverVersion() (int, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var v C.int
	err := check("cuDriverGetVersion", C.cu_driver_get_version(&v))
	return int(v), err
}

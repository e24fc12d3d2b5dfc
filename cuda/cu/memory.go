package cu

/*
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// DevicePtr is a device address (the driver's CUdeviceptr).
type DevicePtr uintptr

func (d DevicePtr) String() string { return fmt.Sprintf("0x%x", uintptr(d)) }

// Uintptr is the address as a number.
func (d DevicePtr) Uintptr() uintptr { return uintptr(d) }

// MemAlloc allocates bytesize bytes in the current context.
func MemAlloc(bytesize int64) (DevicePtr, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var p C.CUdeviceptr
	err := check("cuMemAlloc_v2", C.cu_mem_alloc(&p, C.size_t(bytesize)))
	return DevicePtr(p), err
}

// MemFree frees what MemAlloc allocated.
func MemFree(dptr DevicePtr) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemFree_v2", C.cu_mem_free(C.CUdeviceptr(dptr)))
}

// MemcpyHtoD copies byteCount bytes from host memory (holding no Go
// pointers) to the device, synchronously.
func MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, byteCount int64) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemcpyHtoD_v2", C.cu_memcpy_htod(C.CUdeviceptr(dst), src, C.size_t(byteCount)))
}

// MemcpyDtoH copies byteCount bytes from the device to host memory,
// synchronously.
func MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, byteCount int64) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemcpyDtoH_v2", C.cu_memcpy_dtoh(dst, C.CUdeviceptr(src), C.size_t(byteCount)))
}

// MemcpyDtoDAsync enqueues a device-to-device copy on stream (also between
// GPUs, for memory mapped by IPC).
func MemcpyDtoDAsync(dst, src DevicePtr, byteCount int64, stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemcpyDtoDAsync_v2", C.cu_memcpy_dtod_async(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(byteCount), stream.s))
}

// MemsetD8 sets n bytes to v, synchronously.
func MemsetD8(dst DevicePtr, v byte, n int64) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemsetD8_v2", C.cu_memset_d8(C.CUdeviceptr(dst), C.uchar(v), C.size_t(n)))
}

// MemsetD32 sets n 4-byte words to v, synchronously.
func MemsetD32(dst DevicePtr, v uint32, n int64) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemsetD32_v2", C.cu_memset_d32(C.CUdeviceptr(dst), C.uint(v), C.size_t(n)))
}

// MemsetD8Async enqueues setting n bytes to v on stream.
func MemsetD8Async(dst DevicePtr, v byte, n int64, stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemsetD8Async", C.cu_memset_d8_async(C.CUdeviceptr(dst), C.uchar(v), C.size_t(n), stream.s))
}

// MemsetD16Async enqueues setting n 2-byte words to v on stream.
func MemsetD16Async(dst DevicePtr, v uint16, n int64, stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemsetD16Async", C.cu_memset_d16_async(C.CUdeviceptr(dst), C.ushort(v), C.size_t(n), stream.s))
}

// MemsetD32Async enqueues setting n 4-byte words to v on stream (v is a
// uint, as in gorgonia.org/cu; only its low 32 bits are used).
func MemsetD32Async(dst DevicePtr, v uint, n int64, stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemsetD32Async", C.cu_memset_d32_async(C.CUdeviceptr(dst), C.uint(v), C.size_t(n), stream.s))
}

// IPCHandleSize is the size of a CUipcMemHandle.
const IPCHandleSize = 64

// IpcLazyEnablePeerAccess is CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: the driver
// enables access to the owning GPU on first use.
const IpcLazyEnablePeerAccess = 1

// IpcGetMemHandle exports the allocation holding p for other processes.
func IpcGetMemHandle(p DevicePtr) ([IPCHandleSize]byte, error) {
	var h [IPCHandleSize]byte
	if err := ensure(); err != nil {
		return h, err
	}
	err := check("cuIpcGetMemHandle", C.cu_ipc_get_mem_handle(unsafe.Pointer(&h[0]), C.CUdeviceptr(p)))
	return h, err
}

// IpcOpenMemHandle maps another process's exported allocation into the
// current context.
func IpcOpenMemHandle(h [IPCHandleSize]byte, flags uint) (DevicePtr, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var p C.CUdeviceptr
	err := check("cuIpcOpenMemHandle_v2", C.cu_ipc_open_mem_handle(&p, unsafe.Pointer(&h[0]), C.uint(flags)))
	return DevicePtr(p), err
}

// IpcCloseMemHandle unmaps what IpcOpenMemHandle mapped.
func IpcCloseMemHandle(p DevicePtr) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuIpcCloseMemHandle", C.cu_ipc_close_mem_handle(C.CUdeviceptr(p)))
}

// memHostAllocDeviceMap is CU_MEMHOSTALLOC_DEVICEMAP.
const memHostAllocDeviceMap = 0x02

// MemHostAllocMapped allocates bytes of pinned host memory mapped into the
// current context: the host address, and the address kernels use for it.
func MemHostAllocMapped(bytes int64) (unsafe.Pointer, DevicePtr, error) {
	if err := ensure(); err != nil {
		return nil, 0, err
	}
	var host unsafe.Pointer
	if err := check("cuMemHostAlloc", C.cu_mem_host_alloc(&host, C.size_t(bytes), memHostAllocDeviceMap)); err != nil {
		return nil, 0, err
	}
	var dev C.CUdeviceptr
	if err := check("cuMemHostGetDevicePointer_v2", C.cu_mem_host_get_device_pointer(&dev, host, 0)); err != nil {
		C.cu_mem_free_host(host)
		return nil, 0, err
	}
	return host, DevicePtr(dev), nil
}

// MemFreeHost frees what MemHostAllocMapped allocated.
func MemFreeHost(p unsafe.Pointer) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemFreeHost", C.cu_mem_free_host(p))
}

// MemGetInfo is the device's free and total memory, as the driver counts
// it (every process and allocator on the GPU).
func MemGetInfo() (free, total int64, err error) {
	if err := ensure(); err != nil {
		return 0, 0, err
	}
	var f, t C.size_t
	if err := check("cuMemGetInfo_v2", C.cu_mem_get_info(&f, &t)); err != nil {
		return 0, 0, err
	}
	return int64(f), int64(t), nil
}

// MemAllocAsync allocates bytesize bytes from the device's default memory
// pool, ordered on stream: no device synchronization, unlike MemAlloc.
func MemAllocAsync(bytesize int64, stream Stream) (DevicePtr, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var p C.CUdeviceptr
	err := check("cuMemAllocAsync", C.cu_mem_alloc_async(&p, C.size_t(bytesize), stream.s))
	return DevicePtr(p), err
}

// MemFreeAsync frees what MemAllocAsync allocated once the work enqueued on
// stream before it is done: no device synchronization, unlike MemFree.
func MemFreeAsync(p DevicePtr, stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemFreeAsync", C.cu_mem_free_async(C.CUdeviceptr(p), stream.s))
}

// MemcpyHtoDAsync copies byteCount bytes from host memory to the device,
// ordered on stream. From pageable memory it returns once src has been
// read, so src may be reused at once.
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, byteCount int64, stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuMemcpyHtoDAsync_v2", C.cu_memcpy_htod_async(C.CUdeviceptr(dst), src, C.size_t(byteCount), stream.s))
}

// MemPool is a stream-ordered memory pool of device memory of one
// process's own (cuMemPoolCreate), apart from the device's default pool:
// what its allocations reserve can be read (ReservedBytes) and is the
// pool owner's alone.
type MemPool struct{ p C.CUmemoryPool }

// The pool attributes MemPool sets and reads (CUmemPool_attribute).
const (
	PoolReuseFollowEventDependencies   = 1
	PoolReuseAllowOpportunistic        = 2
	PoolReuseAllowInternalDependencies = 3
	PoolReleaseThreshold               = 4
	PoolReservedMemCurrent             = 5
	PoolUsedMemCurrent                 = 7
)

// MemPoolCreate makes a pool of device memory on device ordinal.
func MemPoolCreate(ordinal int) (MemPool, error) {
	if err := ensure(); err != nil {
		return MemPool{}, err
	}
	var p C.CUmemoryPool
	err := check("cuMemPoolCreate", C.cu_mem_pool_create(&p, C.int(ordinal)))
	return MemPool{p}, err
}

// Destroy destroys the pool; memory still allocated from it is freed
// when freed (cuMemPoolDestroy).
func (m MemPool) Destroy() error {
	if m.p == nil {
		return nil
	}
	return check("cuMemPoolDestroy", C.cu_mem_pool_destroy(m.p))
}

// Set sets attribute attr (a reuse policy: 0 or 1; the release
// threshold: bytes).
func (m MemPool) Set(attr int, value uint64) error {
	return check("cuMemPoolSetAttribute", C.cu_mem_pool_set_attribute(m.p, C.int(attr), C.ulonglong(value)))
}

// Bytes reads a byte count of the pool (PoolReservedMemCurrent: the
// device memory it holds; PoolUsedMemCurrent: that of live allocations).
func (m MemPool) Bytes(attr int) (int64, error) {
	var v C.ulonglong
	err := check("cuMemPoolGetAttribute", C.cu_mem_pool_get_attribute(m.p, C.int(attr), &v))
	return int64(v), err
}

// AllocAsync allocates bytesize bytes from the pool, ordered on stream
// (free with MemFreeAsync).
func (m MemPool) AllocAsync(bytesize int64, stream Stream) (DevicePtr, error) {
	var p C.CUdeviceptr
	err := check("cuMemAllocFromPoolAsync", C.cu_mem_alloc_from_pool_async(&p, C.size_t(bytesize), m.p, stream.s))
	return DevicePtr(p), err
}

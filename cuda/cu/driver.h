// driver.h: the CUDA driver entry points symmtune calls, declared here
// rather than through cuda.h (see doc.go), and the table that driver.c
// fills with dlopen/dlsym. Types mirror cuda.h's; enums are passed as int.
#ifndef SYMMTUNE_CU_DRIVER_H
#define SYMMTUNE_CU_DRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUevent;
typedef void* CUmodule;
typedef void* CUfunction;
typedef void* CUgraph;
typedef void* CUgraphExec;
typedef void* CUmemoryPool;

// CU_MISSING is returned by a call whose entry point the loaded driver does
// not export; it is no CUresult (those are small non-negative numbers).
#define CU_MISSING (-1)

// CU_SYMBOLS lists every entry point as X(id, exported name). The names are
// the versioned ones cuda.h (CUDA 12/13) maps the plain names to, so the ABI
// each call assumes is the one the name pins.
#define CU_SYMBOLS(X) \
	X(init, "cuInit") \
	X(driverGetVersion, "cuDriverGetVersion") \
	X(getErrorName, "cuGetErrorName") \
	X(getErrorString, "cuGetErrorString") \
	X(deviceGetCount, "cuDeviceGetCount") \
	X(deviceGetName, "cuDeviceGetName") \
	X(deviceGetAttribute, "cuDeviceGetAttribute") \
	X(deviceTotalMem, "cuDeviceTotalMem_v2") \
	X(deviceGetPCIBusId, "cuDeviceGetPCIBusId") \
	X(deviceGetP2PAttribute, "cuDeviceGetP2PAttribute") \
	X(primaryCtxRetain, "cuDevicePrimaryCtxRetain") \
	X(primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") \
	X(ctxCreate, "cuCtxCreate_v2") \
	X(ctxSetCurrent, "cuCtxSetCurrent") \
	X(ctxGetCurrent, "cuCtxGetCurrent") \
	X(ctxSynchronize, "cuCtxSynchronize") \
	X(memAlloc, "cuMemAlloc_v2") \
	X(memFree, "cuMemFree_v2") \
	X(memcpyHtoD, "cuMemcpyHtoD_v2") \
	X(memcpyDtoH, "cuMemcpyDtoH_v2") \
	X(memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") \
	X(memsetD8, "cuMemsetD8_v2") \
	X(memsetD32, "cuMemsetD32_v2") \
	X(memsetD8Async, "cuMemsetD8Async") \
	X(memsetD16Async, "cuMemsetD16Async") \
	X(memsetD32Async, "cuMemsetD32Async") \
	X(ipcGetMemHandle, "cuIpcGetMemHandle") \
	X(ipcOpenMemHandle, "cuIpcOpenMemHandle_v2") \
	X(ipcCloseMemHandle, "cuIpcCloseMemHandle") \
	X(streamCreate, "cuStreamCreate") \
	X(streamDestroy, "cuStreamDestroy_v2") \
	X(streamSynchronize, "cuStreamSynchronize") \
	X(streamWaitEvent, "cuStreamWaitEvent") \
	X(streamWriteValue32, "cuStreamWriteValue32_v2") \
	X(streamWaitValue32, "cuStreamWaitValue32_v2") \
	X(eventCreate, "cuEventCreate") \
	X(eventDestroy, "cuEventDestroy_v2") \
	X(eventRecord, "cuEventRecord") \
	X(eventSynchronize, "cuEventSynchronize") \
	X(eventElapsedTime, "cuEventElapsedTime") \
	X(moduleLoadData, "cuModuleLoadData") \
	X(moduleUnload, "cuModuleUnload") \
	X(moduleGetFunction, "cuModuleGetFunction") \
	X(funcGetAttribute, "cuFuncGetAttribute") \
	X(funcSetAttribute, "cuFuncSetAttribute") \
	X(launchKernel, "cuLaunchKernel") \
	X(launchKernelEx, "cuLaunchKernelEx") \
	X(occupancyMaxActiveBlocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor") \
	X(occupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters") \
	X(tensorMapEncodeTiled, "cuTensorMapEncodeTiled") \
	X(streamBeginCapture, "cuStreamBeginCapture_v2") \
	X(streamEndCapture, "cuStreamEndCapture") \
	X(graphInstantiateWithFlags, "cuGraphInstantiateWithFlags") \
	X(graphLaunch, "cuGraphLaunch") \
	X(graphExecDestroy, "cuGraphExecDestroy") \
	X(graphDestroy, "cuGraphDestroy") \
	X(streamIsCapturing, "cuStreamIsCapturing") \
	X(threadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode") \
	X(memHostAlloc, "cuMemHostAlloc") \
	X(memHostGetDevicePointer, "cuMemHostGetDevicePointer_v2") \
	X(memFreeHost, "cuMemFreeHost") \
	X(ctxGetDevice, "cuCtxGetDevice") \
	X(ctxEnablePeerAccess, "cuCtxEnablePeerAccess") \
	X(memGetInfo, "cuMemGetInfo_v2") \
	X(memAllocAsync, "cuMemAllocAsync") \
	X(memFreeAsync, "cuMemFreeAsync") \
	X(memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") \
	X(eventQuery, "cuEventQuery") \
	X(streamGetCaptureInfo, "cuStreamGetCaptureInfo_v2") \
	X(userObjectCreate, "cuUserObjectCreate") \
	X(userObjectRelease, "cuUserObjectRelease") \
	X(graphRetainUserObject, "cuGraphRetainUserObject") \
	X(memPoolCreate, "cuMemPoolCreate") \
	X(memPoolDestroy, "cuMemPoolDestroy") \
	X(memPoolSetAttribute, "cuMemPoolSetAttribute") \
	X(memPoolGetAttribute, "cuMemPoolGetAttribute") \
	X(memAllocFromPoolAsync, "cuMemAllocFromPoolAsync") \
	X(profilerStart, "cuProfilerStart") \
	X(profilerStop, "cuProfilerStop")

#define CU_ENUM(id, name) CU_FN_##id,
enum { CU_SYMBOLS(CU_ENUM) CU_FN_COUNT };
#undef CU_ENUM

// cu_symbol_name is the exported name of entry point i.
const char* cu_symbol_name(int i);
// cu_open loads lib and resolves every entry point: 0 on success, 1 when
// dlopen fails (cu_dlerror says why). Missing entry points stay NULL and
// their calls answer CU_MISSING.
int cu_open(const char* lib);
const char* cu_dlerror(void);
// cu_has reports whether entry point i was resolved.
int cu_has(int i);

// Calls, one per entry point, with cuda.h's parameters.
CUresult cu_init(unsigned flags);
CUresult cu_driver_get_version(int* v);
CUresult cu_get_error_name(CUresult r, const char** s);
CUresult cu_get_error_string(CUresult r, const char** s);
CUresult cu_device_get_count(int* n);
CUresult cu_device_get_name(char* buf, int len, CUdevice d);
CUresult cu_device_get_attribute(int* v, int attr, CUdevice d);
CUresult cu_device_total_mem(size_t* bytes, CUdevice d);
CUresult cu_device_get_pci_bus_id(char* buf, int len, CUdevice d);
CUresult cu_device_get_p2p_attribute(int* v, int attr, CUdevice src, CUdevice dst);
CUresult cu_primary_ctx_retain(CUcontext* c, CUdevice d);
CUresult cu_primary_ctx_release(CUdevice d);
CUresult cu_ctx_create(CUcontext* c, unsigned flags, CUdevice d);
CUresult cu_ctx_set_current(CUcontext c);
CUresult cu_ctx_get_current(CUcontext* c);
CUresult cu_ctx_synchronize(void);
CUresult cu_profiler_start(void);
CUresult cu_profiler_stop(void);
CUresult cu_mem_alloc(CUdeviceptr* p, size_t n);
CUresult cu_mem_free(CUdeviceptr p);
CUresult cu_memcpy_htod(CUdeviceptr dst, const void* src, size_t n);
CUresult cu_memcpy_dtoh(void* dst, CUdeviceptr src, size_t n);
CUresult cu_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cu_memset_d8(CUdeviceptr p, unsigned char v, size_t n);
CUresult cu_memset_d32(CUdeviceptr p, unsigned v, size_t n);
CUresult cu_memset_d8_async(CUdeviceptr p, unsigned char v, size_t n, CUstream s);
CUresult cu_memset_d16_async(CUdeviceptr p, unsigned short v, size_t n, CUstream s);
CUresult cu_memset_d32_async(CUdeviceptr p, unsigned v, size_t n, CUstream s);
CUresult cu_ipc_get_mem_handle(void* out64, CUdeviceptr p);
CUresult cu_ipc_open_mem_handle(CUdeviceptr* p, const void* in64, unsigned flags);
CUresult cu_ipc_close_mem_handle(CUdeviceptr p);
CUresult cu_stream_create(CUstream* s, unsigned flags);
CUresult cu_stream_destroy(CUstream s);
CUresult cu_stream_synchronize(CUstream s);
CUresult cu_stream_wait_event(CUstream s, CUevent e, unsigned flags);
CUresult cu_stream_write_value32(CUstream s, CUdeviceptr addr, uint32_t v, unsigned flags);
CUresult cu_stream_wait_value32(CUstream s, CUdeviceptr addr, uint32_t v, unsigned flags);
CUresult cu_event_create(CUevent* e, unsigned flags);
CUresult cu_event_destroy(CUevent e);
CUresult cu_event_record(CUevent e, CUstream s);
CUresult cu_event_synchronize(CUevent e);
CUresult cu_event_elapsed_time(float* ms, CUevent start, CUevent end);
CUresult cu_module_load_data(CUmodule* m, const void* image);
CUresult cu_module_unload(CUmodule m);
CUresult cu_module_get_function(CUfunction* f, CUmodule m, const char* name);
CUresult cu_func_get_attribute(int* v, int attr, CUfunction f);
CUresult cu_func_set_attribute(CUfunction f, int attr, int v);
// cu_launch_values launches f with n parameters of 8 bytes each, taken from
// vals (n <= CU_MAX_PARAMS).
CUresult cu_launch_values(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	unsigned bz, unsigned smem, CUstream s, const uint64_t* vals, int n);
// cu_launch_blob launches f with n parameters, parameter i at blob+offsets[i].
CUresult cu_launch_blob(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	unsigned bz, unsigned smem, CUstream s, const char* blob, const size_t* offsets, int n);
// cu_launch_values_dependent is cu_launch_values through cuLaunchKernelEx
// with programmatic stream serialization allowed (see
// Function.LaunchDependent).
CUresult cu_launch_values_dependent(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	unsigned bz, unsigned smem, CUstream s, const uint64_t* vals, int n);
// cu_launch_blob_dependent is cu_launch_blob through cuLaunchKernelEx as
// the programmatic dependent of the kernel before it on s.
CUresult cu_launch_blob_dependent(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	unsigned bz, unsigned smem, CUstream s, const char* blob, const size_t* offsets, int n);
#define CU_MAX_PARAMS 64
CUresult cu_occupancy_max_active_blocks(int* out, CUfunction f, int block, size_t smem);
CUresult cu_occupancy_max_active_clusters(int* out, CUfunction f, unsigned grid, unsigned block, unsigned smem);
CUresult cu_tensor_map_encode_tiled(void* out128, int dtype, unsigned rank, CUdeviceptr addr, const uint64_t* dims,
	const uint64_t* strides, const uint32_t* box, const uint32_t* estrides, int interleave, int swizzle,
	int l2promotion, int oobfill);
CUresult cu_stream_begin_capture(CUstream s, int mode);
CUresult cu_stream_end_capture(CUstream s, CUgraph* g);
CUresult cu_graph_instantiate(CUgraphExec* e, CUgraph g, unsigned long long flags);
CUresult cu_graph_launch(CUgraphExec e, CUstream s);
CUresult cu_graph_exec_destroy(CUgraphExec e);
CUresult cu_graph_destroy(CUgraph g);
CUresult cu_stream_is_capturing(CUstream s, int* status);
CUresult cu_thread_exchange_stream_capture_mode(int* mode);
CUresult cu_mem_host_alloc(void** p, size_t n, unsigned flags);
CUresult cu_mem_host_get_device_pointer(CUdeviceptr* d, void* p, unsigned flags);
CUresult cu_mem_free_host(void* p);
CUresult cu_ctx_get_device(CUdevice* d);
CUresult cu_ctx_enable_peer_access(CUcontext peer, unsigned flags);
CUresult cu_mem_get_info(size_t* free_bytes, size_t* total_bytes);
CUresult cu_mem_alloc_async(CUdeviceptr* p, size_t n, CUstream s);
CUresult cu_mem_free_async(CUdeviceptr p, CUstream s);
CUresult cu_memcpy_htod_async(CUdeviceptr dst, const void* src, size_t n, CUstream s);
CUresult cu_event_query(CUevent e);
// cu_mem_pool_create makes a memory pool of device memory on device
// ordinal, not shareable with other processes.
CUresult cu_mem_pool_create(CUmemoryPool* pool, int ordinal);
CUresult cu_mem_pool_destroy(CUmemoryPool pool);
// The pool's attributes (CUmemPool_attribute): set takes the reuse
// policies (1-3, an int) and the release threshold (4, a cuuint64_t)
// through a 64-bit value; get reads the byte counts (4-8) only.
CUresult cu_mem_pool_set_attribute(CUmemoryPool pool, int attr, unsigned long long value);
CUresult cu_mem_pool_get_attribute(CUmemoryPool pool, int attr, unsigned long long* value);
CUresult cu_mem_alloc_from_pool_async(CUdeviceptr* p, size_t n, CUmemoryPool pool, CUstream s);
// cu_stream_capture_graph: the capture status of s (0 none, 1 active, 2
// invalidated), and while active its sequence id and the graph being built.
CUresult cu_stream_capture_graph(CUstream s, int* status, unsigned long long* id, CUgraph* g);
// cu_graph_hold_counter makes a user object whose destructor adds -1 to
// *counter (atomically, on the driver's thread: no CUDA call, no Go) and
// moves its one reference to graph g: the destructor runs once g and every
// executable graph made from it are destroyed and their launches done.
CUresult cu_graph_hold_counter(CUgraph g, int* counter);

#endif

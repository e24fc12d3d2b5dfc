// driver.c: loads the CUDA driver with dlopen and forwards each call through
// the table of entry points it resolves (driver.h lists them).
#include <dlfcn.h>
#include <string.h>
#include "driver.h"

#define CU_NAME(id, name) name,
static const char* const cu_names[CU_FN_COUNT] = { CU_SYMBOLS(CU_NAME) };
#undef CU_NAME

static void* cu_fn[CU_FN_COUNT];
static char cu_dlerr[512];

const char* cu_symbol_name(int i) { return i >= 0 && i < CU_FN_COUNT ? cu_names[i] : ""; }
const char* cu_dlerror(void) { return cu_dlerr; }
int cu_has(int i) { return i >= 0 && i < CU_FN_COUNT && cu_fn[i] != 0; }

int cu_open(const char* lib) {
	void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char* e = dlerror();
		strncpy(cu_dlerr, e ? e : "dlopen failed", sizeof cu_dlerr - 1);
		return 1;
	}
	for (int i = 0; i < CU_FN_COUNT; i++) cu_fn[i] = dlsym(h, cu_names[i]);
	return 0;
}

// CU_CALL forwards to entry point id with the given C signature, or answers
// CU_MISSING when the driver lacks it.
#define CU_CALL(id, sig, ...) do { \
	void* cu_entry_ = cu_fn[CU_FN_##id]; \
	if (!cu_entry_) return CU_MISSING; \
	return ((CUresult(*) sig)cu_entry_)(__VA_ARGS__); \
} while (0)

CUresult cu_init(unsigned flags) { CU_CALL(init, (unsigned), flags); }
CUresult cu_driver_get_version(int* v) { CU_CALL(driverGetVersion, (int*), v); }
CUresult cu_get_error_name(CUresult r, const char** s) { CU_CALL(getErrorName, (CUresult, const char**), r, s); }
CUresult cu_get_error_string(CUresult r, const char** s) { CU_CALL(getErrorString, (CUresult, const char**), r, s); }
CUresult cu_device_get_count(int* n) { CU_CALL(deviceGetCount, (int*), n); }
CUresult cu_device_get_name(char* buf, int len, CUdevice d) { CU_CALL(deviceGetName, (char*, int, CUdevice), buf, len, d); }
CUresult cu_device_get_attribute(int* v, int attr, CUdevice d) { CU_CALL(deviceGetAttribute, (int*, int, CUdevice), v, attr, d); }
CUresult cu_device_total_mem(size_t* bytes, CUdevice d) { CU_CALL(deviceTotalMem, (size_t*, CUdevice), bytes, d); }
CUresult cu_device_get_pci_bus_id(char* buf, int len, CUdevice d) { CU_CALL(deviceGetPCIBusId, (char*, int, CUdevice), buf, len, d); }
CUresult cu_device_get_p2p_attribute(int* v, int attr, CUdevice src, CUdevice dst) {
	CU_CALL(deviceGetP2PAttribute, (int*, int, CUdevice, CUdevice), v, attr, src, dst);
}
CUresult cu_primary_ctx_retain(CUcontext* c, CUdevice d) { CU_CALL(primaryCtxRetain, (CUcontext*, CUdevice), c, d); }
CUresult cu_primary_ctx_release(CUdevice d) { CU_CALL(primaryCtxRelease, (CUdevice), d); }
CUresult cu_ctx_create(CUcontext* c, unsigned flags, CUdevice d) { CU_CALL(ctxCreate, (CUcontext*, unsigned, CUdevice), c, flags, d); }
CUresult cu_ctx_set_current(CUcontext c) { CU_CALL(ctxSetCurrent, (CUcontext), c); }
CUresult cu_ctx_get_current(CUcontext* c) { CU_CALL(ctxGetCurrent, (CUcontext*), c); }
CUresult cu_ctx_synchronize(void) {
	void* p = cu_fn[CU_FN_ctxSynchronize];
	return p ? ((CUresult(*)(void))p)() : CU_MISSING;
}
CUresult cu_profiler_start(void) {
	void* p = cu_fn[CU_FN_profilerStart];
	return p ? ((CUresult(*)(void))p)() : CU_MISSING;
}
CUresult cu_profiler_stop(void) {
	void* p = cu_fn[CU_FN_profilerStop];
	return p ? ((CUresult(*)(void))p)() : CU_MISSING;
}

CUresult cu_mem_alloc(CUdeviceptr* p, size_t n) { CU_CALL(memAlloc, (CUdeviceptr*, size_t), p, n); }
CUresult cu_mem_free(CUdeviceptr p) { CU_CALL(memFree, (CUdeviceptr), p); }
CUresult cu_memcpy_htod(CUdeviceptr dst, const void* src, size_t n) { CU_CALL(memcpyHtoD, (CUdeviceptr, const void*, size_t), dst, src, n); }
CUresult cu_memcpy_dtoh(void* dst, CUdeviceptr src, size_t n) { CU_CALL(memcpyDtoH, (void*, CUdeviceptr, size_t), dst, src, n); }
CUresult cu_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
	CU_CALL(memcpyDtoDAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream), dst, src, n, s);
}
CUresult cu_memset_d8(CUdeviceptr p, unsigned char v, size_t n) { CU_CALL(memsetD8, (CUdeviceptr, unsigned char, size_t), p, v, n); }
CUresult cu_memset_d32(CUdeviceptr p, unsigned v, size_t n) { CU_CALL(memsetD32, (CUdeviceptr, unsigned, size_t), p, v, n); }
CUresult cu_memset_d8_async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
	CU_CALL(memsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream), p, v, n, s);
}
CUresult cu_memset_d16_async(CUdeviceptr p, unsigned short v, size_t n, CUstream s) {
	CU_CALL(memsetD16Async, (CUdeviceptr, unsigned short, size_t, CUstream), p, v, n, s);
}
CUresult cu_memset_d32_async(CUdeviceptr p, unsigned v, size_t n, CUstream s) {
	CU_CALL(memsetD32Async, (CUdeviceptr, unsigned, size_t, CUstream), p, v, n, s);
}

// CUipcMemHandle is a struct of 64 bytes passed by value.
typedef struct { char reserved[64]; } cu_ipc_handle;
CUresult cu_ipc_get_mem_handle(void* out64, CUdeviceptr p) {
	cu_ipc_handle h;
	void* f = cu_fn[CU_FN_ipcGetMemHandle];
	if (!f) return CU_MISSING;
	CUresult r = ((CUresult(*)(cu_ipc_handle*, CUdeviceptr))f)(&h, p);
	if (r == 0) memcpy(out64, h.reserved, sizeof h.reserved);
	return r;
}
CUresult cu_ipc_open_mem_handle(CUdeviceptr* p, const void* in64, unsigned flags) {
	cu_ipc_handle h;
	memcpy(h.reserved, in64, sizeof h.reserved);
	CU_CALL(ipcOpenMemHandle, (CUdeviceptr*, cu_ipc_handle, unsigned), p, h, flags);
}
CUresult cu_ipc_close_mem_handle(CUdeviceptr p) { CU_CALL(ipcCloseMemHandle, (CUdeviceptr), p); }

CUresult cu_stream_create(CUstream* s, unsigned flags) { CU_CALL(streamCreate, (CUstream*, unsigned), s, flags); }
CUresult cu_stream_destroy(CUstream s) { CU_CALL(streamDestroy, (CUstream), s); }
CUresult cu_stream_synchronize(CUstream s) { CU_CALL(streamSynchronize, (CUstream), s); }
CUresult cu_stream_wait_event(CUstream s, CUevent e, unsigned flags) { CU_CALL(streamWaitEvent, (CUstream, CUevent, unsigned), s, e, flags); }
CUresult cu_stream_write_value32(CUstream s, CUdeviceptr addr, uint32_t v, unsigned flags) {
	CU_CALL(streamWriteValue32, (CUstream, CUdeviceptr, uint32_t, unsigned), s, addr, v, flags);
}
CUresult cu_stream_wait_value32(CUstream s, CUdeviceptr addr, uint32_t v, unsigned flags) {
	CU_CALL(streamWaitValue32, (CUstream, CUdeviceptr, uint32_t, unsigned), s, addr, v, flags);
}
CUresult cu_event_create(CUevent* e, unsigned flags) { CU_CALL(eventCreate, (CUevent*, unsigned), e, flags); }
CUresult cu_event_destroy(CUevent e) { CU_CALL(eventDestroy, (CUevent), e); }
CUresult cu_event_record(CUevent e, CUstream s) { CU_CALL(eventRecord, (CUevent, CUstream), e, s); }
CUresult cu_event_synchronize(CUevent e) { CU_CALL(eventSynchronize, (CUevent), e); }
CUresult cu_event_elapsed_time(float* ms, CUevent start, CUevent end) { CU_CALL(eventElapsedTime, (float*, CUevent, CUevent), ms, start, end); }

CUresult cu_module_load_data(CUmodule* m, const void* image) { CU_CALL(moduleLoadData, (CUmodule*, const void*), m, image); }
CUresult cu_module_unload(CUmodule m) { CU_CALL(moduleUnload, (CUmodule), m); }
CUresult cu_module_get_function(CUfunction* f, CUmodule m, const char* name) {
	CU_CALL(moduleGetFunction, (CUfunction*, CUmodule, const char*), f, m, name);
}
CUresult cu_func_get_attribute(int* v, int attr, CUfunction f) { CU_CALL(funcGetAttribute, (int*, int, CUfunction), v, attr, f); }
CUresult cu_func_set_attribute(CUfunction f, int attr, int v) { CU_CALL(funcSetAttribute, (CUfunction, int, int), f, attr, v); }

// value_params points params[i] at vals[i]: 0, or 1 (CUDA_ERROR_INVALID_VALUE)
// where n is out of [0, CU_MAX_PARAMS].
static CUresult value_params(void** params, const uint64_t* vals, int n) {
	if (n < 0 || n > CU_MAX_PARAMS) return 1;
	for (int i = 0; i < n; i++) params[i] = (void*)(vals + i);
	return 0;
}

// blob_params points params[i] at blob + offsets[i], as value_params.
static CUresult blob_params(void** params, const char* blob, const size_t* offsets, int n) {
	if (n < 0 || n > CU_MAX_PARAMS) return 1;
	for (int i = 0; i < n; i++) params[i] = (void*)(blob + offsets[i]);
	return 0;
}

typedef CUresult (*cu_launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	CUstream, void**, void**);
// launch_plain is cuLaunchKernel with params built (r: their error).
static CUresult launch_plain(CUresult r, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		unsigned bz, unsigned smem, CUstream s, void** params) {
	cu_launch_fn launch = (cu_launch_fn)cu_fn[CU_FN_launchKernel];
	if (!launch) return CU_MISSING;
	return r ? r : launch(f, gx, gy, gz, bx, by, bz, smem, s, params, 0);
}
CUresult cu_launch_values(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		unsigned bz, unsigned smem, CUstream s, const uint64_t* vals, int n) {
	void* params[CU_MAX_PARAMS];
	return launch_plain(value_params(params, vals, n), f, gx, gy, gz, bx, by, bz, smem, s, params);
}
CUresult cu_launch_blob(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		unsigned bz, unsigned smem, CUstream s, const char* blob, const size_t* offsets, int n) {
	void* params[CU_MAX_PARAMS];
	return launch_plain(blob_params(params, blob, offsets, n), f, gx, gy, gz, bx, by, bz, smem, s, params);
}

// CUlaunchAttribute as cuda.h declares it: the id, padding to 8 bytes and
// a 64-byte union of values.
typedef struct {
	int id;
	char pad[4];
	union {
		char raw[64];
		int programmatic_stream_serialization_allowed;
	} value;
} cu_launch_attribute;
_Static_assert(sizeof(cu_launch_attribute) == 72, "CUlaunchAttribute is 72 bytes");
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
#define CU_ATTR_PROGRAMMATIC_SERIALIZATION 6

// CUlaunchConfig as CUDA 12's cuda.h declares it.
typedef struct {
	unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	CUstream hStream;
	cu_launch_attribute* attrs;
	unsigned numAttrs;
} cu_launch_config;

typedef CUresult (*cu_launch_ex_fn)(const cu_launch_config*, CUfunction, void**, void**);
// launch_dependent is cuLaunchKernelEx with programmatic stream
// serialization allowed, params built (r: their error).
static CUresult launch_dependent(CUresult r, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		unsigned by, unsigned bz, unsigned smem, CUstream s, void** params) {
	cu_launch_ex_fn launch = (cu_launch_ex_fn)cu_fn[CU_FN_launchKernelEx];
	if (!launch) return CU_MISSING;
	if (r) return r;
	cu_launch_attribute attr = {0};
	attr.id = CU_ATTR_PROGRAMMATIC_SERIALIZATION;
	attr.value.programmatic_stream_serialization_allowed = 1;
	cu_launch_config c = {gx, gy, gz, bx, by, bz, smem, s, &attr, 1};
	return launch(&c, f, params, 0);
}
CUresult cu_launch_values_dependent(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		unsigned bz, unsigned smem, CUstream s, const uint64_t* vals, int n) {
	void* params[CU_MAX_PARAMS];
	return launch_dependent(value_params(params, vals, n), f, gx, gy, gz, bx, by, bz, smem, s, params);
}
CUresult cu_launch_blob_dependent(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		unsigned bz, unsigned smem, CUstream s, const char* blob, const size_t* offsets, int n) {
	void* params[CU_MAX_PARAMS];
	return launch_dependent(blob_params(params, blob, offsets, n), f, gx, gy, gz, bx, by, bz, smem, s, params);
}

CUresult cu_occupancy_max_active_blocks(int* out, CUfunction f, int block, size_t smem) {
	CU_CALL(occupancyMaxActiveBlocks, (int*, CUfunction, int, size_t), out, f, block, smem);
}

// The occupancy query reads the kernel's compile-time cluster dimensions, so
// its launch config has no attributes.
CUresult cu_occupancy_max_active_clusters(int* out, CUfunction f, unsigned grid, unsigned block, unsigned smem) {
	cu_launch_config c = {grid, 1, 1, block, 1, 1, smem, 0, 0, 0};
	CU_CALL(occupancyMaxActiveClusters, (int*, CUfunction, const cu_launch_config*), out, f, &c);
}

// CUtensorMap: 128 bytes, 64-byte aligned.
typedef struct { _Alignas(64) unsigned long long opaque[16]; } cu_tensor_map;
CUresult cu_tensor_map_encode_tiled(void* out128, int dtype, unsigned rank, CUdeviceptr addr, const uint64_t* dims,
		const uint64_t* strides, const uint32_t* box, const uint32_t* estrides, int interleave, int swizzle,
		int l2promotion, int oobfill) {
	void* f = cu_fn[CU_FN_tensorMapEncodeTiled];
	if (!f) return CU_MISSING;
	cu_tensor_map m;
	CUresult r = ((CUresult(*)(cu_tensor_map*, int, unsigned, void*, const uint64_t*, const uint64_t*,
		const uint32_t*, const uint32_t*, int, int, int, int))f)(&m, dtype, rank, (void*)addr, dims, strides,
		box, estrides, interleave, swizzle, l2promotion, oobfill);
	if (r == 0) memcpy(out128, &m, sizeof m);
	return r;
}

CUresult cu_stream_begin_capture(CUstream s, int mode) { CU_CALL(streamBeginCapture, (CUstream, int), s, mode); }
CUresult cu_stream_end_capture(CUstream s, CUgraph* g) { CU_CALL(streamEndCapture, (CUstream, CUgraph*), s, g); }
CUresult cu_graph_instantiate(CUgraphExec* e, CUgraph g, unsigned long long flags) {
	CU_CALL(graphInstantiateWithFlags, (CUgraphExec*, CUgraph, unsigned long long), e, g, flags);
}
CUresult cu_graph_launch(CUgraphExec e, CUstream s) { CU_CALL(graphLaunch, (CUgraphExec, CUstream), e, s); }
CUresult cu_graph_exec_destroy(CUgraphExec e) { CU_CALL(graphExecDestroy, (CUgraphExec), e); }
CUresult cu_graph_destroy(CUgraph g) { CU_CALL(graphDestroy, (CUgraph), g); }
// CUstreamCaptureStatus is an enum: passed as int.
CUresult cu_stream_is_capturing(CUstream s, int* status) { CU_CALL(streamIsCapturing, (CUstream, int*), s, status); }
// CUstreamCaptureMode is an enum: passed as int.
CUresult cu_thread_exchange_stream_capture_mode(int* mode) {
	CU_CALL(threadExchangeStreamCaptureMode, (int*), mode);
}
CUresult cu_mem_host_alloc(void** p, size_t n, unsigned flags) { CU_CALL(memHostAlloc, (void**, size_t, unsigned), p, n, flags); }
CUresult cu_mem_host_get_device_pointer(CUdeviceptr* d, void* p, unsigned flags) {
	CU_CALL(memHostGetDevicePointer, (CUdeviceptr*, void*, unsigned), d, p, flags);
}
CUresult cu_mem_free_host(void* p) { CU_CALL(memFreeHost, (void*), p); }
CUresult cu_ctx_get_device(CUdevice* d) { CU_CALL(ctxGetDevice, (CUdevice*), d); }
CUresult cu_ctx_enable_peer_access(CUcontext peer, unsigned flags) { CU_CALL(ctxEnablePeerAccess, (CUcontext, unsigned), peer, flags); }
CUresult cu_mem_get_info(size_t* free_bytes, size_t* total_bytes) { CU_CALL(memGetInfo, (size_t*, size_t*), free_bytes, total_bytes); }
CUresult cu_mem_alloc_async(CUdeviceptr* p, size_t n, CUstream s) { CU_CALL(memAllocAsync, (CUdeviceptr*, size_t, CUstream), p, n, s); }
CUresult cu_mem_free_async(CUdeviceptr p, CUstream s) { CU_CALL(memFreeAsync, (CUdeviceptr, CUstream), p, s); }
CUresult cu_memcpy_htod_async(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
	CU_CALL(memcpyHtoDAsync, (CUdeviceptr, const void*, size_t, CUstream), dst, src, n, s);
}
CUresult cu_event_query(CUevent e) { CU_CALL(eventQuery, (CUevent), e); }
// CUmemPoolProps (cuda.h, CUDA 11.2 to 13): allocType, handleTypes,
// location {type, id}, win32SecurityAttributes, then 64 bytes that newer
// drivers read as maxSize and usage (0: their defaults), 88 bytes in all.
typedef struct {
	int allocType;
	int handleTypes;
	int locationType;
	int locationId;
	void* win32SecurityAttributes;
	unsigned char reserved[64];
} cu_mem_pool_props;
CUresult cu_mem_pool_create(CUmemoryPool* pool, int ordinal) {
	cu_mem_pool_props props;
	memset(&props, 0, sizeof props);
	props.allocType = 1;    // CU_MEM_ALLOCATION_TYPE_PINNED
	props.handleTypes = 0;  // CU_MEM_HANDLE_TYPE_NONE
	props.locationType = 1; // CU_MEM_LOCATION_TYPE_DEVICE
	props.locationId = ordinal;
	CU_CALL(memPoolCreate, (CUmemoryPool*, const cu_mem_pool_props*), pool, &props);
}
CUresult cu_mem_pool_destroy(CUmemoryPool pool) { CU_CALL(memPoolDestroy, (CUmemoryPool), pool); }
CUresult cu_mem_pool_set_attribute(CUmemoryPool pool, int attr, unsigned long long value) {
	if (attr <= 3) {
		int v = (int)value;
		CU_CALL(memPoolSetAttribute, (CUmemoryPool, int, void*), pool, attr, &v);
	}
	CU_CALL(memPoolSetAttribute, (CUmemoryPool, int, void*), pool, attr, &value);
}
CUresult cu_mem_pool_get_attribute(CUmemoryPool pool, int attr, unsigned long long* value) {
	*value = 0;
	CU_CALL(memPoolGetAttribute, (CUmemoryPool, int, void*), pool, attr, value);
}
CUresult cu_mem_alloc_from_pool_async(CUdeviceptr* p, size_t n, CUmemoryPool pool, CUstream s) {
	CU_CALL(memAllocFromPoolAsync, (CUdeviceptr*, size_t, CUmemoryPool, CUstream), p, n, pool, s);
}
CUresult cu_stream_capture_graph(CUstream s, int* status, unsigned long long* id, CUgraph* g) {
	const void* deps = NULL;
	size_t ndeps = 0;
	*g = NULL;
	*id = 0;
	CU_CALL(streamGetCaptureInfo, (CUstream, int*, unsigned long long*, CUgraph*, const void**, size_t*), s, status, id, g,
		&deps, &ndeps);
}
// The destructor of a graph-held counter (cu_graph_hold_counter).
static void cu_counter_release(void* p) { __atomic_fetch_sub((int*)p, 1, __ATOMIC_SEQ_CST); }
// CU_USER_OBJECT_NO_DESTRUCTOR_SYNC and CU_GRAPH_USER_OBJECT_MOVE (cuda.h).
#define CU_USER_OBJECT_NO_DESTRUCTOR_SYNC 1
#define CU_GRAPH_USER_OBJECT_MOVE 1
CUresult cu_graph_hold_counter(CUgraph g, int* counter) {
	if (!cu_has(CU_FN_userObjectCreate) || !cu_has(CU_FN_graphRetainUserObject) || !cu_has(CU_FN_userObjectRelease)) {
		return CU_MISSING;
	}
	void* obj = NULL;
	CUresult r = ((CUresult(*)(void**, void*, void (*)(void*), unsigned, unsigned))cu_fn[CU_FN_userObjectCreate])(
		&obj, counter, cu_counter_release, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
	if (r != 0) return r;
	__atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
	r = ((CUresult(*)(CUgraph, void*, unsigned, unsigned))cu_fn[CU_FN_graphRetainUserObject])(g, obj, 1, CU_GRAPH_USER_OBJECT_MOVE);
	if (r != 0) {
		// Not moved: dropping our reference runs the destructor, which
		// takes the count back.
		((CUresult(*)(void*, unsigned))cu_fn[CU_FN_userObjectRelease])(obj, 1);
	}
	return r;
}

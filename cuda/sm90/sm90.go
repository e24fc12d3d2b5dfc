//go:build cuda

// Package sm90 owns the CUDA driver entry points that Hopper (sm_90)
// kernels need and gorgonia.org/cu v0.9.6 lacks: TMA tensor maps
// (cuTensorMapEncodeTiled, CUDA 12, looked up at run time with
// cuGetProcAddress because the 11.8 headers symmtune builds against do not
// declare it), modules whose functions take more than 48 KiB of dynamic
// shared memory, and launches whose parameters are not all 8 bytes (a
// tensor map is a 128-byte by-value parameter).
package sm90

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

// CUtensorMap and the encoder's signature as CUDA 12's cuda.h declares
// them; the enum parameters are passed as ints.
typedef struct { _Alignas(64) unsigned long long opaque[16]; } hop_tensormap;
typedef CUresult (*hop_encode_tiled_fn)(hop_tensormap*, int, cuuint32_t, void*, const cuuint64_t*,
	const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, int, int, int, int);

static hop_encode_tiled_fn hop_encode;
static CUresult hop_load_encoder(void) {
	if (hop_encode) return CUDA_SUCCESS;
	void* fn = 0;
	CUresult r = cuGetProcAddress("cuTensorMapEncodeTiled", &fn, 12000, 0);
	if (r != CUDA_SUCCESS) return r;
	if (!fn) return CUDA_ERROR_NOT_FOUND;
	hop_encode = (hop_encode_tiled_fn)fn;
	return CUDA_SUCCESS;
}
static CUresult hop_encode_2d(void* out, int dtype, CUdeviceptr addr, cuuint64_t inner, cuuint64_t outer,
		cuuint64_t row_bytes, cuuint32_t box_inner, cuuint32_t box_outer, int swizzle) {
	CUresult r = hop_load_encoder();
	if (r != CUDA_SUCCESS) return r;
	hop_tensormap m;
	cuuint64_t dims[2] = {inner, outer};
	cuuint64_t strides[1] = {row_bytes};
	cuuint32_t box[2] = {box_inner, box_outer};
	cuuint32_t estrides[2] = {1, 1};
	// Interleave none; L2 promotion 256B; out-of-bounds elements read as zero.
	r = hop_encode(&m, dtype, 2, (void*)addr, dims, strides, box, estrides, 0, swizzle, 3, 0);
	if (r == CUDA_SUCCESS) memcpy(out, &m, sizeof m);
	return r;
}
// CUlaunchConfig as CUDA 12's cuda.h declares it; the occupancy query
// reads the kernel's compile-time cluster dimensions, so no attributes.
typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	void* hStream;
	void* attrs;
	unsigned int numAttrs;
} hop_launch_config;
typedef CUresult (*hop_max_clusters_fn)(int*, CUfunction, const hop_launch_config*);
static CUresult hop_max_clusters(int* out, CUfunction fn, unsigned grid, unsigned block, unsigned smem) {
	void* p = 0;
	CUresult r = cuGetProcAddress("cuOccupancyMaxActiveClusters", &p, 12000, 0);
	if (r != CUDA_SUCCESS) return r;
	if (!p) return CUDA_ERROR_NOT_FOUND;
	hop_launch_config c = {grid, 1, 1, block, 1, 1, smem, 0, 0, 0};
	return ((hop_max_clusters_fn)p)(out, fn, &c);
}
static CUresult hop_module_load(CUmodule* mod, const void* image) { return cuModuleLoadData(mod, image); }
static CUresult hop_module_unload(CUmodule mod) { return cuModuleUnload(mod); }
static CUresult hop_function(CUfunction* fn, CUmodule mod, const char* name) { return cuModuleGetFunction(fn, mod, name); }
static CUresult hop_set_smem(CUfunction fn, int bytes) {
	return cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}
static CUresult hop_attr(CUfunction fn, int attr, int* v) { return cuFuncGetAttribute(v, (CUfunction_attribute)attr, fn); }
static CUresult hop_launch(CUfunction fn, unsigned gx, unsigned bx, unsigned smem, void* stream,
		char* blob, const size_t* offsets, int n) {
	void* params[32];
	for (int i = 0; i < n; i++) params[i] = blob + offsets[i];
	return cuLaunchKernel(fn, gx, 1, 1, bx, 1, 1, smem, (CUstream)stream, params, 0);
}
static const char* hop_err_name(CUresult r) {
	const char* s = 0;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) return "unknown CUDA error";
	return s;
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

func cuErr(what string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s (%d)", what, C.GoString(C.hop_err_name(r)), int(r))
}

// TensorMap is an encoded CUtensorMap: 128 bytes the kernel takes by
// value.
type TensorMap [128]byte

// Element types of a tensor map (CUtensorMapDataType).
const (
	Float16  = 6
	BFloat16 = 9
)

// Swizzle128B is CU_TENSOR_MAP_SWIZZLE_128B, Swizzle32B CU_TENSOR_MAP_SWIZZLE_32B.
const (
	Swizzle128B = 3
	Swizzle32B  = 1
)

// Encode2D describes a row-major matrix at addr of rows x cols elements of
// dtype (2 bytes each) with rowBytes between rows, read in boxes of
// boxRows x boxCols with the given swizzle. Elements outside the matrix
// read as zero.
func Encode2D(dtype int, addr cu.DevicePtr, rows, cols, rowBytes uint64, boxRows, boxCols uint32, swizzle int) (TensorMap, error) {
	var m TensorMap
	r := C.hop_encode_2d(unsafe.Pointer(&m[0]), C.int(dtype), C.CUdeviceptr(addr), C.cuuint64_t(cols), C.cuuint64_t(rows),
		C.cuuint64_t(rowBytes), C.cuuint32_t(boxCols), C.cuuint32_t(boxRows), C.int(swizzle))
	if err := cuErr("cuTensorMapEncodeTiled", r); err != nil {
		return TensorMap{}, fmt.Errorf("tensor map of %dx%d (row %d bytes, box %dx%d): %w", rows, cols, rowBytes, boxRows, boxCols, err)
	}
	return m, nil
}

// Module is a loaded cubin.
type Module struct{ mod C.CUmodule }

// Load loads a cubin into the current context.
func Load(cubin []byte) (*Module, error) {
	if len(cubin) == 0 {
		return nil, errors.New("load module: empty image")
	}
	img := C.CBytes(cubin)
	defer C.free(img)
	m := &Module{}
	if err := cuErr("cuModuleLoadData", C.hop_module_load(&m.mod, img)); err != nil {
		return nil, err
	}
	return m, nil
}

// Unload frees the module.
func (m *Module) Unload() error {
	if m == nil || m.mod == nil {
		return nil
	}
	err := cuErr("cuModuleUnload", C.hop_module_unload(m.mod))
	m.mod = nil
	return err
}

// Function is a kernel of a Module.
type Function struct{ fn C.CUfunction }

// Function looks up an extern "C" kernel.
func (m *Module) Function(name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f Function
	if err := cuErr("cuModuleGetFunction "+name, C.hop_function(&f.fn, m.mod, cname)); err != nil {
		return Function{}, err
	}
	return f, nil
}

// SetDynamicSmem raises the function's dynamic shared-memory limit (past
// the default 48 KiB).
func (f Function) SetDynamicSmem(bytes int) error {
	return cuErr("cuFuncSetAttribute(max dynamic shared memory)", C.hop_set_smem(f.fn, C.int(bytes)))
}

// Registers is the registers per thread the function was compiled to.
func (f Function) Registers() (int, error) {
	var v C.int
	err := cuErr("cuFuncGetAttribute(registers)", C.hop_attr(f.fn, C.CU_FUNC_ATTRIBUTE_NUM_REGS, &v))
	return int(v), err
}

// LocalBytes is the function's local memory per thread (register spills).
func (f Function) LocalBytes() (int, error) {
	var v C.int
	err := cuErr("cuFuncGetAttribute(local bytes)", C.hop_attr(f.fn, C.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &v))
	return int(v), err
}

// MaxActiveClusters is how many clusters of f (compiled with
// __cluster_dims__ of clusterSize CTAs) can be resident at once with this
// block size and dynamic shared memory: the persistent grid's size.
func (f Function) MaxActiveClusters(clusterSize, block, smem int) (int, error) {
	var n C.int
	r := C.hop_max_clusters(&n, f.fn, C.uint(clusterSize*64), C.uint(block), C.uint(smem))
	return int(n), cuErr("cuOccupancyMaxActiveClusters", r)
}

// Params builds a kernel's parameter block: each argument at its natural
// alignment (TensorMap 64 bytes, 8-byte and 4-byte integers).
type Params struct {
	blob    []byte
	offsets []C.size_t
}

func (p *Params) add(b []byte, align int) {
	off := (len(p.blob) + align - 1) / align * align
	p.blob = append(p.blob, make([]byte, off-len(p.blob))...)
	p.offsets = append(p.offsets, C.size_t(off))
	p.blob = append(p.blob, b...)
}

// Map appends a tensor map.
func (p *Params) Map(m TensorMap) *Params { p.add(m[:], 64); return p }

// U64 appends an 8-byte integer (or pointer).
func (p *Params) U64(v uint64) *Params {
	p.add(binary.LittleEndian.AppendUint64(nil, v), 8)
	return p
}

// I32 appends a 4-byte integer.
func (p *Params) I32(v int32) *Params {
	p.add(binary.LittleEndian.AppendUint32(nil, uint32(v)), 4)
	return p
}

// Launch enqueues f on stream with a 1-D grid and block.
func (f Function) Launch(grid, block, smem int, stream cu.Stream, p *Params) error {
	if len(p.offsets) > 32 {
		return fmt.Errorf("launch: %d parameters, at most 32", len(p.offsets))
	}
	// The parameter block is copied into C memory: the driver reads it
	// during the call only, and cgo forbids passing Go memory that holds
	// pointers to it.
	blob := C.CBytes(append(p.blob, 0))
	defer C.free(blob)
	var offs unsafe.Pointer
	if len(p.offsets) > 0 {
		offs = C.CBytes(unsafe.Slice((*byte)(unsafe.Pointer(&p.offsets[0])), len(p.offsets)*int(unsafe.Sizeof(p.offsets[0]))))
		defer C.free(offs)
	}
	r := C.hop_launch(f.fn, C.uint(grid), C.uint(block), C.uint(smem), unsafe.Pointer(stream.C()), (*C.char)(blob), (*C.size_t)(offs), C.int(len(p.offsets)))
	return cuErr("cuLaunchKernel", r)
}

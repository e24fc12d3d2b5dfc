package cu

/*
#include <stdlib.h>
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Module is a loaded cubin (or PTX).
type Module struct{ mod C.CUmodule }

// LoadData loads a module image (a cubin, or NUL-free PTX) into the current
// context.
func LoadData(image string) (Module, error) {
	if err := ensure(); err != nil {
		return Module{}, err
	}
	if len(image) == 0 {
		return Module{}, errors.New("cuModuleLoadData: empty image")
	}
	// A C copy: the driver wants PTX NUL-terminated, and a Go string may
	// not be passed to C as a pointer.
	img := C.CString(image)
	defer C.free(unsafe.Pointer(img))
	var m Module
	err := check("cuModuleLoadData", C.cu_module_load_data(&m.mod, unsafe.Pointer(img)))
	return m, err
}

// Unload frees the module.
func (m Module) Unload() error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuModuleUnload", C.cu_module_unload(m.mod))
}

// Function looks up an extern "C" kernel of the module.
func (m Module) Function(name string) (Function, error) {
	if err := ensure(); err != nil {
		return Function{}, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f Function
	if r := C.cu_module_get_function(&f.fn, m.mod, cname); r != 0 {
		return Function{}, fmt.Errorf("kernel %s: %w", name, check("cuModuleGetFunction", r))
	}
	return f, nil
}

// Function is a kernel.
type Function struct{ fn C.CUfunction }

// FunctionAttribute is a CUfunction_attribute.
type FunctionAttribute int

// Function attributes (values from cuda.h).
const (
	FnMaxThreadsPerBlock       FunctionAttribute = 0
	SharedSizeBytes            FunctionAttribute = 1
	ConstSizeBytes             FunctionAttribute = 2
	LocalSizeBytes             FunctionAttribute = 3
	NumRegs                    FunctionAttribute = 4
	MaxDynamicSharedSizeBytes  FunctionAttribute = 8
	PreferredSharedMemoryCarve FunctionAttribute = 9
)

// Attribute reads a function attribute.
func (f Function) Attribute(attrib FunctionAttribute) (int, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var v C.int
	err := check("cuFuncGetAttribute", C.cu_func_get_attribute(&v, C.int(attrib), f.fn))
	return int(v), err
}

// SetAttribute sets a function attribute (MaxDynamicSharedSizeBytes, to
// let a kernel take more than 48 KiB of dynamic shared memory).
func (f Function) SetAttribute(attrib FunctionAttribute, value int) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuFuncSetAttribute", C.cu_func_set_attribute(f.fn, C.int(attrib), C.int(value)))
}

// MaxActiveBlocksPerMultiProcessor is how many blocks of blockSize threads
// and dynamicSmemSize bytes of dynamic shared memory fit on one SM at once.
func (f Function) MaxActiveBlocksPerMultiProcessor(blockSize int, dynamicSmemSize int64) (int, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var n C.int
	err := check("cuOccupancyMaxActiveBlocksPerMultiprocessor",
		C.cu_occupancy_max_active_blocks(&n, f.fn, C.int(blockSize), C.size_t(dynamicSmemSize)))
	return int(n), err
}

// MaxParams is the most kernel parameters Launch and LaunchBlob take.
const MaxParams = C.CU_MAX_PARAMS

// paramValues reads the 8-byte value each kernel parameter points at, as
// gorgonia.org/cu's Launch does: every parameter is 8 bytes (a pointer or a
// 64-bit integer; a smaller integer parameter reads the low bytes).
func paramValues(kernelParams []unsafe.Pointer) ([]uint64, error) {
	if len(kernelParams) > MaxParams {
		return nil, fmt.Errorf("launch: %d kernel parameters, at most %d", len(kernelParams), MaxParams)
	}
	vals := make([]uint64, len(kernelParams))
	for i, p := range kernelParams {
		if p == nil {
			return nil, fmt.Errorf("launch: kernel parameter %d is a nil pointer", i)
		}
		vals[i] = *(*uint64)(p)
	}
	return vals, nil
}

// Launch enqueues f on stream. Each of kernelParams points at an 8-byte
// value (see paramValues); the values are copied at the call.
func (f Function) Launch(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes int, stream Stream, kernelParams []unsafe.Pointer) error {
	return f.launch(false, [6]int{gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ}, sharedMemBytes, stream, kernelParams)
}

// LaunchDependent is Launch as the programmatic dependent of the kernel
// before it on stream (cuLaunchKernelEx with programmatic stream
// serialization): f's blocks may start once every block of that kernel
// has run griddepcontrol.launch_dependents (or exited), and f must run
// griddepcontrol.wait before it touches anything that kernel wrote. Its
// launch latency then overlaps that kernel's tail. After anything but a
// kernel on stream, or under a driver without cuLaunchKernelEx, it is a
// plain launch.
func (f Function) LaunchDependent(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes int, stream Stream, kernelParams []unsafe.Pointer) error {
	return f.launch(true, [6]int{gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ}, sharedMemBytes, stream, kernelParams)
}

// launch is Launch (dependent false) and LaunchDependent; dims are the
// grid's and the block's x, y and z.
func (f Function) launch(dependent bool, dims [6]int, sharedMemBytes int, stream Stream, kernelParams []unsafe.Pointer) error {
	vals, err := paramValues(kernelParams)
	if err != nil {
		return err
	}
	if err := ensure(); err != nil {
		return err
	}
	// vals holds no Go pointers, so cgo lets C read it during the call; the
	// driver copies the parameters before the launch call returns.
	var p *C.uint64_t
	if len(vals) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&vals[0]))
	}
	d := func(i int) C.uint { return C.uint(dims[i]) }
	if dependent && C.cu_has(C.CU_FN_launchKernelEx) != 0 {
		return check("cuLaunchKernelEx", C.cu_launch_values_dependent(f.fn, d(0), d(1), d(2), d(3), d(4), d(5),
			C.uint(sharedMemBytes), stream.s, p, C.int(len(vals))))
	}
	return check("cuLaunchKernel", C.cu_launch_values(f.fn, d(0), d(1), d(2), d(3), d(4), d(5),
		C.uint(sharedMemBytes), stream.s, p, C.int(len(vals))))
}

// LaunchAndSync launches f and then waits for the current context.
func (f Function) LaunchAndSync(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes int, stream Stream, kernelParams []unsafe.Pointer) error {
	if err := f.Launch(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams); err != nil {
		return err
	}
	return Synchronize()
}

// LaunchBlob enqueues f on stream with a 1-D grid and block and parameters
// of any size: parameter i is the bytes of blob from offsets[i] (each at
// the alignment the kernel declares; a tensor map is 128 bytes at 64).
func (f Function) LaunchBlob(grid, block, sharedMemBytes int, stream Stream, blob []byte, offsets []int) error {
	return f.launchBlob(false, grid, block, sharedMemBytes, stream, blob, offsets)
}

// LaunchBlobDependent is LaunchBlob as the programmatic dependent of the
// kernel before it on stream, as LaunchDependent is Launch's: f must run
// griddepcontrol.wait before it touches memory that kernel may use.
func (f Function) LaunchBlobDependent(grid, block, sharedMemBytes int, stream Stream, blob []byte, offsets []int) error {
	return f.launchBlob(true, grid, block, sharedMemBytes, stream, blob, offsets)
}

func (f Function) launchBlob(dependent bool, grid, block, sharedMemBytes int, stream Stream, blob []byte, offsets []int) error {
	if err := checkOffsets(len(blob), offsets); err != nil {
		return err
	}
	if err := ensure(); err != nil {
		return err
	}
	offs := make([]C.size_t, len(offsets))
	for i, o := range offsets {
		offs[i] = C.size_t(o)
	}
	var b *C.char
	var o *C.size_t
	if len(offs) > 0 {
		b = (*C.char)(unsafe.Pointer(&blob[0]))
		o = &offs[0]
	}
	if dependent && C.cu_has(C.CU_FN_launchKernelEx) != 0 {
		return check("cuLaunchKernelEx", C.cu_launch_blob_dependent(f.fn, C.uint(grid), 1, 1, C.uint(block), 1, 1,
			C.uint(sharedMemBytes), stream.s, b, o, C.int(len(offs))))
	}
	return check("cuLaunchKernel", C.cu_launch_blob(f.fn, C.uint(grid), 1, 1, C.uint(block), 1, 1, C.uint(sharedMemBytes),
		stream.s, b, o, C.int(len(offs))))
}

// checkOffsets validates LaunchBlob's parameter offsets into a block of
// blobLen bytes.
func checkOffsets(blobLen int, offsets []int) error {
	if len(offsets) > MaxParams {
		return fmt.Errorf("launch: %d kernel parameters, at most %d", len(offsets), MaxParams)
	}
	for i, o := range offsets {
		if o < 0 || o >= blobLen {
			return fmt.Errorf("launch: parameter %d at offset %d, outside the %d-byte block", i, o, blobLen)
		}
	}
	return nil
}

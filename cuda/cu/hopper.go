package cu

/*
#include "driver.h"
*/
import "C"

import "unsafe"

// TensorMap is an encoded CUtensorMap: 128 bytes a kernel takes by value.
type TensorMap [128]byte

// TensorMapEncodeTiled encodes a tiled tensor map (cuTensorMapEncodeTiled,
// CUDA 12) of a rank-len(dims) tensor at addr: dims innermost first,
// strides[i] the bytes between consecutive indices of dimension i+1, boxes
// of box elements, elementStrides per dimension; the enum arguments are
// cuda.h's CUtensorMap* values.
func TensorMapEncodeTiled(dtype int, addr DevicePtr, dims, strides []uint64, box, elementStrides []uint32,
	interleave, swizzle, l2Promotion, oobFill int) (TensorMap, error) {
	var m TensorMap
	if err := ensure(); err != nil {
		return m, err
	}
	rank := len(dims)
	if rank == 0 || rank > 5 || len(strides) != rank-1 || len(box) != rank || len(elementStrides) != rank {
		return m, &Error{Func: "cuTensorMapEncodeTiled", Code: InvalidValue}
	}
	var sp *C.uint64_t
	if len(strides) > 0 {
		sp = (*C.uint64_t)(unsafe.Pointer(&strides[0]))
	}
	r := C.cu_tensor_map_encode_tiled(unsafe.Pointer(&m[0]), C.int(dtype), C.uint(rank), C.CUdeviceptr(addr),
		(*C.uint64_t)(unsafe.Pointer(&dims[0])), sp, (*C.uint32_t)(unsafe.Pointer(&box[0])),
		(*C.uint32_t)(unsafe.Pointer(&elementStrides[0])), C.int(interleave), C.int(swizzle), C.int(l2Promotion), C.int(oobFill))
	return m, check("cuTensorMapEncodeTiled", r)
}

// MaxActiveClusters is how many clusters of f (with its compile-time
// cluster dimensions) can be resident at once for a grid of grid blocks of
// block threads and smem bytes of dynamic shared memory
// (cuOccupancyMaxActiveClusters, CUDA 12).
func (f Function) MaxActiveClusters(grid, block, smem int) (int, error) {
	if err := ensure(); err != nil {
		return 0, err
	}
	var n C.int
	err := check("cuOccupancyMaxActiveClusters", C.cu_occupancy_max_active_clusters(&n, f.fn, C.uint(grid), C.uint(block), C.uint(smem)))
	return int(n), err
}

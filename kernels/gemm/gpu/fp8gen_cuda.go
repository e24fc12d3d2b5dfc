//go:build cuda

package gpu

// check_cuda.go's tensorB is fp8gen.go's TensorB: a difference makes one
// of these constants negative, which uint cannot hold (a compile error).
const _ = uint(tensorB-TensorB) + uint(TensorB-tensorB)

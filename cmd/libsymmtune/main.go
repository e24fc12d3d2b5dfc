// Command libsymmtune is symmtune's rules as a C shared library
// (go build -buildmode=c-shared -o libsymmtune.so ./cmd/libsymmtune; make
// lib): the C ABI of symmtune.h over internal/libops, for the Python
// runtime (python/symmtune/_native.py) and any other caller. It owns only
// the boundary: strings in, JSON out, error codes, no panic escaping. It
// starts no goroutine of its own, at load or per call. Built with -tags
// cuda (make lib) it also runs the GEMM kernels (symmtune_gemm_*: the
// plugins' launch sequence on the caller's stream and thread) and the
// all-reduce (symmtune_allreduce_*: kernels/allreduce's Runner); it links no
// CUDA either way: cuda/cu loads the driver at the first kernel call, so
// the library loads and answers the rules without a GPU. Without the tag,
// symmtune_gemm_open and symmtune_allreduce_open answer that the library
// has no CUDA.
package main

/*
#include <stddef.h>
#include <stdint.h>
#include <string.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/symmtune/symmtune/internal/libops"
)

// abiVersion is symmtune.h's SYMMTUNE_ABI_VERSION.
const abiVersion = 5

// Return codes, as symmtune.h defines them.
const (
	codeOK       = 0
	codeBadInput = 1
	codeTooSmall = 2
	codeInternal = 3
	codeCapture  = 4
)

func main() {} // required by -buildmode=c-shared; never runs

//export symmtune_abi_version
func symmtune_abi_version() C.int { return abiVersion }

//export symmtune_call
func symmtune_call(op, request *C.char, out *C.char, outCap C.size_t, outLen *C.size_t) (code C.int) {
	if outLen == nil || (out == nil && outCap > 0) {
		return codeBadInput
	}
	if op == nil {
		return write(out, outCap, outLen, codeBadInput, []byte("op: NULL"))
	}
	var req []byte
	if request != nil {
		req = C.GoBytes(unsafe.Pointer(request), C.int(C.strlen(request)))
	}
	text, c := call(C.GoString(op), req)
	return write(out, outCap, outLen, c, text)
}

// callOp is the operation dispatch (a variable so a test can make it panic).
var callOp = libops.Call

// call runs the operation; a panic becomes an internal error.
func call(op string, req []byte) (text []byte, code C.int) {
	defer func() {
		if r := recover(); r != nil {
			text, code = []byte(fmt.Sprintf("%s: internal error: %v", op, r)), codeInternal
		}
	}()
	ans, err := callOp(op, req)
	var bad *libops.BadInputError
	switch {
	case err == nil:
		return ans, codeOK
	case errors.As(err, &bad):
		return []byte(bad.Msg), codeBadInput
	default:
		return []byte(err.Error()), codeInternal
	}
}

// write copies text into out when it fits, else asks for more room.
func write(out *C.char, outCap C.size_t, outLen *C.size_t, code C.int, text []byte) C.int {
	*outLen = C.size_t(len(text))
	if C.size_t(len(text)) > outCap {
		return codeTooSmall
	}
	if len(text) > 0 {
		C.memcpy(unsafe.Pointer(out), unsafe.Pointer(&text[0]), C.size_t(len(text)))
	}
	return code
}

// openArgs checks an open call's arguments and copies them into Go: the
// request's bytes and the region pointers. A non-empty bad is the message
// of the bad argument.
func openArgs(request *C.char, regionPtrs *C.uint64_t, nRegions C.size_t, handle *C.uint64_t) (req []byte, regions []uint64, bad string) {
	switch {
	case handle == nil:
		return nil, nil, "handle: NULL"
	case request == nil:
		return nil, nil, "request_json: NULL"
	case regionPtrs == nil && nRegions > 0:
		return nil, nil, "region_ptrs: NULL"
	}
	regions = make([]uint64, int(nRegions))
	if nRegions > 0 {
		copy(regions, unsafe.Slice((*uint64)(unsafe.Pointer(regionPtrs)), int(nRegions)))
	}
	return C.GoBytes(unsafe.Pointer(request), C.int(C.strlen(request))), regions, ""
}

//export symmtune_gemm_open
func symmtune_gemm_open(request *C.char, regionPtrs *C.uint64_t, nRegions C.size_t, ptrTable C.uint64_t, handle *C.uint64_t, msg *C.char, msgCap C.size_t) (code C.int) {
	defer recoverTo(&code, msg, msgCap, "symmtune_gemm_open")
	req, regions, bad := openArgs(request, regionPtrs, nRegions, handle)
	if bad != "" {
		return message(msg, msgCap, codeBadInput, bad)
	}
	h, warning, err := libops.GemmOpen(req, regions, uint64(ptrTable))
	if err != nil {
		return message(msg, msgCap, errCode(err), err.Error())
	}
	*handle = C.uint64_t(h)
	return message(msg, msgCap, codeOK, warning)
}

//export symmtune_gemm_enqueue
func symmtune_gemm_enqueue(handle, stream C.uint64_t, m C.int64_t, a, b, c, extra C.uint64_t, msg *C.char, msgCap C.size_t) (code C.int) {
	defer recoverTo(&code, msg, msgCap, "symmtune_gemm_enqueue")
	warning, err := libops.GemmEnqueue(uint64(handle), uint64(stream), rows(m), uint64(a), uint64(b), uint64(c), uint64(extra))
	if err != nil {
		return message(msg, msgCap, errCode(err), err.Error())
	}
	return message(msg, msgCap, codeOK, warning)
}

// rows is m as an int, out-of-range values as 0 (refused as bad input).
func rows(m C.int64_t) int {
	if m < 1 || m > 1<<40 {
		return 0
	}
	return int(m)
}

//export symmtune_gemm_enqueue_scaled
func symmtune_gemm_enqueue_scaled(handle, stream C.uint64_t, m C.int64_t, a, b, c, extra, scaleA, scaleB C.uint64_t, msg *C.char, msgCap C.size_t) (code C.int) {
	defer recoverTo(&code, msg, msgCap, "symmtune_gemm_enqueue_scaled")
	warning, err := libops.GemmEnqueueScaled(uint64(handle), uint64(stream), rows(m), uint64(a), uint64(b), uint64(c), uint64(extra),
		uint64(scaleA), uint64(scaleB))
	if err != nil {
		return message(msg, msgCap, errCode(err), err.Error())
	}
	return message(msg, msgCap, codeOK, warning)
}

//export symmtune_gemm_close
func symmtune_gemm_close(handle C.uint64_t) (code C.int) {
	defer recoverTo(&code, nil, 0, "symmtune_gemm_close")
	if err := libops.GemmClose(uint64(handle)); err != nil {
		return errCode(err)
	}
	return codeOK
}

//export symmtune_allreduce_open
func symmtune_allreduce_open(request *C.char, regionPtrs *C.uint64_t, nRegions C.size_t, ptrTable C.uint64_t, handle *C.uint64_t, msg *C.char, msgCap C.size_t) (code C.int) {
	defer recoverTo(&code, msg, msgCap, "symmtune_allreduce_open")
	req, regions, bad := openArgs(request, regionPtrs, nRegions, handle)
	if bad != "" {
		return message(msg, msgCap, codeBadInput, bad)
	}
	h, err := libops.AllreduceOpen(req, regions, uint64(ptrTable))
	if err != nil {
		return message(msg, msgCap, errCode(err), err.Error())
	}
	*handle = C.uint64_t(h)
	return message(msg, msgCap, codeOK, "")
}

//export symmtune_allreduce_enqueue
func symmtune_allreduce_enqueue(handle, stream, tensor C.uint64_t, n C.int64_t, msg *C.char, msgCap C.size_t) (code C.int) {
	defer recoverTo(&code, msg, msgCap, "symmtune_allreduce_enqueue")
	if err := libops.AllreduceEnqueue(uint64(handle), uint64(stream), uint64(tensor), int64(n)); err != nil {
		return message(msg, msgCap, errCode(err), err.Error())
	}
	return codeOK
}

//export symmtune_allreduce_close
func symmtune_allreduce_close(handle C.uint64_t) (code C.int) {
	defer recoverTo(&code, nil, 0, "symmtune_allreduce_close")
	if err := libops.AllreduceClose(uint64(handle)); err != nil {
		return errCode(err)
	}
	return codeOK
}

// errCode is the return code of an error: bad input, a call that needs a
// warm-up outside a capture, or internal.
func errCode(err error) C.int {
	var bad *libops.BadInputError
	var capture *libops.CaptureError
	switch {
	case errors.As(err, &bad):
		return codeBadInput
	case errors.As(err, &capture):
		return codeCapture
	}
	return codeInternal
}

// message writes text into msg, NUL-terminated and cut to msgCap-1
// bytes (nothing when msg is NULL or msgCap 0), and returns code.
func message(msg *C.char, msgCap C.size_t, code C.int, text string) C.int {
	if msg == nil || msgCap == 0 {
		return code
	}
	n := min(len(text), int(msgCap)-1)
	out := unsafe.Slice((*byte)(unsafe.Pointer(msg)), int(msgCap))
	copy(out, text[:n])
	out[n] = 0
	return code
}

// recoverTo turns a panic into the internal code with its message.
func recoverTo(code *C.int, msg *C.char, msgCap C.size_t, fn string) {
	if r := recover(); r != nil {
		*code = message(msg, msgCap, codeInternal, fmt.Sprintf("%s: internal error: %v", fn, r))
	}
}

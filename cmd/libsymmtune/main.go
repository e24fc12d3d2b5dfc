// Command libsymmtune is symmtune's rules as a C shared library
// (go build -buildmode=c-shared -o libsymmtune.so ./cmd/libsymmtune; make
// lib): the C ABI of symmtune.h over internal/libops, for the Python
// runtime (python/symmtune/_native.py) and any other caller. It owns only
// the boundary: strings in, JSON out, error codes, no panic escaping. It
// links no CUDA and starts no goroutine of its own, at load or per call.
package main

/*
#include <stddef.h>
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
const abiVersion = 1

// Return codes, as symmtune.h defines them.
const (
	codeOK       = 0
	codeBadInput = 1
	codeTooSmall = 2
	codeInternal = 3
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

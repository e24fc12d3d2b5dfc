package cu

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"unsafe"
)

// LibraryEnv names the environment variable that overrides the driver
// library's path.
const LibraryEnv = "SYMMTUNE_LIBCUDA"

// defaultLibrary is the driver's soname, installed with the kernel driver.
const defaultLibrary = "libcuda.so.1"

var (
	loadOnce sync.Once
	loadErr  error
	loaded   string
)

// library is the file to dlopen.
func library() string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return p
	}
	return defaultLibrary
}

// ensure loads the driver and initialises it on the first call; every later
// call returns the first one's error. Each exported function starts with it.
func ensure() error {
	loadOnce.Do(func() {
		name := library()
		loadErr = open(name)
		if loadErr == nil {
			loaded = name
			loadErr = check("cuInit", C.cu_init(0))
		}
	})
	return loadErr
}

// open dlopens name and resolves the entry points.
func open(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	if C.cu_open(cname) != 0 {
		return fmt.Errorf("CUDA driver not available: dlopen %s: %s (is the NVIDIA driver installed? %s names another path)",
			name, C.GoString(C.cu_dlerror()), LibraryEnv)
	}
	return nil
}

// Library is the driver library loaded, or an error saying why none is
// usable (no library, no GPU): what the first call of any function returns.
func Library() (string, error) {
	if err := ensure(); err != nil {
		return "", err
	}
	return loaded, nil
}

// Symbols lists the exported names of every entry point the package binds,
// in driver.h's order.
func Symbols() []string {
	out := make([]string, C.CU_FN_COUNT)
	for i := range out {
		out[i] = C.GoString(C.cu_symbol_name(C.int(i)))
	}
	return out
}

// MissingSymbols lists the entry points the loaded driver does not export
// (after a successful load; all of them before one).
func MissingSymbols() []string {
	var out []string
	for i := 0; i < int(C.CU_FN_COUNT); i++ {
		if C.cu_has(C.int(i)) == 0 {
			out = append(out, C.GoString(C.cu_symbol_name(C.int(i))))
		}
	}
	return out
}

// Result is a CUresult, the driver's status code.
type Result int

// Codes callers may test for with errors.Is.
const (
	Success        Result = 0
	InvalidValue   Result = 1
	OutOfMemory    Result = 2
	NotInitialized Result = 3
	NoDevice       Result = 100
	InvalidDevice  Result = 101
	InvalidImage   Result = 200
	InvalidContext Result = 201
	InvalidHandle  Result = 400
	NotFound       Result = 500
	NotReady       Result = 600
	IllegalAddress Result = 700
	LaunchFailed   Result = 719
	NotSupported   Result = 801
	Unknown        Result = 999
)

// Error prints the code as the driver names and describes it, e.g.
// "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
func (r Result) Error() string {
	var name, desc *C.char
	if C.cu_get_error_name(C.CUresult(r), &name) != 0 || name == nil {
		return "CUDA error " + strconv.Itoa(int(r))
	}
	s := C.GoString(name) + " (" + strconv.Itoa(int(r)) + ")"
	if C.cu_get_error_string(C.CUresult(r), &desc) == 0 && desc != nil {
		s += ": " + C.GoString(desc)
	}
	return s
}

// Error is a failed driver call.
type Error struct {
	Func string // the entry point, e.g. "cuMemAlloc_v2"
	Code Result
}

func (e *Error) Error() string { return e.Func + ": " + e.Code.Error() }

// Unwrap lets errors.Is(err, cu.OutOfMemory) match.
func (e *Error) Unwrap() error { return e.Code }

// ErrMissingSymbol is wrapped by the error of a call whose entry point the
// loaded driver does not export.
var ErrMissingSymbol = errors.New("entry point not exported by the CUDA driver")

// check turns the status of the call to fn into an error.
func check(fn string, r C.CUresult) error {
	switch r {
	case 0:
		return nil
	case C.CU_MISSING:
		return fmt.Errorf("%s: %w (%s; a newer driver may be needed)", fn, ErrMissingSymbol, loaded)
	}
	return &Error{Func: fn, Code: Result(r)}
}

//go:build cuda

package nvrtc

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <stddef.h>

// NVRTC entry points, declared here rather than through nvrtc.h so the build
// needs no toolkit headers and any NVRTC major version found at run time can
// be used: the handful of functions below has kept its ABI since CUDA 11.
typedef int (*nvrtcVersion_t)(int*, int*);
typedef int (*nvrtcCreateProgram_t)(void**, const char*, const char*, int, const char* const*, const char* const*);
typedef int (*nvrtcCompileProgram_t)(void*, int, const char* const*);
typedef int (*nvrtcGetSize_t)(void*, size_t*);
typedef int (*nvrtcGetBytes_t)(void*, char*);
typedef int (*nvrtcDestroyProgram_t)(void**);
typedef const char* (*nvrtcGetErrorString_t)(int);

typedef struct {
	void* handle;
	nvrtcVersion_t version;
	nvrtcCreateProgram_t create;
	nvrtcCompileProgram_t compile;
	nvrtcGetSize_t logSize;
	nvrtcGetBytes_t log;
	nvrtcGetSize_t cubinSize;
	nvrtcGetBytes_t cubin;
	nvrtcDestroyProgram_t destroy;
	nvrtcGetErrorString_t errstr;
} nvrtc_api;

static nvrtc_api api;

// nvrtc_open loads name and resolves every symbol; returns 0 on success,
// 1 when the library is missing, 2 when a symbol is.
static int nvrtc_open(const char* name) {
	void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) return 1;
	api.handle = h;
	api.version = (nvrtcVersion_t)dlsym(h, "nvrtcVersion");
	api.create = (nvrtcCreateProgram_t)dlsym(h, "nvrtcCreateProgram");
	api.compile = (nvrtcCompileProgram_t)dlsym(h, "nvrtcCompileProgram");
	api.logSize = (nvrtcGetSize_t)dlsym(h, "nvrtcGetProgramLogSize");
	api.log = (nvrtcGetBytes_t)dlsym(h, "nvrtcGetProgramLog");
	api.cubinSize = (nvrtcGetSize_t)dlsym(h, "nvrtcGetCUBINSize");
	api.cubin = (nvrtcGetBytes_t)dlsym(h, "nvrtcGetCUBIN");
	api.destroy = (nvrtcDestroyProgram_t)dlsym(h, "nvrtcDestroyProgram");
	api.errstr = (nvrtcGetErrorString_t)dlsym(h, "nvrtcGetErrorString");
	if (!api.version || !api.create || !api.compile || !api.logSize || !api.log ||
	    !api.cubinSize || !api.cubin || !api.destroy || !api.errstr) {
		dlclose(h);
		api.handle = 0;
		return 2;
	}
	return 0;
}

static int nvrtc_version(int* major, int* minor) { return api.version(major, minor); }
static const char* nvrtc_errstr(int r) { return api.errstr(r); }

// nvrtc_compile compiles src with opts. On return *log holds the compiler log
// (malloc'd, may be NULL) and, on success, *cubin/*cubinLen the machine code
// (malloc'd). The result is the first failing NVRTC status, or 0.
static int nvrtc_compile(const char* src, const char* name, int nopts, const char** opts,
                         char** log, char** cubin, size_t* cubinLen) {
	void* prog = 0;
	*log = 0; *cubin = 0; *cubinLen = 0;
	int r = api.create(&prog, src, name, 0, 0, 0);
	if (r) return r;
	int cr = api.compile(prog, nopts, (const char* const*)opts);
	size_t n = 0;
	if (api.logSize(prog, &n) == 0 && n > 1) {
		*log = (char*)malloc(n);
		if (*log && api.log(prog, *log)) { free(*log); *log = 0; }
	}
	if (cr == 0) {
		size_t m = 0;
		r = api.cubinSize(prog, &m);
		if (r == 0) {
			*cubin = (char*)malloc(m);
			r = *cubin ? api.cubin(prog, *cubin) : 7; // 7: NVRTC_ERROR_INTERNAL_ERROR stand-in
			if (r == 0) *cubinLen = m; else { free(*cubin); *cubin = 0; }
		}
	} else {
		r = cr;
	}
	api.destroy(&prog);
	return r;
}
*/
import "C"

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/libpath"
)

// candidates lists the NVRTC libraries to try, newest major version first;
// SYMMTUNE_NVRTC names one explicitly.
func candidates() []string {
	return libpath.Candidates("SYMMTUNE_NVRTC", "libnvrtc", 11, 14, "libnvrtc.so.11.2", "libnvrtc.so")
}

// open loads the newest NVRTC it can find. Called once, under loadOnce.
func open() (string, error) {
	var tried []string
	for _, name := range candidates() {
		cs := C.CString(name)
		r := C.nvrtc_open(cs)
		C.free(unsafe.Pointer(cs))
		switch r {
		case 0:
			return name, nil
		case 2:
			tried = append(tried, name+" (symbols missing)")
		}
	}
	return "", fmt.Errorf("no usable NVRTC library found (set SYMMTUNE_NVRTC to its path); tried %d names, unusable: %v", len(candidates()), tried)
}

func version() (int, int, error) {
	var major, minor C.int
	if r := C.nvrtc_version(&major, &minor); r != 0 {
		return 0, 0, fmt.Errorf("nvrtcVersion: %s", errString(int(r)))
	}
	return int(major), int(minor), nil
}

func errString(r int) string {
	return C.GoString(C.nvrtc_errstr(C.int(r))) + " (" + strconv.Itoa(r) + ")"
}

// compileRaw runs NVRTC once; the log is returned on success too (warnings).
func compileRaw(src, name string, opts []string) (cubin []byte, log string, err error) {
	csrc := C.CString(src)
	defer C.free(unsafe.Pointer(csrc))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	copts := C.malloc(C.size_t(len(opts)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(copts)
	arr := unsafe.Slice((**C.char)(copts), len(opts)+1)
	for i, o := range opts {
		arr[i] = C.CString(o)
	}
	defer func() {
		for i := range opts {
			C.free(unsafe.Pointer(arr[i]))
		}
	}()
	var clog, ccubin *C.char
	var n C.size_t
	r := C.nvrtc_compile(csrc, cname, C.int(len(opts)), (**C.char)(copts), &clog, &ccubin, &n)
	if clog != nil {
		log = C.GoString(clog)
		C.free(unsafe.Pointer(clog))
	}
	if r != 0 {
		return nil, log, fmt.Errorf("nvrtc: %s", errString(int(r)))
	}
	cubin = C.GoBytes(unsafe.Pointer(ccubin), C.int(n))
	C.free(unsafe.Pointer(ccubin))
	return cubin, log, nil
}

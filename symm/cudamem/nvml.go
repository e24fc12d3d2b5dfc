//go:build cuda

package cudamem

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// The few NVML calls the fingerprint needs, resolved with dlopen so the
// build needs neither nvml.h nor a link-time libnvidia-ml (the GPU machine's
// driver provides libnvidia-ml.so.1). Signatures as in nvml.h since CUDA 11.
typedef int (*nvmlInit_t)(void);
typedef int (*nvmlShutdown_t)(void);
typedef int (*nvmlDriverVersion_t)(char*, unsigned);
typedef int (*nvmlByBus_t)(const char*, void**);
typedef int (*nvmlLinkState_t)(void*, unsigned, int*);

static void* nvml;
static nvmlShutdown_t nvml_shutdown;
static nvmlDriverVersion_t nvml_driver;
static nvmlByBus_t nvml_by_bus;
static nvmlLinkState_t nvml_link;

static int symm_nvml_open(void) {
	if (nvml) return 0;
	void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) return 1;
	nvmlInit_t init = (nvmlInit_t)dlsym(h, "nvmlInit_v2");
	nvml_shutdown = (nvmlShutdown_t)dlsym(h, "nvmlShutdown");
	nvml_driver = (nvmlDriverVersion_t)dlsym(h, "nvmlSystemGetDriverVersion");
	nvml_by_bus = (nvmlByBus_t)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	nvml_link = (nvmlLinkState_t)dlsym(h, "nvmlDeviceGetNvLinkState");
	if (!init || !nvml_shutdown || !nvml_driver || !nvml_by_bus || !nvml_link) { dlclose(h); return 2; }
	if (init() != 0) { dlclose(h); return 3; }
	nvml = h;
	return 0;
}
static int symm_nvml_driver(char* buf, unsigned n) { return nvml_driver(buf, n); }
// symm_nvml_links counts the active NVLinks of the GPU at bus id, or -1.
static int symm_nvml_links(const char* bus) {
	void* dev = 0;
	if (nvml_by_bus(bus, &dev) != 0) return -1;
	int n = 0;
	for (unsigned l = 0; l < 32; l++) {
		int active = 0;
		int r = nvml_link(dev, l, &active);
		if (r == 2) break;          // NVML_ERROR_INVALID_ARGUMENT: past the last link
		if (r == 0 && active) n++;
	}
	return n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

var nvmlOnce sync.Once
var nvmlErr error

func nvmlOpen() error {
	nvmlOnce.Do(func() {
		if r := C.symm_nvml_open(); r != 0 {
			nvmlErr = fmt.Errorf("libnvidia-ml.so.1 unusable (code %d)", int(r))
		}
	})
	return nvmlErr
}

// kernelDriverVersion is the NVIDIA kernel driver's version ("580.159.04"),
// from NVML, else /proc/driver/nvidia/version.
func kernelDriverVersion() (string, error) {
	if nvmlOpen() == nil {
		buf := make([]byte, 96)
		if C.symm_nvml_driver((*C.char)(unsafe.Pointer(&buf[0])), C.uint(len(buf))) == 0 {
			return C.GoString((*C.char)(unsafe.Pointer(&buf[0]))), nil
		}
	}
	b, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return "", fmt.Errorf("driver version: %w", err)
	}
	// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Sun ..."
	f := strings.Fields(string(b))
	for i, w := range f {
		if w == "Module" && i+1 < len(f) {
			return f[i+1], nil
		}
	}
	return "", errors.New("driver version: unrecognised /proc/driver/nvidia/version")
}

// nvlinkCount is the number of active NVLinks of the GPU at PCI bus id, or an error.
func nvlinkCount(bus string) (int, error) {
	if err := nvmlOpen(); err != nil {
		return 0, err
	}
	cs := C.CString(bus)
	defer C.free(unsafe.Pointer(cs))
	n := int(C.symm_nvml_links(cs))
	if n < 0 {
		return 0, fmt.Errorf("nvml: no device at PCI bus %s", bus)
	}
	return n, nil
}

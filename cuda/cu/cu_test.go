//go:build cgo

package cu

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// childEnv marks a re-executed test binary that runs one test's body with
// the environment the parent chose (the loader runs once per process).
const childEnv = "SYMMTUNE_CU_TEST_CHILD"

// runChild re-runs test name in a fresh process with SYMMTUNE_LIBCUDA=lib.
func runChild(t *testing.T, name, lib string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", LibraryEnv+"="+lib)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process failed (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("child process did not run %s:\n%s", name, out)
	}
}

// TestMissingLibrary: without a driver library every call returns the
// loader's error (no panic, no exit), the first as well as later ones.
func TestMissingLibrary(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		runChild(t, "TestMissingLibrary", "/nonexistent/libcuda.so.1")
		return
	}
	var s Stream
	var e Event
	calls := []struct {
		name string
		call func() error
	}{
		{"Library", func() error { _, err := Library(); return err }},
		{"NumDevices", func() error { _, err := NumDevices(); return err }},
		{"Device.Name", func() error { _, err := Device(0).Name(); return err }},
		{"Device.Attributes", func() error { _, err := Device(0).Attributes(MultiprocessorCount); return err }},
		{"Device.RetainPrimaryCtx", func() error { _, err := Device(0).RetainPrimaryCtx(); return err }},
		{"Device.MakeContext", func() error { _, err := Device(0).MakeContext(SchedAuto); return err }},
		{"SetCurrentContext", func() error { return SetCurrentContext(CUContext{}) }},
		{"Synchronize", Synchronize},
		{"ProfilerStart", ProfilerStart},
		{"ProfilerStop", ProfilerStop},
		{"DriverVersion", func() error { _, err := DriverVersion(); return err }},
		{"MemAlloc", func() error { _, err := MemAlloc(1 << 20); return err }},
		{"MemFree", func() error { return MemFree(0) }},
		{"MemsetD8Async", func() error { return MemsetD8Async(0, 0, 1, s) }},
		{"IpcGetMemHandle", func() error { _, err := IpcGetMemHandle(0); return err }},
		{"MakeStream", func() error { _, err := MakeStream(NonBlocking); return err }},
		{"Stream.Destroy", s.Destroy},
		{"Stream.WaitOnValue32", func() error { return s.WaitOnValue32(0, 1, WaitValueGEQ) }},
		{"MakeEvent", func() error { _, err := MakeEvent(DisableTiming); return err }},
		{"DestroyEvent", func() error { return DestroyEvent(&e) }},
		{"LoadData", func() error { _, err := LoadData("x"); return err }},
		{"Function.Launch", func() error { return Function{}.Launch(1, 1, 1, 1, 1, 1, 0, s, nil) }},
		{"Stream.BeginCapture", func() error { return s.BeginCapture(CaptureRelaxed) }},
		{"ExchangeCaptureMode", func() error { _, err := ExchangeCaptureMode(CaptureRelaxed); return err }},
		{"TensorMapEncodeTiled", func() error {
			_, err := TensorMapEncodeTiled(9, 0, []uint64{64, 64}, []uint64{128}, []uint32{64, 64}, []uint32{1, 1}, 0, 3, 3, 0)
			return err
		}},
	}
	for _, c := range calls {
		err := c.call()
		if err == nil {
			t.Errorf("%s: no error without a driver library", c.name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "CUDA driver not available") || !strings.Contains(msg, "/nonexistent/libcuda.so.1") {
			t.Errorf("%s: error %q does not say the driver library is missing", c.name, msg)
		}
	}
}

// TestDriverExportsEverySymbol loads a real driver library (the one
// $SYMMTUNE_LIBCUDA names; make cuda-test points it at the fetched CUDA 12
// libcuda, which loads without a GPU) and checks that it exports every entry
// point under the name the package asks for. Without a GPU cuInit fails:
// the error must name it with the driver's error name.
func TestDriverExportsEverySymbol(t *testing.T) {
	lib := os.Getenv(LibraryEnv)
	if lib == "" {
		if os.Getenv("SYMMTUNE_REQUIRE_LIBCUDA") != "" {
			t.Fatalf("SYMMTUNE_REQUIRE_LIBCUDA is set but %s is not", LibraryEnv)
		}
		t.Skipf("%s not set: no driver library to check the symbol names against", LibraryEnv)
	}
	_, err := Library()
	if err != nil {
		var cerr *Error
		if !errors.As(err, &cerr) || cerr.Func != "cuInit" {
			t.Fatalf("loading %s: %v (want success, or cuInit's error where there is no GPU)", lib, err)
		}
		if !strings.HasPrefix(cerr.Code.Error(), "CUDA_ERROR_") {
			t.Errorf("cuInit's error %q does not carry the driver's error name", err)
		}
		if _, err2 := NumDevices(); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("NumDevices after a failed cuInit: %v, want the same error %v", err2, err)
		}
	}
	missing := map[string]bool{}
	for _, s := range MissingSymbols() {
		missing[s] = true
	}
	for _, name := range Symbols() {
		t.Run(name, func(t *testing.T) {
			if missing[name] {
				t.Errorf("%s does not export %s", lib, name)
			}
		})
	}
}

func TestSymbolsAreVersioned(t *testing.T) {
	// The plain names cuda.h maps to a _v2 symbol: binding one of them would
	// call the CUDA 3.x ABI (32-bit sizes and pointers).
	legacy := map[string]string{
		"cuMemAlloc": "cuMemAlloc_v2", "cuMemFree": "cuMemFree_v2", "cuMemcpyHtoD": "cuMemcpyHtoD_v2",
		"cuMemcpyDtoH": "cuMemcpyDtoH_v2", "cuMemcpyDtoDAsync": "cuMemcpyDtoDAsync_v2", "cuMemsetD8": "cuMemsetD8_v2",
		"cuMemsetD32": "cuMemsetD32_v2", "cuDeviceTotalMem": "cuDeviceTotalMem_v2", "cuCtxCreate": "cuCtxCreate_v2", "cuStreamDestroy": "cuStreamDestroy_v2",
		"cuEventDestroy": "cuEventDestroy_v2", "cuDevicePrimaryCtxRelease": "cuDevicePrimaryCtxRelease_v2",
		"cuIpcOpenMemHandle": "cuIpcOpenMemHandle_v2", "cuStreamBeginCapture": "cuStreamBeginCapture_v2",
		"cuStreamWaitValue32": "cuStreamWaitValue32_v2", "cuStreamWriteValue32": "cuStreamWriteValue32_v2",
	}
	seen := map[string]bool{}
	for _, name := range Symbols() {
		if want, ok := legacy[name]; ok {
			t.Errorf("binds %s, which cuda.h maps to %s", name, want)
		}
		if seen[name] {
			t.Errorf("%s bound twice", name)
		}
		seen[name] = true
		if !strings.HasPrefix(name, "cu") {
			t.Errorf("%q is not a driver entry point name", name)
		}
	}
	for _, want := range legacy {
		if !seen[want] {
			t.Errorf("%s not bound", want)
		}
	}
}

func TestParamValues(t *testing.T) {
	a, b := uint64(0xdeadbeef00000001), uint64(42)
	tests := []struct {
		name    string
		params  []unsafe.Pointer
		want    []uint64
		wantErr string
	}{
		{"none", nil, []uint64{}, ""},
		{"two", []unsafe.Pointer{unsafe.Pointer(&a), unsafe.Pointer(&b)}, []uint64{a, b}, ""},
		{"nil parameter", []unsafe.Pointer{unsafe.Pointer(&a), nil}, nil, "parameter 1 is a nil pointer"},
		{"too many", make([]unsafe.Pointer, MaxParams+1), nil, "at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := paramValues(tt.params)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestCheckOffsets(t *testing.T) {
	tests := []struct {
		name    string
		blobLen int
		offsets []int
		wantErr string
	}{
		{"empty", 0, nil, ""},
		{"inside", 136, []int{0, 128}, ""},
		{"past the end", 136, []int{0, 136}, "parameter 1 at offset 136, outside the 136-byte block"},
		{"negative", 8, []int{-1}, "offset -1"},
		{"too many", 1024, make([]int, MaxParams+1), "at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOffsets(tt.blobLen, tt.offsets)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestErrorPrintsWithoutDriver(t *testing.T) {
	// Before (or without) a loaded driver the code still prints.
	err := &Error{Func: "cuMemAlloc_v2", Code: OutOfMemory}
	if got := err.Error(); !strings.HasPrefix(got, "cuMemAlloc_v2: ") || !strings.Contains(got, "2") {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(err, OutOfMemory) {
		t.Error("errors.Is(err, OutOfMemory) = false")
	}
}

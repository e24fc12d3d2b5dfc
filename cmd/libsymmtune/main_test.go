package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestMain: loading the library must start no goroutine (the Go runtime's
// own threads aside): every package init has run when TestMain starts.
func TestMain(m *testing.M) {
	if n := runtime.NumGoroutine(); n != 1 {
		buf := make([]byte, 1<<16)
		os.Stderr.Write(buf[:runtime.Stack(buf, true)])
		os.Stderr.WriteString("package inits started goroutines\n")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// headerFuncs are the functions symmtune.h declares, and its ABI version.
func headerFuncs(t *testing.T) ([]string, string) {
	b, err := os.ReadFile("symmtune.h")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\w[\w ]*?\b(symmtune_\w+)\(`).FindAllStringSubmatch(string(b), -1) {
		names = append(names, m[1])
	}
	v := regexp.MustCompile(`#define SYMMTUNE_ABI_VERSION (\d+)`).FindStringSubmatch(string(b))
	if v == nil {
		t.Fatal("symmtune.h: no SYMMTUNE_ABI_VERSION")
	}
	slices.Sort(names)
	return names, v[1]
}

// TestExportsMatchHeader: the //export lines of this package are exactly
// the functions symmtune.h declares, and the ABI versions agree.
func TestExportsMatchHeader(t *testing.T) {
	want, version := headerFuncs(t)
	b, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^//export (\w+)$`).FindAllStringSubmatch(string(b), -1) {
		got = append(got, m[1])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("//export %v, symmtune.h declares %v", got, want)
	}
	if version != "5" || abiVersion != 5 {
		t.Errorf("SYMMTUNE_ABI_VERSION %s, abiVersion %d", version, abiVersion)
	}
}

// TestBuiltLibraryExports reads the dynamic symbols of the library make
// lib built ($SYMMTUNE_LIB, which make test sets), or of one built here:
// the header's functions, and no CUDA library among what it needs.
func TestBuiltLibraryExports(t *testing.T) {
	want, _ := headerFuncs(t)
	so := os.Getenv("SYMMTUNE_LIB")
	if so == "" {
		if testing.Short() {
			t.Skip("builds the library")
		}
		so = filepath.Join(t.TempDir(), "libsymmtune.so")
		cmd := exec.Command("go", "build", "-tags", "cuda", "-buildmode=c-shared", "-o", so, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build -buildmode=c-shared: %v\n%s", err, out)
		}
	}
	f, err := elf.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "symmtune_") && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			got = append(got, s.Name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("libsymmtune.so exports %v, symmtune.h declares %v", got, want)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if strings.Contains(l, "cuda") || strings.Contains(l, "nvrtc") || strings.Contains(l, "nvidia") {
			t.Errorf("libsymmtune.so needs %s: it must load without a GPU driver", l)
		}
	}
}

// TestCallCodes: answers, bad input and a panic, through the boundary's
// own function (cgo's C types are not usable in tests).
func TestCallCodes(t *testing.T) {
	if text, code := call("constants", nil); code != codeOK || !strings.Contains(string(text), `"payload_offset"`) {
		t.Errorf("constants: %d %s", code, text)
	}
	if text, code := call("hopper.tile", []byte(`{"name":"128x"}`)); code != codeBadInput || !strings.Contains(string(text), `"128x"`) {
		t.Errorf("bad tile: %d %s", code, text)
	}
	if _, code := call("no such op", nil); code != codeBadInput {
		t.Errorf("unknown op: %d", code)
	}
	defer func(f func(string, []byte) ([]byte, error)) { callOp = f }(callOp)
	callOp = func(string, []byte) ([]byte, error) { panic("boom") }
	if text, code := call("constants", nil); code != codeInternal || !strings.Contains(string(text), "boom") {
		t.Errorf("panic: %d %s", code, text)
	}
}

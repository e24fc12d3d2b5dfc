package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cProgram calls the library through symmtune.h as a C caller would: the
// ABI version, a length query (out NULL), the retry with the length asked
// for, and a bad-input message.
const cProgram = `#include <stdio.h>
#include <stdlib.h>
#include "symmtune.h"

int main(void) {
	if (symmtune_abi_version() != SYMMTUNE_ABI_VERSION) { puts("abi"); return 1; }
	size_t n = 0;
	int rc = symmtune_call("constants", "{}", NULL, 0, &n);
	if (rc != SYMMTUNE_TOO_SMALL || n == 0) { printf("probe %d %zu\n", rc, n); return 1; }
	char *buf = malloc(n);
	size_t m = 0;
	rc = symmtune_call("constants", NULL, buf, n, &m);
	if (rc != SYMMTUNE_OK || m != n || buf[0] != '{') { printf("answer %d %zu %zu\n", rc, m, n); return 1; }
	char msg[256];
	rc = symmtune_call("hopper.tile", "{\"name\":\"12x\"}", msg, sizeof msg, &m);
	if (rc != SYMMTUNE_BAD_INPUT) { printf("bad %d\n", rc); return 1; }
	printf("%.*s\n", (int)m, msg);
	rc = symmtune_call("constants", "{}", NULL, 5, &m);
	if (rc != SYMMTUNE_BAD_INPUT) { printf("null out %d\n", rc); return 1; }
	free(buf);
	/* The GEMM runtime: a request the rules reject, then (no GPU here)
	 * open's internal error naming CUDA; an unknown handle. */
	uint64_t regions[2] = {4096, 8192}, h = 0;
	rc = symmtune_gemm_open("{\"kernel\":\"agmm\",\"m\":4096,\"n\":1024,\"k\":1024,\"world\":2,\"rank\":5,\"dtype\":\"bf16\",\"device\":0,\"config\":{\"algo\":0,\"batch\":0,\"chunks\":2,\"copy\":\"ce\",\"copy_blocks\":4,\"direction\":\"pull\",\"graph\":1,\"impl\":\"pipeline\",\"sm_reserve\":0,\"streams\":1}}",
		regions, 2, 4096, &h, msg, sizeof msg);
	if (rc != SYMMTUNE_BAD_INPUT) { printf("open rank %d %s\n", rc, msg); return 1; }
	printf("%s\n", msg);
	rc = symmtune_gemm_open("{\"kernel\":\"agmm\",\"m\":4096,\"n\":1024,\"k\":1024,\"world\":2,\"rank\":1,\"dtype\":\"bf16\",\"device\":0,\"config\":{\"algo\":0,\"batch\":0,\"chunks\":2,\"copy\":\"ce\",\"copy_blocks\":4,\"direction\":\"pull\",\"graph\":1,\"impl\":\"pipeline\",\"sm_reserve\":0,\"streams\":1}}",
		regions, 2, 4096, &h, msg, sizeof msg);
	if (rc != SYMMTUNE_INTERNAL) { printf("open %d %s\n", rc, msg); return 1; }
	printf("%s\n", msg);
	rc = symmtune_gemm_enqueue(77, 0, 64, 1, 2, 3, 0, msg, 8);
	if (rc != SYMMTUNE_BAD_INPUT || msg[7] != 0) { printf("enqueue %d\n", rc); return 1; }
	rc = symmtune_gemm_enqueue_scaled(77, 0, 64, 1, 2, 3, 0, 4, 5, msg, sizeof msg);
	if (rc != SYMMTUNE_BAD_INPUT) { printf("enqueue_scaled %d\n", rc); return 1; }
	printf("%s\n", msg);
	if (symmtune_gemm_close(77) != SYMMTUNE_BAD_INPUT) { puts("close"); return 1; }
	/* The all-reduce runtime, likewise. */
	rc = symmtune_allreduce_open("{\"region_bytes\":6000,\"world\":2,\"rank\":1,\"dtype\":\"i8\",\"device\":0,\"config\":{\"algorithm\":\"one_shot\",\"threads\":128,\"blocks\":1,\"unroll\":1}}",
		regions, 2, 4096, &h, msg, sizeof msg);
	if (rc != SYMMTUNE_BAD_INPUT) { printf("ar open dtype %d %s\n", rc, msg); return 1; }
	printf("%s\n", msg);
	rc = symmtune_allreduce_open("{\"region_bytes\":6000,\"world\":2,\"rank\":1,\"dtype\":\"bf16\",\"device\":0,\"config\":{\"algorithm\":\"one_shot\",\"threads\":128,\"blocks\":1,\"unroll\":1}}",
		regions, 2, 4096, &h, msg, sizeof msg);
	if (rc != SYMMTUNE_INTERNAL) { printf("ar open %d %s\n", rc, msg); return 1; }
	printf("%s\n", msg);
	rc = symmtune_allreduce_enqueue(77, 0, 1, 10, msg, 8);
	if (rc != SYMMTUNE_BAD_INPUT || msg[7] != 0) { printf("ar enqueue %d\n", rc); return 1; }
	if (symmtune_allreduce_close(77) != SYMMTUNE_BAD_INPUT) { puts("ar close"); return 1; }
	return 0;
}
`

// TestCCaller compiles cProgram against symmtune.h and the library and
// runs it: the header is valid C and the protocol works from C.
func TestCCaller(t *testing.T) {
	so := os.Getenv("SYMMTUNE_LIB")
	if so == "" {
		if testing.Short() {
			t.Skip("builds the library")
		}
		so = filepath.Join(t.TempDir(), "libsymmtune.so")
		if out, err := exec.Command("go", "build", "-tags", "cuda", "-buildmode=c-shared", "-o", so, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build -buildmode=c-shared: %v\n%s", err, out)
		}
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "caller.c"), filepath.Join(dir, "caller")
	if err := os.WriteFile(src, []byte(cProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(so)
	if err != nil {
		t.Fatal(err)
	}
	// Linked by path, so the library's file name does not matter.
	if out, err := exec.Command(cc, "-Wall", "-Werror", "-I", hdr, "-o", bin, src, abs,
		"-Wl,-rpath,"+filepath.Dir(abs)).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("caller: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `tile "12x"`) || !strings.Contains(string(out), "rank 5") || !strings.Contains(string(out), "CUDA") ||
		!strings.Contains(string(out), "handle 77: not open") {
		t.Errorf("caller printed %q", out)
	}
}

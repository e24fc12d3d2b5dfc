package gpu

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cuda/e4m3"
)

// TestGenerators checks the ranges the check's tolerance assumes: e4m3
// inputs over the whole range (subnormals and values near ±448 included)
// and scales in [2^-9, 2^-8), each rank's different.
func TestGenerators(t *testing.T) {
	var sub, big, pos, neg int
	for i := int64(0); i < 400000; i++ {
		q := GenE4M3(7, 3, i)
		v := e4m3.Value(q)
		switch {
		case math.IsNaN(float64(v)) || math.Abs(float64(v)) > E4M3Max:
			t.Fatalf("GenE4M3 element %d: %#02x (%g)", i, q, v)
		case q&0x78 == 0 && q&7 != 0:
			sub++
		case math.Abs(float64(v)) >= 400:
			big++
		}
		if v > 0 {
			pos++
		} else if v < 0 {
			neg++
		}
	}
	// |u*448| is below 2^-6 with probability 2^-6/448 (~3.5e-5, 14 expected),
	// >= 400 with 0.107 (42800 expected).
	if sub == 0 || big < 38000 || pos < 190000 || neg < 190000 {
		t.Errorf("400000 inputs: %d subnormal, %d of magnitude >= 400, %d positive, %d negative", sub, big, pos, neg)
	}
	same := 0
	for i := int64(0); i < 10000; i++ {
		s := GenScale(7, TensorB, i)
		if s < 1.0/512 || s >= 1.0/256 {
			t.Fatalf("GenScale element %d = %g, want [2^-9, 2^-8)", i, s)
		}
		if s == GenScale(7, TensorScale, i) {
			same++
		}
	}
	if same > 10 {
		t.Errorf("ranks TensorB and TensorScale share %d of 10000 scales", same)
	}
	// The salt: scale i of a rank is not derived from its input i.
	if GenScale(7, 0, 0) == float32((1+(float64(e4m3.Value(GenE4M3(7, 0, 0)))/E4M3Max+1)/2)/512) {
		t.Errorf("scale 0 of rank 0 follows its input 0: the salt is missing")
	}
}

func TestUtilOptionsAndArgs(t *testing.T) {
	for _, c := range []struct {
		dtype string
		opts  string
		mode  ScaleMode
		nargs int
	}{
		{"bf16", "-DDTYPE_BF16=1", ScalesNone, 7},
		{"f16", "-DDTYPE_BF16=0", ScalesNone, 7},
		{"e4m3", "-DDTYPE_BF16=1 -DIN_E4M3=1", ScalesTensor, 9},
		{"e4m3_row", "-DDTYPE_BF16=1 -DIN_E4M3=1", ScalesRows, 9},
	} {
		opts, err := UtilOptions(c.dtype)
		if err != nil || strings.Join(opts, " ") != c.opts {
			t.Errorf("UtilOptions(%q) = %q, %v; want %q", c.dtype, opts, err, c.opts)
		}
		args, err := CheckRowsArgs(c.dtype, 1, 2, 3, 4, 5, 6, 7, TensorScale)
		if err != nil || len(args) != c.nargs {
			t.Fatalf("CheckRowsArgs(%q) = %v, %v; want %d arguments", c.dtype, args, err, c.nargs)
		}
		for i, v := range args[:7] {
			if v != uint64(i+1) {
				t.Errorf("CheckRowsArgs(%q) argument %d = %d, want %d", c.dtype, i, v, i+1)
			}
		}
		if c.nargs == 9 && (ScaleMode(args[7]) != c.mode || args[8] != TensorScale) {
			t.Errorf("CheckRowsArgs(%q) scale arguments %v, want mode %d, rank %#x", c.dtype, args[7:], c.mode, TensorScale)
		}
		if mode, err := ScaleModeOf(c.dtype); err != nil || mode != c.mode {
			t.Errorf("ScaleModeOf(%q) = %d, %v; want %d", c.dtype, mode, err, c.mode)
		}
	}
	for _, bad := range []string{"", "f32", "e5m2"} {
		if _, err := UtilOptions(bad); err == nil {
			t.Errorf("UtilOptions(%q): no error", bad)
		}
		if _, err := ScaleModeOf(bad); err == nil {
			t.Errorf("ScaleModeOf(%q): no error", bad)
		}
		if _, err := CheckRowsArgs(bad, 0, 0, 0, 0, 0, 0, 0, 0); err == nil {
			t.Errorf("CheckRowsArgs(%q): no error", bad)
		}
	}
}

// TestUtilDefines keeps this file's constants and argument orders equal to
// gemm_util.cu's.
func TestUtilDefines(t *testing.T) {
	src := string(source("kernels/gemm_util.cu"))
	for name, want := range map[string]uint64{
		"TENSOR_B": TensorB, "TENSOR_SCALE": TensorScale, "SCALE_SALT": ScaleSalt, "SCALE_RANK_SRC": ScaleRankSource,
		"SCALES_NONE": uint64(ScalesNone), "SCALES_TENSOR": uint64(ScalesTensor), "SCALES_ROWS": uint64(ScalesRows),
	} {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\S+?)(ull)?$`).FindStringSubmatch(src)
		if m == nil {
			t.Errorf("gemm_util.cu has no #define %s", name)
			continue
		}
		if got, err := strconv.ParseUint(m[1], 0, 64); err != nil || got != want {
			t.Errorf("gemm_util.cu: %s is %s, Go has %#x", name, m[1], want)
		}
	}
	params := func(re string) int {
		m := regexp.MustCompile(re).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("gemm_util.cu: no match for %s", re)
		}
		return strings.Count(m[1], "u64 ")
	}
	if n := params(`void fill_scales\(([^)]*)\)`); n != len(FillScalesArgs(0, 0, 0, 0, 0)) {
		t.Errorf("fill_scales has %d parameters, FillScalesArgs gives %d", n, len(FillScalesArgs(0, 0, 0, 0, 0)))
	}
	base, extra := params(`void check_rows\(([^)]*)\)`), params(`#define CHECK_SCALE_PARAMS (.*)`)
	bf, _ := CheckRowsArgs("bf16", 0, 0, 0, 0, 0, 0, 0, 0)
	fp8, _ := CheckRowsArgs("e4m3", 0, 0, 0, 0, 0, 0, 0, 0)
	if base != len(bf) || base+extra != len(fp8) {
		t.Errorf("check_rows has %d (+%d with IN_E4M3) parameters, CheckRowsArgs gives %d and %d", base, extra, len(bf), len(fp8))
	}
}

// cShim lets a C compiler build gemm_util.cu's e4m3 part (between its
// BEGIN e4m3 and END e4m3 lines) on the CPU, with CUDA's intrinsics
// written in C (the default rounding mode is CUDA's _rn).
const cShim = `#include <math.h>
#include <stdio.h>
#include <string.h>
typedef unsigned int u32;
#define __device__
#define __forceinline__ static inline
static inline u32 __float_as_uint(float f) { u32 u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(u32 u) { float f; memcpy(&f, &u, 4); return f; }
static inline u32 __float2uint_rn(float f) { return (u32)nearbyintf(f); }
`

const cMain = `
int main(void) {
	for (u32 q = 0; q < 256; q++) { u32 b = __float_as_uint(e4m3_val((unsigned char)q)); fwrite(&b, 4, 1, stdout); }
	static const u32 lows[] = {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff};
	for (u32 hi = 0; hi < 0x10000; hi++)
		for (u32 l = 0; l < 6; l++) putchar(e4m3_of(__uint_as_float(hi << 16 | lows[l])));
	return 0;
}
`

// TestE4M3KernelSourceOnCPU builds the CUDA encoder and decoder with the C
// compiler cgo uses and compares them with E4M3Of and E4M3Value: every
// sign, exponent and top 7 mantissa bits, with low bits that make ties,
// just-above-ties and sticky bits.
func TestE4M3KernelSourceOnCPU(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) here")
	}
	src := string(source("kernels/gemm_util.cu"))
	i, j := strings.Index(src, "// BEGIN e4m3"), strings.Index(src, "// END e4m3")
	if i < 0 || j < i {
		t.Fatal("gemm_util.cu has no BEGIN e4m3 ... END e4m3 part")
	}
	dir := t.TempDir()
	file, bin := filepath.Join(dir, "e4m3.c"), filepath.Join(dir, "e4m3")
	if err := os.WriteFile(file, []byte(cShim+src[i:j]+cMain), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-std=c99", "-O1", "-ffp-contract=off", "-o", bin, file, "-lm").CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	lows := []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xffff}
	if len(out) != 256*4+0x10000*len(lows) {
		t.Fatalf("%d bytes out", len(out))
	}
	for q := 0; q < 256; q++ {
		got := binary.LittleEndian.Uint32(out[4*q:])
		if want := math.Float32bits(e4m3.Value(uint8(q))); got != want {
			t.Errorf("e4m3_val(%#02x) = %#08x, E4M3Value %#08x", q, got, want)
		}
	}
	codes := out[256*4:]
	bad := 0
	for hi := uint32(0); hi < 0x10000; hi++ {
		for l, low := range lows {
			f := math.Float32frombits(hi<<16 | low)
			if got, want := codes[int(hi)*len(lows)+l], e4m3.Encode(f); got != want && bad < 10 {
				bad++
				t.Errorf("e4m3_of(%g, bits %#08x) = %#02x, E4M3Of %#02x", f, hi<<16|low, got, want)
			}
		}
	}
	if !bytes.Contains(codes, []byte{0x7e}) || !bytes.Contains(codes, []byte{0x01}) {
		t.Error("the inputs reach neither 448 nor the smallest subnormal")
	}
}

//go:build cuda

package cublaslt

import (
	"errors"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cuda/cu"
)

// These tests need no GPU and no cuBLASLt: they cover what Plan, Run and
// RunScaled refuse before they call the library.

func TestDTypeOf(t *testing.T) {
	for name, want := range map[string]DType{"bf16": BF16, "f16": F16, "e4m3": E4M3} {
		got, err := DTypeOf(name)
		if err != nil || got != want {
			t.Errorf("DTypeOf(%q) = %v, %v; want %v", name, got, err, want)
		}
		if got.String() != name {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), name)
		}
	}
	// cudaDataType values from library_types.h.
	if BF16 != 14 || F16 != 2 || E4M3 != 28 {
		t.Errorf("BF16, F16, E4M3 = %d, %d, %d; want 14, 2, 28", BF16, F16, E4M3)
	}
	for _, name := range []string{"e5m2", "f32", "", "e4m3_row"} {
		if _, err := DTypeOf(name); err == nil {
			t.Errorf("DTypeOf(%q) succeeded", name)
		}
	}
}

func TestNormalize(t *testing.T) {
	fp8 := Matmul{M: 256, N: 384, K: 512, DType: E4M3, Out: BF16, Scaling: TensorScales, BT: true}
	with := func(f func(*Matmul)) Matmul {
		m := fp8
		f(&m)
		return m
	}
	for _, c := range []struct {
		name string
		m    Matmul
		want string // "" for valid; else a piece of the error
		out  DType  // valid: the normalized Out
	}{
		{"bf16", Matmul{M: 8, N: 16, K: 32, DType: BF16}, "", BF16},
		{"f16 out f16", Matmul{M: 8, N: 16, K: 32, DType: F16, Out: F16}, "", F16},
		{"bf16 fast accum is ignored", Matmul{M: 8, N: 16, K: 32, DType: BF16, FastAccum: true}, "", BF16},
		{"e4m3 tensor", fp8, "", BF16},
		{"e4m3 rows fast", with(func(m *Matmul) { m.Scaling, m.FastAccum = RowScales, true }), "", BF16},
		{"e4m3 tensor batched", with(func(m *Matmul) { m.Batch, m.StrideA, m.StrideD = 4, 256*512, 256*384 }), "", BF16},
		{"e4m3 B [K,N] (the library decides)", with(func(m *Matmul) { m.BT = false }), "", BF16},

		{"bf16 out f16", Matmul{M: 8, N: 16, K: 32, DType: BF16, Out: F16}, "write bf16", 0},
		{"bf16 scaled", Matmul{M: 8, N: 16, K: 32, DType: BF16, Scaling: TensorScales}, "unscaled", 0},
		{"f16 row scales", Matmul{M: 8, N: 16, K: 32, DType: F16, Scaling: RowScales}, "unscaled", 0},
		{"no dtype", Matmul{M: 8, N: 16, K: 32}, "element type", 0},
		{"e5m2 dtype", Matmul{M: 8, N: 16, K: 32, DType: 29, Out: BF16, Scaling: TensorScales}, "element type", 0},
		{"e4m3 out unset", with(func(m *Matmul) { m.Out = 0 }), "Out: BF16", 0},
		{"e4m3 out f16", with(func(m *Matmul) { m.Out = F16 }), "Out: BF16", 0},
		{"e4m3 out e4m3", with(func(m *Matmul) { m.Out = E4M3 }), "Out: BF16", 0},
		{"e4m3 unscaled", with(func(m *Matmul) { m.Scaling = Unscaled }), "TensorScales or RowScales", 0},
		{"e4m3 unknown scaling", with(func(m *Matmul) { m.Scaling = 7 }), "TensorScales or RowScales", 0},
		{"rows batched", with(func(m *Matmul) { m.Scaling, m.Batch, m.StrideA, m.StrideD = RowScales, 2, 256*512, 256*384 }), "Batch > 1", 0},
		{"zero M", with(func(m *Matmul) { m.M = 0 }), "positive", 0},
		{"lda short", with(func(m *Matmul) { m.LDA = 100 }), "leading dimension", 0},
		{"ldb short (B [N,K])", with(func(m *Matmul) { m.LDB = 384 }), "leading dimension", 0},
		{"strides overlap", with(func(m *Matmul) { m.Batch, m.StrideA, m.StrideD = 2, 256*512, 100 }), "overlap", 0},
		{"negative workspace", with(func(m *Matmul) { m.Workspace = -1 }), "negative", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.m.normalize()
			if c.want == "" {
				if err != nil {
					t.Fatalf("normalize: %v", err)
				}
				if got.Out != c.out || got.Batch < 1 || got.LDA < got.K || got.LDD < got.N {
					t.Errorf("normalized to %+v", got)
				}
				// A valid Matmul reaches the library: here, a closed handle.
				if _, err := (&Handle{}).Plan(c.m); err == nil || !strings.Contains(err.Error(), "closed") {
					t.Errorf("Plan on a closed handle: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("normalize: %v; want an error about %q", err, c.want)
			}
			// Plan refuses it before it looks at the handle.
			if _, err := (&Handle{}).Plan(c.m); err == nil || !errors.Is(err, errInvalid) {
				t.Errorf("Plan: %v; want the same refusal", err)
			}
		})
	}
}

func TestNormalizeDefaults(t *testing.T) {
	for _, c := range []struct {
		m             Matmul
		lda, ldb, ldd int
	}{
		{Matmul{M: 8, N: 16, K: 32, DType: BF16}, 32, 16, 16},
		{Matmul{M: 8, N: 16, K: 32, DType: BF16, BT: true}, 32, 32, 16},
		{Matmul{M: 8, N: 16, K: 32, DType: BF16, LDA: 64, LDB: 48, LDD: 80}, 64, 48, 80},
	} {
		got, err := c.m.normalize()
		if err != nil {
			t.Fatal(err)
		}
		if got.LDA != c.lda || got.LDB != c.ldb || got.LDD != c.ldd || got.Batch != 1 {
			t.Errorf("%v: ld %d,%d,%d batch %d; want %d,%d,%d batch 1", c.m, got.LDA, got.LDB, got.LDD, got.Batch, c.lda, c.ldb, c.ldd)
		}
	}
}

func TestRunRefusals(t *testing.T) {
	scaled := &Plan{Matmul: Matmul{M: 8, N: 16, K: 32, DType: E4M3, Out: BF16, Scaling: TensorScales}}
	unscaled := &Plan{Matmul: Matmul{M: 8, N: 16, K: 32, DType: BF16}}
	const a, b, d, ws, sa, sb = cu.DevicePtr(0x1000), cu.DevicePtr(0x2000), cu.DevicePtr(0x3000), cu.DevicePtr(0), cu.DevicePtr(0x4000), cu.DevicePtr(0x5000)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"Run on a scaled plan", scaled.Run(cu.Stream{}, 0, a, b, d, ws), "RunScaled"},
		{"RunScaled without scale A", scaled.RunScaled(cu.Stream{}, 0, a, b, d, ws, 0, sb), "both scale pointers"},
		{"RunScaled without scale B", scaled.RunScaled(cu.Stream{}, 0, a, b, d, ws, sa, 0), "both scale pointers"},
		{"RunScaled with scales on an unscaled plan", unscaled.RunScaled(cu.Stream{}, 0, a, b, d, ws, sa, sb), "unscaled plan"},
		// These pass the scale checks and stop at the (empty) ranking.
		{"RunScaled scaled", scaled.RunScaled(cu.Stream{}, 0, a, b, d, ws, sa, sb), "algorithm 0 of 0"},
		{"RunScaled unscaled, no scales", unscaled.RunScaled(cu.Stream{}, 0, a, b, d, ws, 0, 0), "algorithm 0 of 0"},
		{"Run unscaled", unscaled.Run(cu.Stream{}, -1, a, b, d, ws), "algorithm -1 of 0"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v; want an error about %q", c.name, c.err, c.want)
		}
	}
}

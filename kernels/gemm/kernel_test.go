package gemm_test

import (
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/gemmtest"
	"github.com/symmtune/symmtune/space"
)

var testKernel = gemm.CPUKernel{
	Name:         "gemmtest",
	Summary:      "test",
	Source:       []byte("package gemmtest\n// source\n"),
	PayloadElems: func(d gemm.Dims) int64 { return int64(d.M) * int64(d.N) },
}

func TestCPUKernelValidate(t *testing.T) {
	p := space.Problem{Shape: space.Shape{"m": 512, "n": 256, "k": 256}, Dtype: "f32"}
	bf := p
	bf.Dtype = "bf16"
	c := gemmtest.Cfg(32, 64, 64, 1, 32, 1, gemm.Fused)
	tests := []struct {
		name    string
		p       space.Problem
		world   int
		backend string
		ok      bool
	}{
		{"valid", p, 2, "cpu", true},
		{"bf16 on the cpu build", bf, 2, "cpu", false},
		{"cuda backend on the cpu build", p, 2, "cuda", false},
		{"m=512 over 3 ranks", p, 3, "cpu", false},
	}
	for _, tc := range tests {
		err := testKernel.Validate(c, tc.p, tc.world, tc.backend)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestCPUKernelDescribe(t *testing.T) {
	d := testKernel.Describe()
	if d.Name != "gemmtest" || len(d.KernelVersion) != 12 {
		t.Fatalf("describe: %+v", d)
	}
	other := testKernel
	other.Source = []byte("package gemmtest\n// another source\n")
	if other.Describe().KernelVersion == d.KernelVersion {
		t.Error("the kernel version does not change with the plugin's source")
	}
	if err := d.Space.Check(d.Default); err != nil {
		t.Fatalf("default config outside the space: %v", err)
	}
	p := space.Problem{Shape: space.Shape{"m": 512, "n": 256, "k": 256}, Dtype: "f32"}
	if err := testKernel.Validate(d.Default, p, 2, "cpu"); err != nil {
		t.Fatalf("default config invalid on the quickstart shape: %v", err)
	}
	want, _ := gemm.SymmetricBytes(512, 512*256, 4)
	if got, err := testKernel.SymmetricBytes(p, 2, "cpu"); err != nil || got != want {
		t.Errorf("SymmetricBytes = %d, %v; want %d (flags plus the payload)", got, err, want)
	}
}

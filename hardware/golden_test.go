package hardware

import (
	"testing"

	"github.com/symmtune/symmtune/internal/golden"
)

// idCase is one fingerprint and its ID. python/tests/test_hardware.py asks
// libsymmtune for the IDs of testdata/ids.json's cases: the Python binding
// carries every field.
type idCase struct {
	Fingerprint Fingerprint `json:"fingerprint"`
	ID          string      `json:"id"`
	NoDriverID  string      `json:"id_without_driver"`
}

func goldenFingerprints() []Fingerprint {
	h200 := Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 4, SMs: 132, MemoryMiB: 143771, Compute: "9.0", Driver: "580.95.05", Interconnect: "NVLink x18"}
	return []Fingerprint{
		{Kind: "cpu", Name: "AMD EPYC 7B13", Count: 1, Cores: 2, Interconnect: "shm"},
		{Kind: "cpu", Name: "AMD EPYC 7B13", Count: 1, Cores: 2, Interconnect: "tcp"},
		h200,
		{Kind: "gpu", Name: "NVIDIA H200", Count: 1, SMs: 132, MemoryMiB: 143771, Compute: "9.0", Driver: "cuda13.0", Interconnect: "none"},
		{Kind: "gpu", Name: "NVIDIA H100 80GB HBM3", Count: 8, SMs: 132, MemoryMiB: 81559, Compute: "9.0", Interconnect: "PCIe P2P"},
		{Kind: "gpu", Name: "X", Compute: "gfx942"},
		{Kind: "gpu", Name: "X", Compute: "9.0a"},
		{Kind: "gpu", Name: "X", MemoryMiB: 256},
		{Kind: "gpu", Name: "X", MemoryMiB: 511},
		{Kind: "gpu", Name: "X", MemoryMiB: 512},
		{Kind: "gpu", Name: "X", MemoryMiB: 1535},
		{Kind: "gpu", Name: "X", MemoryMiB: 1536},
		{Kind: "cpu", Name: "  Foo\t CPU @ 2.0GHz / v2\n", Cores: 4},
		{Kind: "cpu", Name: "a\u00a0\u0085b\x01c\x7fd\u2003e", Cores: 1},
		{Kind: "cpu", Name: "\u2003trimmed\u3000", Cores: 1},
		{Kind: " gpu ", Name: "Y", Count: -2, Cores: 0, SMs: -1, Driver: " 1 / 2 "},
		{},
	}
}

func TestIDGolden(t *testing.T) {
	var cases []idCase
	for _, f := range goldenFingerprints() {
		cases = append(cases, idCase{f, f.ID(), f.WithoutDriver().ID()})
	}
	golden.JSON(t, "testdata/ids.json", cases)
}

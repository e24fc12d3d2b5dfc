package hopper

import (
	"slices"
	"strings"
	"testing"
)

func TestElem(t *testing.T) {
	for _, c := range []struct {
		e         Elem
		bytes, bk int
		name      string
	}{
		{ElemBF16, 2, 64, "bf16"},
		{ElemF16, 2, 64, "f16"},
		{ElemE4M3, 1, 128, "e4m3"},
		{0, 0, 0, "Elem(0)"},
	} {
		if c.e.Bytes() != c.bytes || c.e.BK() != c.bk || c.e.String() != c.name {
			t.Errorf("%d: Bytes %d BK %d String %q, want %d %d %q", int(c.e), c.e.Bytes(), c.e.BK(), c.e, c.bytes, c.bk, c.name)
		}
		// A k-block row is one 128-byte swizzle row whatever the type.
		if c.bytes > 0 && c.e.BK()*c.bytes != KBlockBytes {
			t.Errorf("%v: BK %d x %d bytes is not a 128-byte row", c.e, c.e.BK(), c.bytes)
		}
		// K of one element past whole blocks takes one more, partial block.
		for _, k := range []struct{ k, want int }{{0, 0}, {1, min(c.bk, 1)}, {c.bk, min(c.bk, 1)}, {3*c.bk + 1, min(c.bk, 4)}} {
			if got := c.e.KBlocks(k.k); got != k.want {
				t.Errorf("%v: KBlocks(%d) = %d, want %d", c.e, k.k, got, k.want)
			}
		}
	}
	if BK != ElemBF16.BK() {
		t.Errorf("BK %d, bf16's %d", BK, ElemBF16.BK())
	}
	if f := (Format{Elem: ElemE4M3, RowScales: true}); f.String() != "e4m3_row" || !f.Scaled() {
		t.Errorf("%v: Scaled %v", f, f.Scaled())
	}
	if Format16(true) != (Format{Elem: ElemBF16}) || Format16(false) != (Format{Elem: ElemF16}) {
		t.Error("Format16")
	}
}

func TestCheckFormat(t *testing.T) {
	kMajor := Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true}
	mnMajor := kMajor
	mnMajor.BKMajor = false
	for _, c := range []struct {
		name string
		tile Tile
		f    Format
		want string // "" accepts; else a substring of the reason
	}{
		{"bf16", kMajor, Format{Elem: ElemBF16}, ""},
		{"f16 with B stored [K, N]", mnMajor, Format{Elem: ElemF16}, ""},
		{"e4m3", kMajor, Format{Elem: ElemE4M3}, ""},
		{"e4m3 row scales", kMajor, Format{Elem: ElemE4M3, RowScales: true}, ""},
		{"e4m3 with B stored [K, N]", mnMajor, Format{Elem: ElemE4M3}, "K-major"},
		{"row scales on bf16", kMajor, Format{Elem: ElemBF16, RowScales: true}, "only e4m3"},
		{"no element type", kMajor, Format{}, "bf16, f16 or e4m3"},
		{"unknown element type", kMajor, Format{Elem: 9}, "Elem(9)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.tile.CheckFormat(c.f)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("accepted, want a reason with %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("reason %q lacks %q", err, c.want)
			}
		})
	}
}

func TestCheckShapeFor(t *testing.T) {
	tile := Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true}
	bf16, e4m3 := Format{Elem: ElemBF16}, Format{Elem: ElemE4M3, RowScales: true}
	for _, c := range []struct {
		f    Format
		n, k int
		ok   bool
	}{
		{bf16, 3584, 8192, true},
		{bf16, 1096, 520, true}, // 520 two-byte elements: 1040-byte rows
		{e4m3, 3584, 8192, true},
		{e4m3, 1096, 528, true},
		{e4m3, 1096, 520, false}, // 520-byte rows are not 16-byte multiples
		{e4m3, 3585, 8192, false},
		{bf16, 3584, 8190, false},
	} {
		if err := tile.CheckShapeFor(c.f, c.n, c.k); (err == nil) != c.ok {
			t.Errorf("%v n=%d k=%d: err %v, want ok=%v", c.f, c.n, c.k, err, c.ok)
		}
	}
}

// Options: two-byte formats keep the flags they always had (the python
// parity answers and compiled variants are unchanged); e4m3 builds one-byte
// inputs with bf16 output, and row scales on top.
func TestOptions(t *testing.T) {
	tile := Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true}
	base := []string{"-DB_KMAJOR=1", "-DBM=128", "-DBN=256", "-DSTAGES=4", "-DCONSUMERS=2", "-DPINGPONG=0", "-DGROUP_M=8", "-DEPI_BUFS=4", "-DCLUSTER_M=1"}
	with := func(first string, rest ...string) []string {
		return append(append([]string{first}, base...), rest...)
	}
	for _, c := range []struct {
		f    Format
		want []string
	}{
		{Format{Elem: ElemBF16}, with("-DDTYPE_BF16=1")},
		{Format{Elem: ElemF16}, with("-DDTYPE_BF16=0")},
		{Format{Elem: ElemE4M3}, with("-DDTYPE_BF16=1", "-DIN_E4M3=1")},
		{Format{Elem: ElemE4M3, RowScales: true}, with("-DDTYPE_BF16=1", "-DIN_E4M3=1", "-DROW_SCALES=1")},
		// No output type: the kernel's #error stops the compile.
		{Format{}, base},
	} {
		if got := tile.Options(c.f); !slices.Equal(got, c.want) {
			t.Errorf("%v: Options\n got %q\nwant %q", c.f, got, c.want)
		}
	}
}

// The kernel's scaled variants name their macros as Options does, and the
// generated wrappers hold the FP8 form: k32, e4m3, no transpose operand.
func TestSourceHasFP8(t *testing.T) {
	for _, want := range []string{"#if IN_E4M3", "#if ROW_SCALES && !IN_E4M3", "u64 scale_a, u64 scale_b, u64 scale_a_own,", `#define WGMMA_K "32"`, `#define WGMMA_AB "e4m3"`, `#define WGMMA_TRANS(i) ""`} {
		if !strings.Contains(Source, want) {
			t.Errorf("Source lacks %q", want)
		}
	}
}

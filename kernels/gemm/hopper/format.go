package hopper

import "fmt"

// Elem is the element type of the kernel's operands A and B
// (docs/fp8.md). The zero Elem is no type: a Format must name one.
type Elem int

// The operand types: bf16 and f16 products write C in their own type,
// e4m3 products write bf16.
const (
	ElemBF16 Elem = iota + 1
	ElemF16
	ElemE4M3
)

// Bytes is the size of one element (0 for an unknown Elem).
func (e Elem) Bytes() int {
	switch e {
	case ElemBF16, ElemF16:
		return 2
	case ElemE4M3:
		return 1
	}
	return 0
}

// BK is the k-block in elements: one 128-byte swizzle row of a tile
// whatever the type (64 two-byte or 128 one-byte elements), so shared
// memory, swizzle and descriptor steps are the same in bytes.
func (e Elem) BK() int {
	if b := e.Bytes(); b > 0 {
		return KBlockBytes / b
	}
	return 0
}

// KBlocks is how many k-blocks (BK) cover k elements, the last one
// partial where BK does not divide k; 0 for an unknown type.
func (e Elem) KBlocks(k int) int {
	if bk := e.BK(); bk > 0 {
		return (k + bk - 1) / bk
	}
	return 0
}

// String is the element type's dtype name.
func (e Elem) String() string {
	switch e {
	case ElemBF16:
		return "bf16"
	case ElemF16:
		return "f16"
	case ElemE4M3:
		return "e4m3"
	}
	return fmt.Sprintf("Elem(%d)", int(e))
}

// KBlockBytes is one row of a k-block of A or B in shared memory: the
// 128-byte swizzle's width, which makes shared-memory reads conflict-free.
const KBlockBytes = 128

// OutBytes is the size of an element of C: 2 for every format (bf16 or
// f16; e4m3 products write bf16).
const OutBytes = 2

// Format is the number format of one product: its operand type and, for
// e4m3, how the fp32 scales apply (one each for A and B, or one per row of
// A and per column of C).
type Format struct {
	Elem      Elem
	RowScales bool
}

// String is the format's dtype name (docs/fp8.md): bf16, f16, e4m3 or
// e4m3_row.
func (f Format) String() string {
	if f.RowScales {
		return f.Elem.String() + "_row"
	}
	return f.Elem.String()
}

// Scaled reports whether the epilogue multiplies by scale_a and scale_b.
func (f Format) Scaled() bool { return f.Elem == ElemE4M3 }

// CheckFormat rejects formats the tile cannot be built for: an unknown
// element type, row scales on unscaled types, and e4m3 with B stored
// [K, N] (FP8 wgmma reads only K-major operands). Shapes are
// CheckShapeFor's.
func (t Tile) CheckFormat(f Format) error {
	switch {
	case f.Elem.Bytes() == 0:
		return fmt.Errorf("element type %v: the fused kernel takes bf16, f16 or e4m3", f.Elem)
	case f.RowScales && !f.Scaled():
		return fmt.Errorf("%v with row scales: only e4m3 operands are scaled", f.Elem)
	case f.Elem == ElemE4M3 && !t.BKMajor:
		return fmt.Errorf("%v with B stored [K, N] (tile %v): FP8 wgmma reads only K-major operands, so B must be stored [N, K]", f, t)
	}
	return nil
}

// CheckShapeFor is CheckShape for operands of format f: TMA needs every row
// of A and B to start 16-byte aligned, so k is a multiple of 16 for
// one-byte elements (8 for two-byte ones); and a split-K tile needs a
// k-block for each of its slices (a ragged last k-block or an uneven cut
// is fine: KSlice).
func (t Tile) CheckShapeFor(f Format, n, k int) error {
	if b := f.Elem.Bytes(); b == 1 && k%16 != 0 {
		return fmt.Errorf("k=%d: the fused kernel's TMA loads need rows of A and B that are multiples of 16 bytes (k a multiple of 16 for %v)", k, f.Elem)
	}
	if err := t.CheckShape(n, k); err != nil {
		return err
	}
	if bk := f.Elem.BK(); bk > 0 && t.KSplits() > 1 {
		if kb := (k + bk - 1) / bk; kb < t.KSplits() {
			return fmt.Errorf("k=%d: its %d k-blocks of %d cannot be cut into split-K's %d slices", k, kb, bk, t.KSplits())
		}
	}
	return nil
}

// Format16 is the format of bf16 (bf16 true) or f16 operands: for callers
// that carry the two-byte types' flag.
func Format16(bf16 bool) Format {
	if bf16 {
		return Format{Elem: ElemBF16}
	}
	return Format{Elem: ElemF16}
}

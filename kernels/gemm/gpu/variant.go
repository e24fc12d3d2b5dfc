package gpu

import "fmt"

// Variant is which of the two GPU GEMM kernels a rule is for. Parse a
// kernel name once where it comes in (ParseVariant) and switch on the
// Variant after that: the rules of space.go, plan.go and layout.go are its
// methods.
type Variant uint8

// The variants; the zero Variant is none of them.
const (
	VariantAGMM     Variant = iota + 1 // all-gather + matmul, the plugin AGMM
	VariantMatmulRS                    // matmul + reduce-scatter, the plugin MatmulRS
)

// Variants are both, in the order the library lists them.
var Variants = []Variant{VariantAGMM, VariantMatmulRS}

// ParseVariant reads a kernel name (AGMM or MatmulRS).
func ParseVariant(name string) (Variant, error) {
	switch name {
	case AGMM:
		return VariantAGMM, nil
	case MatmulRS:
		return VariantMatmulRS, nil
	}
	return 0, fmt.Errorf("kernel %q: want %q or %q", name, AGMM, MatmulRS)
}

// String is the kernel's name, as its plugin declares it.
func (v Variant) String() string {
	switch v {
	case VariantAGMM:
		return AGMM
	case VariantMatmulRS:
		return MatmulRS
	}
	return fmt.Sprintf("Variant(%d)", uint8(v))
}

// MarshalText writes the kernel's name, so a Variant is its name in JSON.
func (v Variant) MarshalText() ([]byte, error) {
	if v != VariantAGMM && v != VariantMatmulRS {
		return nil, fmt.Errorf("no GPU GEMM kernel: %s", v)
	}
	return []byte(v.String()), nil
}

// UnmarshalText reads a kernel's name (ParseVariant).
func (v *Variant) UnmarshalText(b []byte) error {
	p, err := ParseVariant(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// BarrierFirst is whether a call of v with config c may put its end
// barrier before its other streams have joined the call's stream, as the
// fused GEMM's programmatic dependent. It may where the GEMM, by its
// completion, has seen every flag the barrier clears and every byte a
// peer sends (it waits for them all), so that a peer passing the barrier
// can no longer race this rank's streams: what is left on them then
// touches neither this rank's flags nor a peer's next call (a matmulrs
// copy stream's local flags, cleared by the stream itself; an agmm pull's
// ready flag, consumed before its chunk is flagged). Not for pipelines
// (products on several streams), nor for matmulrs with reduce=kernel:
// its reduce stream waits for the peers' flags, which the barrier
// clears, and reads their slots.
func BarrierFirst(v Variant, c Config) bool {
	return c.Impl == ImplFused && (v != VariantMatmulRS || c.Reduce == ReduceEpilogue)
}

// FusedEndBarrier is whether a fused call of v on p ends with the end
// barrier (Runner.endBarrier: this rank's flags cleared, then the team
// met). A fused call of one rank is a plain product (FusedPlain): it sets
// no flag, waits for none and has nobody to meet, so it ends with its
// GEMM. In a torch program on 1 x H200 the barrier ended 1.6-1.8 µs after
// the GEMM in every world-1 agmm call, 10-20% of a call at 64 rows
// (bench/results/2026-12-03-h200-program-kernels.md).
func FusedEndBarrier(v Variant, p Problem) bool {
	return !FusedPlain(v, p)
}

// FusedPlain is whether a fused call of v on p runs the GEMM alone: C = A
// * B into the caller's output, with no chunk table, flag, start gate or
// reduce-scatter epilogue. So it is at world 1: an all-gather of one rank
// gathers nothing, and a reduce-scatter of one rank is its product. The
// matmulrs epilogue of one rank (its tile counts, system-scope fences and
// flags, the waiting warp's barriers) cost 1.6-6.4% over agmm's same tile
// in a torch program on 1 x H200, and left its fused tiles 5.5-8.4% behind
// the cuBLASLt pipeline in every recorded world-1 landscape
// (bench/results/2026-12-03-h200-landscapes-w1.md). Its own cost at world
// 2 and more is gemmalone -rs's to measure.
func FusedPlain(v Variant, p Problem) bool {
	return p.World == 1 && (v == VariantAGMM || v == VariantMatmulRS)
}

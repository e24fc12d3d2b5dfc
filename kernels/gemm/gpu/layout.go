package gpu

import "fmt"

// Symmetric region layout on GPUs, for both kernels:
//
//	[flag words, FlagStride bytes apart][payload from PayloadOffset]
//
// Every flag is a mailbox with one producer and one consumer, both fixed by
// the plan: the producer sets it to 1 (a fenced stream write, after the
// data it announces) in the consumer's region, the consumer's stream waits
// for 1 (bounded, as the barrier's waits: Runner.consume) and clears it.
// Flags hold no call counter, so a call is the same operations every time
// (it can be captured in a CUDA graph and replayed),
// and the end-of-call barrier keeps a producer's next set from overtaking
// the consumer's clear. Each rank clears its flags before every trial.
//
//	PartialFlag(src, c): agmm push, chunk c of src's shard is in my
//	buffer; matmulrs, src's partial of chunk c of my rows is in my slot src.
//	ReadyFlag(src): agmm pull, src's shard is in place and may be read.
//	StartFlag(src): src's call has reached its fused GEMM (see
//	instance.launchFusedGEMM).
//
// agmm's payload is the gathered A [M, K] (ElemSize bytes each): rank q's
// shard at rows [q*M/W, (q+1)*M/W), its own written by the caller, the
// others copied in. With dtype e4m3_row the gathered scales [M] (fp32)
// follow at AGScaleOffset, rank q's at [q*M/W, (q+1)*M/W) again, each
// chunk's copied with its rows and before its flag. matmulrs's payload is
// World slots of SlotElems(p) elements of OutBytes (bf16 or f16 partials,
// whatever the inputs): slot src holds rank src's partial of this rank's
// rows, [M/W, N].

// FlagStride keeps each flag word in its own cache line.
const FlagStride = 64

// PartialFlag is the index of the flag for chunk c from rank src.
func PartialFlag(src, c int) int { return src*MaxChunks + c }

// ReadyFlag is the index of the flag for rank src's whole shard.
func ReadyFlag(src int) int { return MaxWorld*MaxChunks + src }

// StartFlag is the index of the flag for rank src's call reaching its
// fused GEMM.
func StartFlag(src int) int { return MaxWorld*MaxChunks + MaxWorld + src }

// A FlagWait is flags of one kind and chunk in this rank's region, one
// per source rank of Sources (bit q: rank q), source q's at flag index
// First + q*Stride: what one launch of gemm_util.cu's wait_flags waits
// for (Runner.consume), each source's flag on a lane of its own.
type FlagWait struct {
	First, Stride int
	Sources       uint32
}

// FlagWaits groups flag indices into FlagWaits, one per kind and chunk
// (PartialFlag's chunk; one for ReadyFlag's, one for StartFlag's), in
// the order of each group's first index in idx. Every index must be a
// flag, and none twice: each flag has one consumer, whose wait clears it.
func FlagWaits(idx []int) ([]FlagWait, error) {
	var out []FlagWait
	at := map[[2]int]int{} // (kind, chunk) -> index in out
	for _, i := range idx {
		var kind, chunk, src int
		var w FlagWait
		switch {
		case i < 0 || i >= flagCount:
			return nil, fmt.Errorf("flag index %d: not a flag (0..%d)", i, flagCount-1)
		case i < MaxWorld*MaxChunks:
			kind, chunk, src = 0, i%MaxChunks, i/MaxChunks
			w = FlagWait{First: PartialFlag(0, chunk), Stride: MaxChunks}
		case i < MaxWorld*MaxChunks+MaxWorld:
			kind, src = 1, i-ReadyFlag(0)
			w = FlagWait{First: ReadyFlag(0), Stride: 1}
		default:
			kind, src = 2, i-StartFlag(0)
			w = FlagWait{First: StartFlag(0), Stride: 1}
		}
		k := [2]int{kind, chunk}
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, w)
		}
		if out[j].Sources&(1<<src) != 0 {
			return nil, fmt.Errorf("flag index %d listed twice", i)
		}
		out[j].Sources |= 1 << src
	}
	return out, nil
}

// flagCount is how many flags a region holds.
const flagCount = MaxWorld*MaxChunks + 2*MaxWorld

// PayloadOffset is where the payload starts: past every flag, page aligned.
const PayloadOffset = (flagCount*FlagStride + 4095) / 4096 * 4096

// SlotElems is the distance between matmulrs slots in elements: the rows
// each rank owns times n, rounded up to 16 bytes so every slot starts
// 16-byte aligned and the reduction's vector path sees one alignment.
func SlotElems(p Problem) int64 {
	e := int64(p.Rows()) * int64(p.N)
	return (e + 7) / 8 * 8
}

// AGScaleOffset is where agmm's gathered row scales start in the payload:
// past the gathered A, 16 bytes aligned.
func AGScaleOffset(p Problem) int64 {
	return (int64(p.M)*int64(p.K)*int64(p.ElemSize) + 15) / 16 * 16
}

// SymmetricBytes is the region the variant needs per rank for p.
func (v Variant) SymmetricBytes(p Problem) int64 {
	if v == VariantAGMM {
		if p.Dtype.RowScales() {
			return PayloadOffset + AGScaleOffset(p) + int64(p.M)*ScaleBytes
		}
		return PayloadOffset + int64(p.M)*int64(p.K)*int64(p.ElemSize)
	}
	return PayloadOffset + int64(p.World)*SlotElems(p)*OutBytes
}

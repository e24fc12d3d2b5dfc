package gpu

// Symmetric region layout on GPUs, for both kernels:
//
//	[flag words, FlagStride bytes apart][payload from PayloadOffset]
//
// Flag 0 is agmm's "my shard is in place for call e"; flag 1+src*MaxChunks+c
// of owner q is matmulrs's "rank src's partial of chunk c of my rows is in
// my slot src for call e". Each holds the epoch (the per-instance call
// counter, the same on every rank since the host drives ranks in
// lockstep) of the last call that set it; a waiter in call e waits for
// flag >= e, so flags never need resetting.
//
// agmm's payload is the gathered A [M, K]: rank q's shard at rows
// [q*M/W, (q+1)*M/W), its own written by the caller, the others pulled.
// matmulrs's payload is World slots of SlotElems(p) elements: slot src
// holds rank src's partial of this rank's rows, [M/W, N].

// FlagStride keeps each flag word in its own cache line.
const FlagStride = 64

// ReadyFlag is agmm's flag index.
const ReadyFlag = 0

// PartialFlag is matmulrs's flag index for chunk c of src's partials.
func PartialFlag(src, c int) int { return 1 + src*MaxChunks + c }

// PayloadOffset is where the payload starts: past every flag, page aligned.
const PayloadOffset = ((1+MaxWorld*MaxChunks)*FlagStride + 4095) / 4096 * 4096

// SlotElems is the distance between matmulrs slots in elements: the rows
// each rank owns times n, rounded up to 16 bytes so every slot starts
// 16-byte aligned and the reduction's vector path sees one alignment.
func SlotElems(p Problem) int64 {
	e := int64(p.Rows()) * int64(p.N)
	return (e + 7) / 8 * 8
}

// SymmetricBytes is the region kernel needs per rank for p.
func SymmetricBytes(kernel string, p Problem) int64 {
	if kernel == AGMM {
		return PayloadOffset + int64(p.M)*int64(p.K)*int64(p.ElemSize)
	}
	return PayloadOffset + int64(p.World)*SlotElems(p)*int64(p.ElemSize)
}

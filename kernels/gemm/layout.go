package gemm

import "fmt"

// Symmetric region layout, the same for both plugins and both backends:
//
//	[flag slots: FlagSlots(M) × FlagStride bytes][payload]
//
// Flag slot s belongs to the communication block that starts at global row
// s*FlagRows. It holds the epoch (the per-instance call counter, the same on
// every rank because the host drives ranks in lockstep) of the last call in
// which this rank finished that block: matmulrs sets it when the rank's
// partial rows of the block are written; agmm when the rank's shard rows of
// the block are in its buffer. A waiter in call e waits for flag >= e, so
// flags never need resetting between calls or when the config changes.

// FlagStride is the distance between flag words: one cache line, so a
// producer storing one flag does not steal the line a consumer polls for
// another.
const FlagStride = 64

// FlagSlots is the number of flag words a problem of m rows needs.
func FlagSlots(m int) int { return ceilDiv(m, FlagRows) }

// FlagOffset is the byte offset of the flag of the block starting at
// global row row0.
func FlagOffset(row0 int) int { return row0 / FlagRows * FlagStride }

// PayloadOffset is where the payload starts, past the flags, aligned to a
// page so the payload's cache lines never share one with a flag.
func PayloadOffset(m int) int { return roundUp(FlagSlots(m)*FlagStride, 4096) }

// SymmetricBytes is the region size for m rows of flags and a payload of
// elems elements of elemSize bytes.
func SymmetricBytes(m int, elems int64, elemSize int) (int64, error) {
	if m <= 0 || elems <= 0 || elemSize <= 0 || elems > maxElems {
		return 0, fmt.Errorf("symmetric region: m=%d, %d elements of %d bytes", m, elems, elemSize)
	}
	return int64(PayloadOffset(m)) + elems*int64(elemSize), nil
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

package allreduce

import "fmt"

// The memory of one_shot_lamport (kernels/lamport.cu, ALGO 7). Each
// rank's Lamport area is a header of state words and then three buffers of
// world slots each: slot q of buffer b holds rank q's input of the last
// call that used buffer b (call k uses buffer k%3). A reset area has the
// header zeroed and every buffer filled with the sentinel, negative zero;
// every rank's area must be reset at the same point of the call sequence,
// and no rank may call again until all are (the reset, a team barrier).
// The kernel keeps the area consistent from then on, call after call.

// MaxLamportBytes is the largest message one_shot_lamport takes. Its
// buffers cost 3*world times the message on every rank (96 MiB at 8 ranks
// for 4 MiB), and a one-shot sends world-1 copies of the message over each
// rank's links, so a few MiB up a two-shot wins anyway. 4 MiB holds the
// decode all-reduce of [256, 8192] bf16 (issue 45).
const MaxLamportBytes = 4 << 20

// lamportHeader is the state before the buffers: u32 the call counter
// mod 3, u32 the blocks arrived in the current call, u64 the previous
// call's size in vectors; padded so that the slots start aligned. It is
// LAMPORT_HDR in lamport.cu.
const lamportHeader = 256

// lamportAlign: slots are whole multiples of it (16-byte vector stores
// need 16; 256 keeps each slot on cache lines of its own).
const lamportAlign = 256

func roundUp(x, m int64) int64 { return (x + m - 1) / m * m }

// lamportVectors is the 16-byte vectors n elements of elt bytes take in a
// slot (the last padded with +0).
func lamportVectors(n int64, elt int) int64 { return (n*int64(elt) + 15) / 16 }

// LamportSlotBytes is one slot for n elements of elt bytes.
func LamportSlotBytes(n int64, elt int) int64 {
	return roundUp(lamportVectors(n, elt)*16, lamportAlign)
}

// LamportAreaBytes is an area of world-rank slots of slot bytes.
func LamportAreaBytes(slot int64, world int) int64 { return lamportHeader + 3*int64(world)*slot }

// LamportRegionBytes is the symmetric region a Runner of one_shot_lamport
// needs on every rank for n elements of elt bytes (the region is the area
// alone: symmtune.torch gives these runners a workspace of their own).
func LamportRegionBytes(n int64, elt, world int) int64 {
	return LamportAreaBytes(LamportSlotBytes(n, elt), world)
}

// lamportSlotOf is the slot a Runner lays out on a region of regionBytes:
// the largest it holds. The layout must not depend on the call's size (a
// call clears what the previous one, of any size, left), and every rank
// has the same regionBytes, so every rank puts each slot at the same place.
func lamportSlotOf(regionBytes int64, world int) int64 {
	if regionBytes < lamportHeader {
		return 0
	}
	return (regionBytes - lamportHeader) / (3 * int64(world)) / lamportAlign * lamportAlign
}

// lamportOffset is where the plugin's instance puts the area in its
// region: past [input | scratch | output] of npad elements, which the
// other algorithms write.
func lamportOffset(npad int64, elt int) int64 { return roundUp(3*npad*int64(elt), lamportAlign) }

// checkLamport says why one_shot_lamport cannot run n elements of elt
// bytes (nil if it can).
func checkLamport(n int64, elt int) error {
	if b := n * int64(elt); b > MaxLamportBytes {
		return fmt.Errorf("%s takes messages up to %d bytes (its buffers cost 3 x world x the message per rank), this one is %d", OneShotLamport, MaxLamportBytes, b)
	}
	return nil
}

// symmetricBytes is the CUDA plugin's region for n elements of elt bytes
// (npad padded) on world ranks: [input | scratch | output] of npad
// elements each, then, for a message one_shot_lamport takes, its area.
func symmetricBytes(n, npad int64, elt, world int) int64 {
	base := 3 * npad * int64(elt)
	if checkLamport(n, elt) != nil {
		return base
	}
	return lamportOffset(npad, elt) + LamportRegionBytes(n, elt, world)
}

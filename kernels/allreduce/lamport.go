package allreduce

import "fmt"

// The memory of the Lamport algorithms (kernels/lamport.cu): one_shot_lamport
// (ALGO 7) and two_shot_lamport (ALGO 8). Each rank's Lamport area is a
// header of state words and then three buffers of slots (call k uses
// buffer k%3): one_shot_lamport's buffer holds world slots, slot q rank
// q's input; two_shot_lamport's 2 x world, rank q's copy of this rank's
// chunk, then the reduced chunk q. A reset area has the header zeroed and
// every buffer filled with the sentinel, negative zero; every rank's area
// must be reset at the same point of the call sequence, and no rank may
// call again until all are (the reset, a team barrier). The kernel keeps
// the area consistent from then on, call after call, as long as every
// call on it is of the same algorithm: the layouts differ, so the two
// never share an area (the plugin resets it for each config;
// symmtune.torch gives each its own workspace).

// MaxLamportBytes is the largest message one_shot_lamport takes. Its
// buffers cost 3*world times the message on every rank (96 MiB at 8 ranks
// for 4 MiB), and a one-shot sends world-1 copies of the message over each
// rank's links, so a few MiB up a two-shot wins anyway. 4 MiB holds the
// decode all-reduce of [256, 8192] bf16 (issue 45).
const MaxLamportBytes = 4 << 20

// MaxTwoShotLamportBytes is the largest message two_shot_lamport takes.
// Its buffers cost about 6 times the message on every rank, at any world
// size (three buffers of 2 x world slots of a 1/world chunk): 96 MiB for
// 16 MiB. Past a few MiB what the Lamport kernel saves, the barriers, is
// small beside the transfer, and two_shot_push, which needs no buffers of
// its own, catches up; 16 MiB leaves room to measure where.
const MaxTwoShotLamportBytes = 16 << 20

// lamportAlgo is what the Lamport algorithms differ in.
type lamportAlgo struct {
	name string
	// twoShot: a buffer holds two parts of world slots (partial inputs,
	// reduced chunks), each slot a 1/world chunk of the message; else one
	// part, each slot the whole message.
	twoShot  bool
	maxBytes int64
	cost     string // what its buffers cost, for the cap's error
}

var lamportAlgos = []lamportAlgo{
	{OneShotLamport, false, MaxLamportBytes, "3 x world x the message"},
	{TwoShotLamport, true, MaxTwoShotLamportBytes, "about 6 x the message"},
}

// lamportOf is algo's Lamport description; ok false for the algorithms
// that are not Lamport's.
func lamportOf(algo string) (l lamportAlgo, ok bool) {
	for _, x := range lamportAlgos {
		if x.name == algo {
			return x, true
		}
	}
	return lamportAlgo{}, false
}

// IsLamport says whether algo runs on Lamport buffers of its own: one
// kernel that reads the caller's tensor and writes the sum into it (no
// staging, no barrier), on an area laid out by LamportRegionBytes.
func IsLamport(algo string) bool {
	_, ok := lamportOf(algo)
	return ok
}

// LamportMaxBytes is the largest message Lamport algorithm algo takes (0
// for another algorithm).
func LamportMaxBytes(algo string) int64 {
	l, _ := lamportOf(algo)
	return l.maxBytes
}

// parts is the groups of world slots in each buffer.
func (l lamportAlgo) parts() int64 {
	if l.twoShot {
		return 2
	}
	return 1
}

// slotVectors is the 16-byte vectors of a slot for n elements of elt
// bytes on world ranks: the message's, or its chunk's (the last chunks
// padded with +0).
func (l lamportAlgo) slotVectors(n int64, elt, world int) int64 {
	v := lamportVectors(n, elt)
	if l.twoShot {
		return (v + int64(world) - 1) / int64(world)
	}
	return v
}

// lamportHeader is the state before the buffers: u32 the call counter
// mod 3, u32 the blocks arrived in the current call, u64 what the previous
// call used of each slot, in vectors; padded so that the slots start
// aligned. It is LAMPORT_HDR in lamport.cu.
const lamportHeader = 256

// lamportAlign: slots are whole multiples of it (16-byte vector stores
// need 16; 256 keeps each slot on cache lines of its own).
const lamportAlign = 256

func roundUp(x, m int64) int64 { return (x + m - 1) / m * m }

// lamportVectors is the 16-byte vectors n elements of elt bytes take (the
// last padded with +0).
func lamportVectors(n int64, elt int) int64 { return (n*int64(elt) + 15) / 16 }

// LamportSlotBytes is one slot of Lamport algorithm algo for n elements of
// elt bytes on world ranks (0 for another algorithm).
func LamportSlotBytes(algo string, n int64, elt, world int) int64 {
	l, ok := lamportOf(algo)
	if !ok {
		return 0
	}
	return roundUp(l.slotVectors(n, elt, world)*16, lamportAlign)
}

// LamportAreaBytes is algo's area of slots of slot bytes on world ranks:
// the header and three buffers.
func LamportAreaBytes(algo string, slot int64, world int) int64 {
	l, _ := lamportOf(algo)
	return lamportHeader + 3*l.parts()*int64(world)*slot
}

// LamportRegionBytes is the symmetric region a Runner of Lamport algorithm
// algo needs on every rank for n elements of elt bytes (the region is the
// area alone: symmtune.torch gives these runners a workspace of their own).
func LamportRegionBytes(algo string, n int64, elt, world int) int64 {
	return LamportAreaBytes(algo, LamportSlotBytes(algo, n, elt, world), world)
}

// lamportSlotOf is the slot a Runner of algo lays out on a region of
// regionBytes: the largest it holds. The layout must not depend on the
// call's size (a call clears what the previous one, of any size, left),
// and every rank has the same regionBytes, so every rank puts each slot at
// the same place.
func lamportSlotOf(algo string, regionBytes int64, world int) int64 {
	l, ok := lamportOf(algo)
	if !ok || regionBytes < lamportHeader {
		return 0
	}
	return (regionBytes - lamportHeader) / (3 * l.parts() * int64(world)) / lamportAlign * lamportAlign
}

// lamportOffset is where the plugin's instance puts the area in its
// region: past [input | scratch | output] of npad elements, which the
// other algorithms write.
func lamportOffset(npad int64, elt int) int64 { return roundUp(3*npad*int64(elt), lamportAlign) }

// checkLamport says why Lamport algorithm algo cannot run n elements of
// elt bytes (nil if it can).
func checkLamport(algo string, n int64, elt int) error {
	l, ok := lamportOf(algo)
	if !ok {
		return fmt.Errorf("%s is not a Lamport algorithm", algo)
	}
	if b := n * int64(elt); b > l.maxBytes {
		return fmt.Errorf("%s takes messages up to %d bytes (its buffers cost %s per rank), this one is %d", algo, l.maxBytes, l.cost, b)
	}
	return nil
}

// lamportAreaFor is the largest area a Lamport algorithm needs for n
// elements of elt bytes on world ranks, over those that take the message
// (0 where none does): the plugin's instance runs each on the same area,
// reset for each config.
func lamportAreaFor(n int64, elt, world int) int64 {
	var area int64
	for _, l := range lamportAlgos {
		if checkLamport(l.name, n, elt) == nil {
			area = max(area, LamportRegionBytes(l.name, n, elt, world))
		}
	}
	return area
}

// symmetricBytes is the CUDA plugin's region for n elements of elt bytes
// (npad padded) on world ranks: [input | scratch | output] of npad
// elements each, then, for a message a Lamport algorithm takes, the
// largest of their areas.
func symmetricBytes(n, npad int64, elt, world int) int64 {
	base := 3 * npad * int64(elt)
	area := lamportAreaFor(n, elt, world)
	if area == 0 {
		return base
	}
	return lamportOffset(npad, elt) + area
}

package gpu

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// FusedAG is what the persistent GEMM of a fused all-gather + matmul needs
// to know about the communication, as the tables it reads from device
// memory (see the AG_ section of kernels/gemm/hopper/hopper_gemm.cu):
//
//   - Order lists the kernel's tile rows (block_m rows of C each) in the
//     order its CTAs walk them: rows of the rank's own shard first (ready at
//     launch), then by expected arrival: rows whose chunks come in earlier
//     first, chunk by chunk across the peers (every peer's chunk 0 is sent
//     before any chunk 1, one copy stream per peer), and within a chunk in
//     the order the copies land (see arrivalSlot).
//   - Chunks is the kernel's chunk table: Bounds (len n+1) cuts the M rows
//     of the gathered A into n spans; Flag[i] is the flag word index (see
//     layout.go) whose 1 announces span i, or NoFlag when span i is ready at
//     launch (the own shard). The kernel's producer waits for every span a
//     tile's rows touch before loading them.
type FusedAG struct {
	Order  []uint32
	Bounds []uint32
	Flag   []uint32
}

// NoFlag marks a span that needs no wait.
const NoFlag = ^uint32(0)

// arrivalSlot is when, among the world-1 copies of one chunk index that
// reach rank, peer q's copy lands: 0 first. Each rank's copy engine
// moves its copies one after another, in the order of its side streams
// (peers: next rank first; traced on 4 x H100, 2026-11-28: each 16 MiB
// copy of a rank started when its previous one ended, on another stream,
// bench/results/2026-11-28-h100x4-agmm-order.md).
//   - pull: rank's own engine fetches, next peer first;
//   - push: each peer's engine sends, to its next rank first, so the
//     copy of the rank before this one lands first: peer q sends to rank
//     in its slot (rank-q-1) mod world.
//
// With two ranks both are slot 0. With copies that really run at once
// (SM copies) the order within a chunk index costs nothing.
func arrivalSlot(rank, q, world int, push bool) int {
	if push {
		return ((rank-q-1)%world + world) % world
	}
	return ((q-rank-1)%world + world) % world
}

// PlanFusedAG makes rank's tables for tiles of blockM rows, with each rank's
// rows cut into chunks as Shards cuts them; push says the peers send their
// chunks (direction=push) rather than this rank fetching them.
func PlanFusedAG(m, world, rank, chunks, blockM int, push bool) FusedAG {
	var f FusedAG
	arrival := map[[2]int]int{} // (owner, chunk) -> position in the arrival order; own shard -1
	for _, q := range peers(rank, world) {
		for c := 0; c < chunks; c++ {
			arrival[[2]int{q, c}] = c*world + arrivalSlot(rank, q, world, push)
		}
	}
	var spans []Span
	for _, sh := range Shards(m, world, chunks) {
		spans = append(spans, sh...)
	}
	f.Bounds = append(f.Bounds, 0)
	ready := make([]int, len(spans))
	for i, s := range spans {
		f.Bounds = append(f.Bounds, uint32(s.Start+s.Rows))
		if s.Owner == rank {
			f.Flag = append(f.Flag, NoFlag)
			ready[i] = -1
		} else {
			f.Flag = append(f.Flag, uint32(PartialFlag(s.Owner, s.Index)))
			ready[i] = arrival[[2]int{s.Owner, s.Index}]
		}
	}
	tiles := (m + blockM - 1) / blockM
	key := make([]int, tiles)
	for t := range key {
		lo, hi := t*blockM, min((t+1)*blockM, m)
		key[t] = -2
		for i, s := range spans {
			if s.Rows > 0 && s.Start < hi && s.Start+s.Rows > lo {
				key[t] = max(key[t], ready[i])
			}
		}
		f.Order = append(f.Order, uint32(t))
	}
	sort.SliceStable(f.Order, func(a, b int) bool { return key[f.Order[a]] < key[f.Order[b]] })
	return f
}

// Table is the chunk table as the kernel reads it: the n+1 bounds, then the
// n flag indices.
func (f FusedAG) Table() []uint32 {
	return append(append([]uint32{}, f.Bounds...), f.Flag...)
}

// FusedRS is what the persistent GEMM of a fused matmul + reduce-scatter
// needs: its tile order and the chunk table of hopper_comm.cuh's RSTable.
//
//   - Order lists the tile rows (rowsPerTile rows each) owner by owner, the
//     next rank's first and the rank's own last (as PlanRS orders its
//     products): each owner's rows from every rank then arrive in an order
//     that spreads the writes over the links, and every peer's partials
//     are on their way before the rank computes its own.
//   - Chunk i is rows [Bounds[i], Bounds[i+1]): chunk Index[i] of rank
//     Owner[i]'s rows (Shards). Expect[i] is how many CTA tiles (blockM
//     rows by blockN columns) store into it: the kernel sets the chunk's
//     flag after the last of them.
type FusedRS struct {
	Order  []uint32
	Bounds []uint32
	Owner  []int
	Index  []int
	Expect []uint32
}

// PlanFusedRS plans rank's fused matmul + reduce-scatter of an m x n output
// in CTA tiles of blockM x blockN, walked in tile rows of rowsPerTile (a
// cluster's rows).
func PlanFusedRS(m, n, world, rank, chunks, blockM, blockN, rowsPerTile int) FusedRS {
	var f FusedRS
	rows := m / world
	f.Bounds = append(f.Bounds, 0)
	for _, sh := range Shards(m, world, chunks) {
		for _, s := range sh {
			f.Bounds = append(f.Bounds, uint32(s.Start+s.Rows))
			f.Owner = append(f.Owner, s.Owner)
			f.Index = append(f.Index, s.Index)
			f.Expect = append(f.Expect, 0)
		}
	}
	tilesN := (n + blockN - 1) / blockN
	for lo := 0; lo < m; lo += blockM {
		hi := min(lo+blockM, m)
		for i := range f.Owner {
			if int(f.Bounds[i]) < hi && int(f.Bounds[i+1]) > lo {
				f.Expect[i] += uint32(tilesN)
			}
		}
	}
	tiles := (m + rowsPerTile - 1) / rowsPerTile
	key := make([]int, tiles)
	for t := range key {
		owner := min(t*rowsPerTile/rows, world-1)
		key[t] = (owner - rank - 1 + world) % world // next rank 0, ..., own world-1
		f.Order = append(f.Order, uint32(t))
	}
	sort.SliceStable(f.Order, func(a, b int) bool { return key[f.Order[a]] < key[f.Order[b]] })
	return f
}

// LocalSlot says whether a fused matmulrs of rank me stores owner q's rows
// in this GPU's memory (the fused GEMM then stores them by TMA: RSMap):
// its own slot always; with push=ce, staging for the copy engine; with
// push=none, its own slot q, which the owner reads; with push=gemm, a
// peer's slot for every q but me.
func LocalSlot(push string, q, me int) bool {
	return q == me || push == PushCE || push == PushNone
}

// maxOwners and maxRSChunks size hopper_comm.cuh's RSTable (MAX_OWNERS,
// MAX_RS_CHUNKS).
const (
	maxOwners   = 8
	maxRSChunks = 64
)

// RSTableBytes is the size of hopper_comm.cuh's RSTable (its static_asserts
// hold the kernel to it).
const RSTableBytes = rsEpilogueOffset + 4*4 + 8 + 8*maxRSChunks + 8*maxOwners

// rsEpilogueOffset is where RSTable's epilogue fields start (me).
const rsEpilogueOffset = RSCountOffset + RSCountBytes + 4

// RSEpilogue turns on the reduction of the own rows in the fused GEMM's
// epilogue (reduce=epilogue); the zero value leaves it off.
type RSEpilogue struct {
	Me, World int
	// SlotBytes is the distance between this rank's slots: source src's
	// partials of the own rows are at dst[Me] + (src - Me) * SlotBytes,
	// where the pushes put them, unless Parts says otherwise.
	SlotBytes uint64
	// Flags is this rank's flag region as mapped here: the epilogue waits
	// for PartialFlag(src, c) there for every peer src and own chunk c.
	Flags uint64
	// Parts, when set (World entries), is where each source's partials of
	// the own rows are, as mapped here, in place of the slots: with
	// push=none, the source's own memory, read over NVLink (Remote).
	Parts  []uint64
	Remote bool
}

// Table lays f out as hopper_comm.cuh's RSTable: dst[q] is where this rank's
// partials of owner q's rows go (as mapped here), flag[i] the address of
// chunk i's flag in its owner's region; counts start at zero; ep, when
// set, the epilogue's reduction of rank ep.Me's rows.
func (f FusedRS) Table(dst []uint64, flag []uint64, ep RSEpilogue) ([]byte, error) {
	if len(dst) > maxOwners || len(f.Owner) > maxRSChunks || len(flag) != len(f.Owner) {
		return nil, fmt.Errorf("reduce-scatter table: %d owners (at most %d), %d chunks (at most %d), %d flags", len(dst), maxOwners, len(f.Owner), maxRSChunks, len(flag))
	}
	b := make([]byte, RSTableBytes)
	le := binary.LittleEndian
	for q, d := range dst {
		le.PutUint64(b[8*q:], d)
	}
	off := 8 * maxOwners
	for i, a := range flag {
		le.PutUint64(b[off+8*i:], a)
	}
	off += 8 * maxRSChunks
	for i, v := range f.Bounds {
		le.PutUint32(b[off+4*i:], v)
	}
	off += 4 * (maxRSChunks + 1)
	for i, v := range f.Expect {
		le.PutUint32(b[off+4*i:], v)
	}
	off += 4 * maxRSChunks // expect
	off += 4 * maxRSChunks // count: zero
	le.PutUint32(b[off:], uint32(len(f.Owner)))
	if ep.World == 0 {
		return b, nil
	}
	if ep.Me < 0 || ep.Me >= len(dst) || ep.World != len(dst) || (ep.Parts != nil && len(ep.Parts) != ep.World) {
		return nil, fmt.Errorf("reduce-scatter table: epilogue of rank %d of %d with %d owners and %d sources' partials", ep.Me, ep.World, len(dst), len(ep.Parts))
	}
	off = rsEpilogueOffset
	remote := uint32(0)
	if ep.Remote {
		remote = 1
	}
	for _, v := range []uint32{uint32(ep.Me), uint32(ep.World), 1, remote} {
		le.PutUint32(b[off:], v)
		off += 4
	}
	le.PutUint64(b[off:], MaxChunks*FlagStride) // PartialFlag(src+1, c) - PartialFlag(src, c)
	off += 8
	for i, q := range f.Owner {
		if q == ep.Me {
			le.PutUint64(b[off+8*i:], ep.Flags+uint64(PartialFlag(0, f.Index[i])*FlagStride))
		}
	}
	off += 8 * maxRSChunks
	for src := range ep.World {
		part := dst[ep.Me] + uint64(int64(src-ep.Me)*int64(ep.SlotBytes))
		if ep.Parts != nil {
			part = ep.Parts[src]
		}
		le.PutUint64(b[off+8*src:], part)
	}
	return b, nil
}

// RSCountOffset and RSCountBytes locate the counts in the table, which a
// failed call may leave nonzero: they are zeroed before every trial.
const (
	RSCountOffset = 8*maxOwners + 8*maxRSChunks + 4*(maxRSChunks+1) + 4*maxRSChunks
	RSCountBytes  = 4 * maxRSChunks
)

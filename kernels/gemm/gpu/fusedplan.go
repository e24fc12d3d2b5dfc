package gpu

import "sort"

// FusedAG is what the persistent GEMM of a fused all-gather + matmul needs
// to know about the communication, as the tables it reads from device
// memory (see the AG_ section of kernels/gemm/hopper/hopper_gemm.cu):
//
//   - Order lists the kernel's tile rows (block_m rows of C each) in the
//     order its CTAs walk them: rows of the rank's own shard first (ready at
//     launch), then by expected arrival: rows whose chunks come in earlier
//     first, chunk by chunk across the peers (every peer's chunk 0 moves at
//     once, one copy stream per peer), next peer first.
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

// PlanFusedAG makes rank's tables for tiles of blockM rows, with each rank's
// rows cut into chunks as Shards cuts them.
func PlanFusedAG(m, world, rank, chunks, blockM int) FusedAG {
	var f FusedAG
	arrival := map[[2]int]int{} // (owner, chunk) -> position in the arrival order; own shard -1
	for i, q := range peers(rank, world) {
		for c := 0; c < chunks; c++ {
			arrival[[2]int{q, c}] = c*world + i
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

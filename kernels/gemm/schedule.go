package gemm

import (
	"sync"
	"sync/atomic"
)

// Tile is one output tile of block_m rows starting at global row Row and
// up to block_n columns starting at column Col.
type Tile struct{ Row, Col int }

// BlockTiles appends the tiles of the communication block whose first
// global row is row0 (comm_block_m rows, n columns) in group_m swizzled
// order: the block's row tiles are taken group_m at a time, and within a
// group the order runs down the rows before moving right, so the B columns
// a group loads are reused by group_m row tiles while they are in cache.
// This is the program-id mapping of the Triton/CUTLASS grouped GEMM
// schedule, so the CUDA kernels order tiles the same way.
func BlockTiles(dst []Tile, row0, n int, c Config) []Tile {
	rowTiles := c.CommBlockM / c.BlockM
	colTiles := ceilDiv(n, c.BlockN)
	perGroup := c.GroupM * colTiles
	for pid := 0; pid < rowTiles*colTiles; pid++ {
		group := pid / perGroup
		first := group * c.GroupM
		size := min(rowTiles-first, c.GroupM)
		in := pid % perGroup
		pm := first + in%size
		pn := in / size
		dst = append(dst, Tile{Row: row0 + pm*c.BlockM, Col: pn * c.BlockN})
	}
	return dst
}

// TilesPerBlock is how many tiles BlockTiles yields for one block.
func TilesPerBlock(n int, c Config) int { return (c.CommBlockM / c.BlockM) * ceilDiv(n, c.BlockN) }

// Pool runs task lists on a fixed number of workers, the CPU stand-in for a
// GPU kernel's thread blocks. Workers claim tasks in list order from one
// shared counter, so a schedule that puts producers before consumers never
// has every worker waiting on a task nobody has claimed.
type Pool struct {
	scratch [][]float32
}

// Scratch is worker w's tile accumulator, at least n floats. Only worker w
// may use it while Run is going on.
func (p *Pool) Scratch(w, n int) []float32 {
	if len(p.scratch[w]) < n {
		p.scratch[w] = make([]float32, n)
	}
	return p.scratch[w]
}

// Run calls f(w, i) for every task i in [0, n) on threads workers (f gets
// the worker index w for its scratch). The first error stops workers from
// claiming further tasks and is returned once every worker has stopped.
func (p *Pool) Run(threads, n int, f func(w, i int) error) error {
	for len(p.scratch) < threads {
		p.scratch = append(p.scratch, nil)
	}
	if threads <= 1 {
		for i := 0; i < n; i++ {
			if err := f(0, i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next     atomic.Int64
		failed   atomic.Bool
		firstErr error
		once     sync.Once
		wg       sync.WaitGroup
	)
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(w, i); err != nil {
					once.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

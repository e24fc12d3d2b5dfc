//go:build cuda

package gpu

import (
	"fmt"
	"os"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/cuda/sm90"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// PlainLaunchEnv=1 makes every FusedGEMM compiled in the process launch
// plainly (FusedGEMM.PlainLaunch): a way back from the dependent launch
// without a rebuild, should a program meet a problem with it.
const PlainLaunchEnv = "SYMMTUNE_GEMM_PLAIN_LAUNCH"

// plainLaunchFromEnv reads PlainLaunchEnv: "1" plain launches, "" or "0"
// dependent ones.
func plainLaunchFromEnv() (bool, error) {
	switch v := os.Getenv(PlainLaunchEnv); v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want 1 (plain launches) or 0 (the default: dependent launches)", PlainLaunchEnv, v)
	}
}

// FusedGEMM is one compiled tile configuration of the Hopper GEMM for one
// number format.
type FusedGEMM struct {
	Tile hopper.Tile
	f    hopper.Format
	mod  *sm90.Module
	fn   sm90.Function
	smem int
	// clusters is how many clusters can be resident at once (cluster
	// tiles only).
	clusters int
	// PlainLaunch launches the kernel as a plain launch: for comparisons
	// (bench/gemmalone -launch), or where PlainLaunchEnv asks. By default
	// Launch makes it the programmatic dependent of the kernel before it on
	// the stream: its CTAs start, set up their barriers and prefetch the
	// tensor maps as that kernel exits, and wait for it
	// (griddepcontrol.wait) before touching global memory: 1.2-4.5 µs less
	// a call at 64-1,024 rows (bench/results/2026-12-02-h200-pdl.md).
	PlainLaunch bool
}

// CompileFused builds t for operands of format f for sm_90a with c (whose
// Arch must be sm_90a) and loads it into the current context.
func CompileFused(c nvrtc.Compiler, t hopper.Tile, f hopper.Format) (*FusedGEMM, error) {
	return CompileFusedWith(c, t, f, nil)
}

// CompileFusedWith is CompileFused with extra NVRTC options (the kernel's
// diagnostic macros; bench/gemmalone -extra).
func CompileFusedWith(c nvrtc.Compiler, t hopper.Tile, f hopper.Format, extra []string) (*FusedGEMM, error) {
	if err := t.Check(hopper.SmemLimit); err != nil {
		return nil, err
	}
	if err := t.CheckFormat(f); err != nil {
		return nil, err
	}
	plain, err := plainLaunchFromEnv()
	if err != nil {
		return nil, err
	}
	if c.Arch != "sm_90a" {
		return nil, fmt.Errorf("the fused GEMM needs an sm_90 GPU (wgmma, TMA), this one is %s", c.Arch)
	}
	cubin, err := c.Compile(nvrtc.Source{Name: "hopper_gemm.cu", Text: hopper.Source, Options: append(t.Options(f), extra...)})
	if err != nil {
		return nil, err
	}
	mod, err := sm90.Load(cubin)
	if err != nil {
		return nil, fmt.Errorf("load hopper_gemm %s %v: %w", t, f, err)
	}
	g := &FusedGEMM{Tile: t, f: f, mod: mod, smem: t.SmemBytes(), PlainLaunch: plain}
	if g.fn, err = mod.Function(hopper.Entry); err == nil {
		err = g.fn.SetDynamicSmem(g.smem)
	}
	if err == nil && t.ClusterM() > 1 {
		// Not every SM pairs up within its GPC: the grid is what fits.
		g.clusters, err = g.fn.MaxActiveClusters(t.ClusterM(), t.Threads(), g.smem)
		if err == nil && g.clusters < 1 {
			err = fmt.Errorf("no cluster of %d CTAs fits", t.ClusterM())
		}
	}
	if err != nil {
		mod.Unload()
		return nil, fmt.Errorf("hopper_gemm %s %v: %w", t, f, err)
	}
	return g, nil
}

// Grid is the persistent grid Launch uses for an m x n product on sms SMs:
// a CTA per work unit (a tile, or with split-K a k-slice of one) up to the
// SMs.
func (g *FusedGEMM) Grid(m, n, sms int) int {
	cm := g.Tile.ClusterM()
	grid := min(sms/cm, g.Tile.Units(m, n))
	if cm > 1 {
		grid = min(grid, g.clusters)
	}
	return grid * cm
}

// Close unloads the module.
func (g *FusedGEMM) Close() error { return g.mod.Unload() }

// Spills is the local memory per thread the compiled kernel uses: nonzero
// means registers spilled, which a tuned config should not.
func (g *FusedGEMM) Spills() (int, error) { return g.fn.LocalBytes() }

// Format is the number format g was compiled for.
func (g *FusedGEMM) Format() hopper.Format { return g.f }

// Operands are the tensor maps of one product's A, B and C, and of rows
// [OwnLo, OwnLo+OwnRows) of A held in a buffer of their own (see
// WithOwnRows; OwnRows 0: A's map has them all).
type Operands struct {
	A, B, AOwn, C  sm90.TensorMap
	M, N, K        int
	OwnLo, OwnRows int
	// ScaleA and ScaleB are the fp32 scales of an e4m3 product, set by the
	// caller after Maps (docs/fp8.md): one float each, or with row scales
	// one per row of A (indexed by A's global row: the gathered A's for an
	// all-gather) and one per column of C. Unread for bf16 and f16.
	ScaleA, ScaleB cu.DevicePtr
	// ScaleAOwn, with row scales and own rows (WithOwnRows), is where the
	// caller holds the own rows' scales, ScaleAOwn[i] for row OwnLo+i: the
	// tiles that read those rows in place read their scales there too.
	// 0: ScaleA holds them.
	ScaleAOwn cu.DevicePtr
	// Work is split-K's workspace (a split-K tile's only; see SplitKWork),
	// set by the caller after Maps.
	Work SplitKWork
	c    cu.DevicePtr // where C's map points (0: no map)
}

// SplitKWork is the device memory a split-K or stream-K tile's launches
// share (hopper.Tile.SplitKBytes of the product's m and n, for grids of
// up to Grid CTAs): the parts' fp32 partials, and the counts, zero before
// the first launch (each launch leaves them zero). Launches that use one
// must not overlap: each relies on the counts the one before left zero.
type SplitKWork struct {
	Partials, Counts cu.DevicePtr
	Grid             int
}

// AllocSplitK is what a split-K or stream-K tile's workspace for an m x n
// product launched on at most sms SMs needs from alloc (bytes, zeroed or
// not): the partials, then the counts, zeroed. For other tiles it
// allocates nothing. On an error, what alloc made is the caller's to free
// (in the zero SplitKWork's fields that are set).
func (g *FusedGEMM) AllocSplitK(m, n, sms int, alloc func(bytes int64, zeroed bool) (cu.DevicePtr, error)) (SplitKWork, error) {
	w := SplitKWork{Grid: sms}
	parts, counts := g.Tile.SplitKBytes(m, n, sms)
	if parts == 0 {
		return w, nil
	}
	var err error
	if w.Partials, err = alloc(parts, false); err != nil {
		return w, fmt.Errorf("split-K partials (%d bytes): %w", parts, err)
	}
	if w.Counts, err = alloc(counts, true); err != nil {
		return w, fmt.Errorf("split-K counts (%d bytes): %w", counts, err)
	}
	return w, nil
}

// Maps encodes the tensor maps of C = A * B: A [m, k] row-major at a, B at
// b ([n, k] when the tile is K-major, else [k, n]), both with dense rows of
// the format's elements, and C [m, n] row-major at c (bf16 or f16: e4m3
// products write bf16), which the epilogue stores by TMA in 16 x 16 boxes
// of its 32-byte-swizzled staging buffers. c is 0 for a reduce-scatter,
// whose rows go to their owners' slots instead. Boxes of A and B are one
// k-block (128 bytes) wide.
func (g *FusedGEMM) Maps(a, b, c cu.DevicePtr, m, n, k int) (Operands, error) {
	if err := g.Tile.CheckShapeFor(g.f, n, k); err != nil {
		return Operands{}, err
	}
	dt, eb, bk := g.inType(), uint64(g.f.Elem.Bytes()), uint32(g.f.Elem.BK())
	t := g.Tile
	o := Operands{M: m, N: n, K: k}
	var err error
	if o.A, err = g.encodeA(a, m, k); err != nil {
		return Operands{}, fmt.Errorf("A: %w", err)
	}
	o.AOwn = o.A
	if t.BKMajor {
		// With clusters each CTA loads its share of the B tile's rows.
		o.B, err = sm90.Encode2D(dt, b, uint64(n), uint64(k), uint64(k)*eb, uint32(t.BN/t.ClusterM()), bk, sm90.Swizzle128B)
	} else {
		// Two-byte elements only (CheckFormat): 64 columns are 128 bytes.
		o.B, err = sm90.Encode2D(dt, b, uint64(k), uint64(n), uint64(n)*eb, bk, 64, sm90.Swizzle128B)
	}
	if err != nil {
		return Operands{}, fmt.Errorf("B: %w", err)
	}
	if c != 0 {
		if o.C, err = g.encodeC(c, m, n); err != nil {
			return Operands{}, fmt.Errorf("C: %w", err)
		}
		o.c = c
	}
	return o, nil
}

// RSMap is owner slot's map for a reduce-scatter's TMA stores (see
// Comm.RSMaps): rowsPerRank x n outputs, row-major, at slot, in C's boxes.
// Only for a slot in this GPU's memory: TMA stores into a peer's over
// NVLink are not yet measured, so those rows keep each warp's own stores.
func (g *FusedGEMM) RSMap(slot cu.DevicePtr, rowsPerRank, n int) ([128]byte, error) {
	m, err := g.encodeC(slot, rowsPerRank, n)
	if err != nil {
		return [128]byte{}, fmt.Errorf("reduce-scatter slot map: %w", err)
	}
	return [128]byte(m), nil
}

// encodeC is the map the epilogue stores an m x n row-major output
// through: 16 x 16 boxes with the 32-byte swizzle (stage_write's layout).
func (g *FusedGEMM) encodeC(c cu.DevicePtr, m, n int) (sm90.TensorMap, error) {
	return sm90.Encode2D(g.outType(), c, uint64(m), uint64(n), uint64(n)*hopper.OutBytes, 16, 16, sm90.Swizzle32B)
}

// WithOwnRows makes the GEMM read A's rows [lo, lo+rows) from rows x k
// row-major at a: an all-gather's own shard, read where the caller holds it.
// Tiles straddling the range's ends still read A's map.
func (g *FusedGEMM) WithOwnRows(o Operands, a cu.DevicePtr, lo, rows int) (Operands, error) {
	if lo < 0 || rows < 1 || lo+rows > o.M {
		return Operands{}, fmt.Errorf("own rows [%d, %d) of A's %d", lo, lo+rows, o.M)
	}
	var err error
	if o.AOwn, err = g.encodeA(a, rows, o.K); err != nil {
		return Operands{}, fmt.Errorf("A's own rows: %w", err)
	}
	o.OwnLo, o.OwnRows = lo, rows
	return o, nil
}

func (g *FusedGEMM) encodeA(a cu.DevicePtr, m, k int) (sm90.TensorMap, error) {
	e := g.f.Elem
	return sm90.Encode2D(g.inType(), a, uint64(m), uint64(k), uint64(k)*uint64(e.Bytes()), uint32(g.Tile.BM), uint32(e.BK()), sm90.Swizzle128B)
}

// inType is the element type of A's and B's tensor maps: TMA copies e4m3
// as bytes.
func (g *FusedGEMM) inType() int {
	switch g.f.Elem {
	case hopper.ElemE4M3:
		return sm90.UInt8
	case hopper.ElemF16:
		return sm90.Float16
	}
	return sm90.BFloat16
}

// outType is C's: f16 for f16 operands, else bf16.
func (g *FusedGEMM) outType() int {
	if g.f.Elem == hopper.ElemF16 {
		return sm90.Float16
	}
	return sm90.BFloat16
}

// Comm is what the communication adds to a launch: the tile order; for an
// all-gather + matmul, FusedAG's chunk table, the flag words' base, a status
// word the kernel sets when a wait times out, and the wait's bound; for a
// matmul + reduce-scatter, FusedRS's table. The zero Comm is a plain GEMM.
type Comm struct {
	Order, Table cu.DevicePtr
	Chunks       int
	Flags        cu.DevicePtr
	Status       cu.DevicePtr
	TimeoutNs    uint64
	// RS, when set, is a fused matmul + reduce-scatter's device table (see
	// FusedRS.Table); each rank owns RowsPerRank rows of the output.
	RS          cu.DevicePtr
	RowsPerRank int
	// RSMaps, indexed by owner, are the owners' slots as tensor maps
	// (RSMap; zero: none): rows bound for an owner with one go by TMA
	// stores, the others by each warp's own stores (hopper_comm.cuh's
	// RSMaps). At most MaxOwners, with RS only.
	RSMaps [][128]byte
	// Start and StartMask are the start gate (hopper_comm.cuh's Wait):
	// this rank's StartFlag(0), and the peers (bit q: rank q) whose start
	// flag the kernel waits for, up to SYMM_TIMEOUT_NS, before its first
	// wait for a peer's data. StartMask 0: no gate.
	Start     cu.DevicePtr
	StartMask uint32
	// EarlyDependents lets a kernel launched as the GEMM's programmatic
	// dependent (the fused call's end barrier) launch from the GEMM's
	// start, so that its launch overlaps the GEMM's tail; otherwise it
	// launches as the GEMM exits. Leave it off where the next kernel may
	// be another product: back to back, a product launched after one with
	// it on ran up to 20% slower (bench/results/2026-12-02-h200-pdl.md).
	EarlyDependents bool
}

// Launch enqueues C = A * B on stream, C [m, n] row-major at c, where
// Maps encoded C's map (with comm.RS set, the rows go to their owners'
// slots and c is the own rows' sum with the reduce-scatter's epilogue,
// else unused), on a persistent grid of at most sms CTAs (and, with
// clusters, at most the clusters that fit at once). An e4m3 product's
// scales (o.ScaleA, o.ScaleB, o.ScaleAOwn), split-K's or stream-K's
// workspace (o.Work), the stream-K tiles (hopper.Tile.StreamKTiles: a
// stream-K tile launches on all sms where it shares tiles) and
// comm.EarlyDependents are the kernel's last parameters.
func (g *FusedGEMM) Launch(stream cu.Stream, o Operands, c cu.DevicePtr, sms int, comm Comm) error {
	if comm.RS == 0 && c != o.c {
		// A plain product's epilogue stores through C's map, not c.
		return fmt.Errorf("hopper_gemm %s: C at %#x but its tensor map at %#x (Maps)", g.Tile, uint64(c), uint64(o.c))
	}
	if len(comm.RSMaps) > maxOwners || (len(comm.RSMaps) > 0 && comm.RS == 0) {
		return fmt.Errorf("hopper_gemm %s: %d reduce-scatter slot maps (at most %d, with a reduce-scatter's table only)", g.Tile, len(comm.RSMaps), maxOwners)
	}
	if g.f.Scaled() && (o.ScaleA == 0 || o.ScaleB == 0) {
		// The kernel would read its scales at address 0.
		return fmt.Errorf("hopper_gemm %s %v: scales A %#x and B %#x: set Operands.ScaleA and ScaleB", g.Tile, g.f, uint64(o.ScaleA), uint64(o.ScaleB))
	}
	if o.ScaleAOwn != 0 && (!g.f.RowScales || o.OwnRows == 0) {
		return fmt.Errorf("hopper_gemm %s %v: own rows' scales at %#x need row scales and own rows (WithOwnRows)", g.Tile, g.f, uint64(o.ScaleAOwn))
	}
	grid, skTiles := g.Grid(o.M, o.N, sms), 0
	if g.Tile.StreamK {
		// Where it shares tiles out, on every SM (every cluster that fits
		// at once): the ranges are cut for that grid.
		kblocks := (o.K + g.f.Elem.BK() - 1) / g.f.Elem.BK()
		full := sms
		if cm := g.Tile.ClusterM(); cm > 1 {
			full = min(sms/cm, g.clusters) * cm
		}
		if sk := g.Tile.StreamKTiles(o.M, o.N, kblocks, full); sk > 0 {
			grid, skTiles = full, sk
		}
	}
	if g.Tile.Shares() {
		switch {
		case o.Work.Partials == 0 || o.Work.Counts == 0:
			// The kernel would store the parts' partials at address 0.
			return fmt.Errorf("hopper_gemm %s: split-K's workspace is not set (Operands.Work, AllocSplitK)", g.Tile)
		case grid > o.Work.Grid:
			// Stream-K's partials are a CTA's: the workspace holds o.Work.Grid.
			return fmt.Errorf("hopper_gemm %s: a grid of %d CTAs on a workspace for %d (AllocSplitK's sms)", g.Tile, grid, o.Work.Grid)
		case comm.RS != 0:
			return fmt.Errorf("hopper_gemm %s: split-K and stream-K tiles run plain products, not a reduce-scatter", g.Tile)
		}
	}
	p := launchParams(o, c, comm, skTiles)
	launch := g.fn.LaunchDependent
	if g.PlainLaunch {
		launch = g.fn.Launch
	}
	if err := launch(grid, g.Tile.Threads(), g.smem, stream, p); err != nil {
		return fmt.Errorf("hopper_gemm %s: %w", g.Tile, err)
	}
	return nil
}

// launchParams is hopper_gemm's parameter block, in the kernel's order
// (TestLaunchParams holds it to the kernel's signature).
func launchParams(o Operands, c cu.DevicePtr, comm Comm, skTiles int) *sm90.Params {
	maps, mask := make([]sm90.TensorMap, maxOwners), uint32(0)
	for q, m := range comm.RSMaps {
		if m != ([128]byte{}) {
			maps[q], mask = m, mask|1<<q
		}
	}
	var p sm90.Params
	p.Map(o.A).Map(o.B).Map(o.AOwn).Map(o.C).Maps(maps).U64(uint64(c)).I32(int32(o.M)).I32(int32(o.N)).I32(int32(o.K))
	p.U64(uint64(comm.Order)).U64(uint64(comm.Table)).I32(int32(comm.Chunks))
	p.U64(uint64(comm.Flags)).U64(uint64(comm.Status)).U64(comm.TimeoutNs)
	p.U64(uint64(comm.RS)).I32(int32(mask)).I32(int32(comm.RowsPerRank)).I32(int32(o.OwnLo)).I32(int32(o.OwnRows))
	p.U64(uint64(comm.Start)).I32(int32(comm.StartMask))
	p.U64(uint64(o.ScaleA)).U64(uint64(o.ScaleB)).U64(uint64(o.ScaleAOwn))
	p.U64(uint64(o.Work.Partials)).U64(uint64(o.Work.Counts)).I32(int32(skTiles))
	early := int32(0)
	if comm.EarlyDependents {
		early = 1
	}
	return p.I32(early)
}

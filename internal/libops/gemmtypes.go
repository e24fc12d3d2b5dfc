package libops

// The GEMM operations' requests and answers: JSON forms of kernels/gemm/gpu's
// types, and the checks that keep a request from reaching the rules with
// values they divide by or allocate from without bound.

import (
	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

// problemReq is a GEMM problem: M rows in all split over World ranks, B
// [K, N]; Dtype defaults to bf16 and Elem (bytes per element) to the
// dtype's (2 without one).
type problemReq struct {
	Kernel string `json:"kernel"`
	M      int    `json:"m"`
	N      int    `json:"n"`
	K      int    `json:"k"`
	World  int    `json:"world"`
	Dtype  string `json:"dtype"`
	Elem   int    `json:"elem"`
}

// variant parses a request's kernel name, once, where it comes in.
func variant(k string) (gpu.Variant, error) {
	v, err := gpu.ParseVariant(k)
	return v, badErr(err)
}

// problem checks r by gpu.ParseProblem's rules.
func (r problemReq) problem() (gpu.Problem, error) {
	if _, err := variant(r.Kernel); err != nil {
		return gpu.Problem{}, err
	}
	if r.Dtype == "" {
		r.Dtype = "bf16"
	}
	p, err := gpu.ParseProblem(space.Problem{Dtype: r.Dtype,
		Shape: space.Shape{"m": int64(r.M), "n": int64(r.N), "k": int64(r.K)}}, r.World)
	if err != nil {
		return gpu.Problem{}, badErr(err)
	}
	if r.Elem != 0 {
		if r.Elem < 1 || r.Elem > 16 {
			return gpu.Problem{}, bad("elem %d: want bytes per element, 1..16", r.Elem)
		}
		p.ElemSize = r.Elem
	}
	return p, nil
}

// value is the kernel and the problem as Validate, FitDefault and the layout take it: the
// rules are theirs (a problem need not pass ParseProblem, as in Go), so it
// is checked only for what they divide by or allocate from. With a dtype
// the problem is ParseProblem's (its rules apply): what the dtype sets
// beside the sizes (FP8: the element size, the scales) is its to say.
func (r problemReq) value() (gpu.Variant, gpu.Problem, error) {
	v, err := variant(r.Kernel)
	if err != nil {
		return 0, gpu.Problem{}, err
	}
	if r.Dtype != "" {
		p, err := r.problem()
		return v, p, err
	}
	switch {
	case r.World < 1 || r.World > gpu.MaxWorld:
		return 0, gpu.Problem{}, bad("world %d outside 1..%d", r.World, gpu.MaxWorld)
	case r.M < 1 || r.N < 1 || r.K < 1 || r.M > maxRows || r.N > maxRows || r.K > maxRows:
		return 0, gpu.Problem{}, bad("m=%d, n=%d, k=%d: want sizes in 1..%d", r.M, r.N, r.K, maxRows)
	case r.Elem < 0 || r.Elem > 16:
		return 0, gpu.Problem{}, bad("elem %d: want bytes per element, 1..16", r.Elem)
	}
	elem := r.Elem
	if elem == 0 {
		elem = 2
	}
	return v, gpu.Problem{Dims: gemm.Dims{M: r.M, N: r.N, K: r.K}, World: r.World, ElemSize: elem}, nil
}

// tileJSON is a hopper.Tile's fields.
type tileJSON struct {
	BM          int  `json:"bm"`
	BN          int  `json:"bn"`
	Stages      int  `json:"stages"`
	Consumers   int  `json:"consumers"`
	PingPong    bool `json:"ping_pong"`
	GroupM      int  `json:"group_m"`
	BKMajor     bool `json:"bk_major"`
	Cluster     int  `json:"cluster"`
	SplitK      int  `json:"split_k"`
	StreamK     bool `json:"stream_k"`
	EvictFirstB bool `json:"evict_first_b"`
}

func (t tileJSON) tile() hopper.Tile {
	return hopper.Tile{BM: t.BM, BN: t.BN, Stages: t.Stages, Consumers: t.Consumers, PingPong: t.PingPong,
		GroupM: t.GroupM, BKMajor: t.BKMajor, Cluster: t.Cluster, SplitK: t.SplitK, StreamK: t.StreamK, EvictFirstB: t.EvictFirstB}
}

func tileOf(t hopper.Tile) tileJSON {
	return tileJSON{BM: t.BM, BN: t.BN, Stages: t.Stages, Consumers: t.Consumers, PingPong: t.PingPong,
		GroupM: t.GroupM, BKMajor: t.BKMajor, Cluster: t.Cluster, SplitK: t.SplitK, StreamK: t.StreamK, EvictFirstB: t.EvictFirstB}
}

// configJSON is a parsed gpu.Config of Kernel; Tile is set for impl=fused.
type configJSON struct {
	Kernel       string    `json:"kernel"`
	Impl         string    `json:"impl"`
	Tile         *tileJSON `json:"tile"`
	Chunks       int       `json:"chunks"`
	Streams      int       `json:"streams"`
	Algo         int       `json:"algo"`
	SMReserve    int       `json:"sm_reserve"`
	Copy         string    `json:"copy"`
	CopyBlocks   int       `json:"copy_blocks"`
	Direction    string    `json:"direction"`
	Push         string    `json:"push"`
	ReduceBlocks int       `json:"reduce_blocks"`
	Reduce       string    `json:"reduce"`
	Batch        bool      `json:"batch"`
	Graph        bool      `json:"graph"`
	NoFastAccum  bool      `json:"no_fast_accum"`
}

func configOf(v gpu.Variant, c gpu.Config) configJSON {
	out := configJSON{Kernel: v.String(), Impl: c.Impl, Chunks: c.Chunks, Streams: c.Streams, Algo: c.Algo,
		SMReserve: c.SMReserve, Copy: c.Copy, CopyBlocks: c.CopyBlocks, Direction: c.Direction, Push: c.Push,
		ReduceBlocks: c.ReduceBlocks, Reduce: c.Reduce, Batch: c.Batch, Graph: c.Graph, NoFastAccum: c.NoFastAccum}
	if c.Impl == gpu.ImplFused {
		t := tileOf(c.Tile)
		out.Tile = &t
	}
	return out
}

// config is the typed config c describes and its kernel; a fused one
// needs its tile.
func (c configJSON) config() (gpu.Variant, gpu.Config, error) {
	v, err := variant(c.Kernel)
	if err != nil {
		return 0, gpu.Config{}, err
	}
	out := gpu.Config{Impl: c.Impl, Chunks: c.Chunks, Streams: c.Streams, Algo: c.Algo, SMReserve: c.SMReserve,
		Copy: c.Copy, CopyBlocks: c.CopyBlocks, Direction: c.Direction, Push: c.Push, ReduceBlocks: c.ReduceBlocks,
		Reduce: c.Reduce, Batch: c.Batch, Graph: c.Graph, NoFastAccum: c.NoFastAccum}
	switch c.Impl {
	case gpu.ImplPipeline:
	case gpu.ImplFused:
		if c.Tile == nil {
			return 0, gpu.Config{}, bad("config: impl=fused needs its tile")
		}
		out.Tile = c.Tile.tile()
	default:
		return 0, gpu.Config{}, bad("config: impl %q: want %q or %q", c.Impl, gpu.ImplPipeline, gpu.ImplFused)
	}
	// The plans divide by these: Validate assumes a config ParseConfig made.
	if c.Chunks < 1 || c.Chunks > gpu.MaxChunks || c.Streams < 1 || c.Streams > gpu.MaxStreams {
		return 0, gpu.Config{}, bad("config: chunks %d (1..%d) and streams %d (1..%d)", c.Chunks, gpu.MaxChunks, c.Streams, gpu.MaxStreams)
	}
	return v, out, nil
}

// Bounds on what a request may ask to plan, so no request allocates
// without limit (an allocation the runtime cannot make is fatal, not a
// panic the boundary recovers): far past any kernel's limits.
const (
	maxRows    = 1 << 31
	maxPlanned = 1 << 12
)

// planReq is gpu.Plan's options for Kernel.
type planReq struct {
	Kernel  string `json:"kernel"`
	M       int    `json:"m"`
	World   int    `json:"world"`
	Rank    int    `json:"rank"`
	Chunks  int    `json:"chunks"`
	Streams int    `json:"streams"`
	Batch   bool   `json:"batch"`
}

// plan checks the options the plans divide and index by.
func (r planReq) plan() (gpu.Plan, error) {
	switch {
	case r.World < 1 || r.World > gpu.MaxWorld:
		return gpu.Plan{}, bad("world %d outside 1..%d", r.World, gpu.MaxWorld)
	case r.Rank < 0 || r.Rank >= r.World:
		return gpu.Plan{}, bad("rank %d outside 0..%d", r.Rank, r.World-1)
	case r.M < r.World || r.M%r.World != 0:
		return gpu.Plan{}, bad("m=%d: want a positive multiple of world %d", r.M, r.World)
	case r.M > maxRows:
		return gpu.Plan{}, bad("m=%d: at most %d rows", r.M, maxRows)
	case r.Chunks < 1 || r.Chunks > maxPlanned:
		return gpu.Plan{}, bad("chunks %d: want 1..%d", r.Chunks, maxPlanned)
	case r.Streams < 1 || r.Streams > maxPlanned:
		return gpu.Plan{}, bad("streams %d: want 1..%d", r.Streams, maxPlanned)
	}
	return gpu.Plan{M: r.M, World: r.World, Rank: r.Rank, Chunks: r.Chunks, Streams: r.Streams, Batch: r.Batch}, nil
}

type spanJSON struct {
	Owner int `json:"owner"`
	Index int `json:"index"`
	Start int `json:"start"`
	Rows  int `json:"rows"`
}

type stepJSON struct {
	spanJSON
	Batch  int `json:"batch"`
	Stream int `json:"stream"`
}

func spans(ss []gpu.Span) []spanJSON {
	out := make([]spanJSON, len(ss))
	for i, s := range ss {
		out[i] = spanJSON{s.Owner, s.Index, s.Start, s.Rows}
	}
	return out
}

func steps(ss []gpu.Step) []stepJSON {
	out := make([]stepJSON, len(ss))
	for i, s := range ss {
		out[i] = stepJSON{spanJSON{s.Owner, s.Index, s.Start, s.Rows}, s.Batch, s.Stream}
	}
	return out
}

// fusedReq is a fused GEMM's problem for PlanFusedAG / PlanFusedRS.
type fusedReq struct {
	M           int `json:"m"`
	N           int `json:"n"`
	World       int `json:"world"`
	Rank        int `json:"rank"`
	Chunks      int `json:"chunks"`
	BlockM      int `json:"block_m"`
	BlockN      int `json:"block_n"`
	RowsPerTile int `json:"rows_per_tile"`
	// Push: the peers send their chunks (direction=push), which changes
	// the order they land in (gpu.PlanFusedAG); false: this rank fetches.
	Push bool `json:"push"`
}

func (r fusedReq) check(rs bool) error {
	if _, err := (planReq{M: r.M, World: r.World, Rank: r.Rank, Chunks: r.Chunks, Streams: 1}).plan(); err != nil {
		return err
	}
	if r.RowsPerTile < 1 || r.M/r.RowsPerTile > maxPlanned*maxPlanned {
		return bad("rows_per_tile %d: want a positive tile height, at most %d tile rows", r.RowsPerTile, maxPlanned*maxPlanned)
	}
	if rs && (r.BlockM < 1 || r.BlockN < 1 || r.N < 1) {
		return bad("block_m %d, block_n %d, n=%d: want positive sizes", r.BlockM, r.BlockN, r.N)
	}
	return nil
}

// rsTableReq is a FusedRS (as fused_plan answered it) and the addresses
// of FusedRS.Table.
type rsTableReq struct {
	Bounds   []uint32 `json:"bounds"`
	Owner    []int    `json:"owner"`
	Index    []int    `json:"index"`
	Expect   []uint32 `json:"expect"`
	Dst      []uint64 `json:"dst"`
	Flag     []uint64 `json:"flag"`
	Epilogue struct {
		Me        int    `json:"me"`
		World     int    `json:"world"`
		SlotBytes uint64 `json:"slot_bytes"`
		Flags     uint64 `json:"flags"`
	} `json:"epilogue"`
}

// configProblem checks a typed config, its kernel and its problem.
func configProblem(cj configJSON, pr problemReq) (gpu.Variant, gpu.Config, gpu.Problem, error) {
	v, c, err := cj.config()
	if err != nil {
		return 0, gpu.Config{}, gpu.Problem{}, err
	}
	pr.Kernel = cj.Kernel
	_, p, err := pr.value()
	if err != nil {
		return 0, gpu.Config{}, gpu.Problem{}, err
	}
	if c.Impl == gpu.ImplFused && (c.Tile.BM < 1 || c.Tile.BN < 1 || c.Tile.GroupM < 1 || c.Tile.Consumers < 1) {
		// Validate divides by these after Check, which rejects them first.
		if err := c.Tile.Check(hopper.SmemLimit); err != nil {
			return 0, gpu.Config{}, gpu.Problem{}, bad("impl=fused: %v", err)
		}
	}
	return v, c, p, nil
}

// nonNil makes a nil slice encode as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

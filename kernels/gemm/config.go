// Package gemm owns what symmtune's fused GEMM+communication plugins
// (matmulrs: matmul then reduce-scatter; agmm: all-gather then matmul) share
// across backends: their tunable space, config parsing and the shape rules
// Validate applies, the tile schedule (group_m swizzle), a tiled f32 GEMM for
// the CPU backend, the seed-derived inputs every rank can regenerate, and
// the float64 references outputs are checked against. The CUDA kernels reuse
// the space, the schedule and the verification, so a config means the same
// thing on both backends.
package gemm

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/space"
)

// Implementations a config can select.
const (
	// Fused overlaps the GEMM with communication through per-block flags.
	Fused = "fused"
	// Sequential communicates then computes (or computes then
	// communicates) with a barrier in between: the baseline every fused
	// config must beat.
	Sequential = "sequential"
)

// Parameter names, as the GPU kernels name them.
const (
	ParamBlockM     = "block_m"
	ParamBlockN     = "block_n"
	ParamBlockK     = "block_k"
	ParamGroupM     = "group_m"
	ParamCommBlockM = "comm_block_m"
	ParamThreads    = "threads"
	ParamImpl       = "impl"
)

// FlagRows is the row granularity of the flag words in the symmetric
// region: one flag per FlagRows rows of the global M dimension. Every
// comm_block_m in the space is a multiple of it, so a communication block
// starting at global row g always owns flag g/FlagRows.
const FlagRows = 16

// Dims is a GEMM problem: C [M, N] = A [M, K] · B [K, N], row-major.
type Dims struct{ M, N, K int }

// DimNames are the problem dimensions both plugins declare.
var DimNames = []string{"m", "n", "k"}

// maxElems bounds each matrix so offsets stay in int and allocations sane.
const maxElems = 1 << 31

// ParseDims reads m, n, k from a shape.
func ParseDims(sh space.Shape) (Dims, error) {
	if len(sh) != 3 {
		return Dims{}, fmt.Errorf("shape %s: want m=<rows>,n=<cols>,k=<inner>", sh)
	}
	var d Dims
	for _, x := range []struct {
		name string
		dst  *int
	}{{"m", &d.M}, {"n", &d.N}, {"k", &d.K}} {
		v, ok := sh[x.name]
		if !ok {
			return Dims{}, fmt.Errorf("shape %s: missing dimension %q", sh, x.name)
		}
		if v <= 0 || v > maxElems {
			return Dims{}, fmt.Errorf("shape %s: dimension %s=%d out of range", sh, x.name, v)
		}
		*x.dst = int(v)
	}
	for _, e := range []struct {
		name string
		n    int64
	}{{"A", int64(d.M) * int64(d.K)}, {"B", int64(d.K) * int64(d.N)}, {"C", int64(d.M) * int64(d.N)}} {
		if e.n > maxElems {
			return Dims{}, fmt.Errorf("shape %s: %s has %d elements, more than the %d this plugin handles", sh, e.name, e.n, int64(maxElems))
		}
	}
	return d, nil
}

func ints(vs ...int64) []space.Value {
	out := make([]space.Value, len(vs))
	for i, v := range vs {
		out[i] = space.Int(v)
	}
	return out
}

// Space is the tunable space both plugins share. The full product has 3240
// configs; Validate keeps at most 1242 of them (comm_block_m must be a
// multiple of block_m, group_m may not exceed the row tiles of a block), and
// fewer on small shapes.
func Space() space.Space {
	return space.Space{Params: []space.Param{
		{Name: ParamBlockM, Values: ints(16, 32, 64, 128)},
		{Name: ParamBlockN, Values: ints(32, 64, 128)},
		{Name: ParamBlockK, Values: ints(32, 64, 128)},
		{Name: ParamGroupM, Values: ints(1, 4, 8)},
		{Name: ParamCommBlockM, Values: ints(16, 32, 64, 128, 256)},
		{Name: ParamThreads, Values: ints(1, 2, 4)},
		{Name: ParamImpl, Values: []space.Value{space.Str(Fused), space.Str(Sequential)}},
	}}
}

// Default is a config valid on any shape whose rows per rank are a
// multiple of 32 and whose n and k are at least 64.
func Default() space.Config {
	return space.Config{
		ParamBlockM: space.Int(32), ParamBlockN: space.Int(64), ParamBlockK: space.Int(64),
		ParamGroupM: space.Int(1), ParamCommBlockM: space.Int(32), ParamThreads: space.Int(1),
		ParamImpl: space.Str(Fused),
	}
}

// Config is a parsed space.Config.
type Config struct {
	BlockM, BlockN, BlockK int
	GroupM                 int
	CommBlockM             int
	Threads                int
	Impl                   string
}

// ParseConfig converts a space.Config into a Config, checking only that
// every parameter is present with the right type and a positive value; the
// rules that depend on the problem are Validate's.
func ParseConfig(c space.Config) (Config, error) {
	var out Config
	var errs []error
	for _, x := range []struct {
		name string
		dst  *int
	}{
		{ParamBlockM, &out.BlockM}, {ParamBlockN, &out.BlockN}, {ParamBlockK, &out.BlockK},
		{ParamGroupM, &out.GroupM}, {ParamCommBlockM, &out.CommBlockM}, {ParamThreads, &out.Threads},
	} {
		v, ok := c[x.name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("parameter %q missing", x.name))
		case v.IsStr:
			errs = append(errs, fmt.Errorf("parameter %q: %q is not an integer", x.name, v.Str))
		case v.Int < 1 || v.Int > 1<<20:
			errs = append(errs, fmt.Errorf("parameter %q: %d out of range", x.name, v.Int))
		default:
			*x.dst = int(v.Int)
		}
	}
	impl, ok := c[ParamImpl]
	switch {
	case !ok:
		errs = append(errs, fmt.Errorf("parameter %q missing", ParamImpl))
	case !impl.IsStr || (impl.Str != Fused && impl.Str != Sequential):
		errs = append(errs, fmt.Errorf("parameter %q: %s is neither %s nor %s", ParamImpl, impl, Fused, Sequential))
	default:
		out.Impl = impl.Str
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", c, err)
	}
	return out, nil
}

// Checked parses c and validates it for d at world ranks: what an
// instance does with each config the host hands it, since a config that
// passed Validate on the host is checked again where it runs.
func Checked(c space.Config, d Dims, world int) (Config, error) {
	cfg, err := ParseConfig(c)
	if err != nil {
		return Config{}, err
	}
	if err := Validate(cfg, d, world); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", c, err)
	}
	return cfg, nil
}

// Validate applies the rules both plugins share, for both backends. In
// both kernels each rank owns M/world rows (matmulrs: of the output; agmm:
// of A), cut into communication blocks of comm_block_m rows, each cut into
// row tiles of block_m, and every rank computes M × N values (matmulrs: its
// partial sum; agmm: all of C) in tiles of block_m × block_n. Ragged n and
// k are allowed (edge tiles are masked, as on the GPU); ragged rows are not,
// since a row tile may not straddle two ranks or two blocks.
func Validate(c Config, d Dims, world int) error {
	if world < 1 {
		return fmt.Errorf("world %d: need at least one rank", world)
	}
	if d.M%world != 0 {
		return fmt.Errorf("m=%d is not divisible by world %d: every rank owns the same number of rows", d.M, world)
	}
	rows := d.M / world
	if c.BlockM > rows {
		return fmt.Errorf("block_m %d exceeds the %d rows each rank owns (m=%d over %d ranks)", c.BlockM, rows, d.M, world)
	}
	if c.BlockN > d.N {
		return fmt.Errorf("block_n %d exceeds n=%d: the tile is larger than the problem", c.BlockN, d.N)
	}
	if c.BlockK > d.K {
		return fmt.Errorf("block_k %d exceeds k=%d: the tile is larger than the problem", c.BlockK, d.K)
	}
	if c.CommBlockM%c.BlockM != 0 {
		return fmt.Errorf("comm_block_m %d is not a multiple of block_m %d: a row tile may not straddle two communication blocks", c.CommBlockM, c.BlockM)
	}
	if rows%c.CommBlockM != 0 {
		return fmt.Errorf("comm_block_m %d does not divide the %d rows each rank owns", c.CommBlockM, rows)
	}
	if c.CommBlockM%FlagRows != 0 {
		return fmt.Errorf("comm_block_m %d is not a multiple of %d, the flag granularity", c.CommBlockM, FlagRows)
	}
	// group_m swizzles row tiles within one communication block; a larger
	// group behaves exactly like the whole block, so it would only
	// duplicate another config's measurement.
	if rt := c.CommBlockM / c.BlockM; c.GroupM > 1 && c.GroupM > rt {
		return fmt.Errorf("group_m %d exceeds the %d row tiles of a communication block (it would behave like group_m=%d)", c.GroupM, rt, rt)
	}
	if tiles := (d.M / c.BlockM) * ceilDiv(d.N, c.BlockN); c.Threads > tiles {
		return fmt.Errorf("threads %d exceed the %d output tiles: some would never get work", c.Threads, tiles)
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

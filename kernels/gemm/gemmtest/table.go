package gemmtest

import (
	"fmt"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/space"
)

// Shape is the problem the plugins' correctness tables run at world W:
// 128 rows per rank, n=96 and k=80, so block_n=64 and block_k=32/64 leave
// ragged edge tiles.
func Shape(world int) space.Shape { return space.Shape{"m": int64(128 * world), "n": 96, "k": 80} }

// Cfg builds a config from its tunables.
func Cfg(bm, bn, bk, gm, cbm, threads int, impl string) space.Config {
	return space.Config{
		gemm.ParamBlockM: space.Int(int64(bm)), gemm.ParamBlockN: space.Int(int64(bn)),
		gemm.ParamBlockK: space.Int(int64(bk)), gemm.ParamGroupM: space.Int(int64(gm)),
		gemm.ParamCommBlockM: space.Int(int64(cbm)), gemm.ParamThreads: space.Int(int64(threads)),
		gemm.ParamImpl: space.Str(impl),
	}
}

// Configs is the correctness table for Shape, each in both impls. Every
// entry is valid there (the tests check that too); together they cover the
// edge cases: the smallest tiles and blocks (many flags per rank), one
// block per rank (block_m = comm_block_m = rows per rank), ragged n and k,
// group_m swizzles of 4 and 8 row tiles, and more workers than cores.
func Configs() []space.Config {
	base := []space.Config{
		Cfg(16, 32, 32, 1, 16, 1, ""),   // 8 blocks per rank of one row tile each: many flags
		Cfg(16, 64, 64, 4, 64, 2, ""),   // swizzle, ragged n (96=64+32) and k (80=64+16)
		Cfg(32, 32, 32, 1, 32, 4, ""),   // 4 workers racing on shared counters
		Cfg(128, 64, 32, 1, 128, 2, ""), // one block and one row tile per rank
		Cfg(16, 32, 32, 4, 64, 4, ""),   // swizzle with 4 workers
		Cfg(32, 64, 64, 1, 64, 1, ""),   // two row tiles per block, ragged n and k
		Cfg(16, 32, 64, 8, 128, 1, ""),  // group_m 8 over the 8 row tiles of a block
		Cfg(64, 32, 32, 1, 128, 2, ""),  // two row tiles per block, 2 workers
	}
	var out []space.Config
	for _, c := range base {
		for _, impl := range []string{gemm.Fused, gemm.Sequential} {
			c := c.Clone()
			c[gemm.ParamImpl] = space.Str(impl)
			out = append(out, c)
		}
	}
	return out
}

// Check fails unless c is valid for kernel k's shared rules at world.
func Check(c space.Config, world int) error {
	cfg, err := gemm.ParseConfig(c)
	if err != nil {
		return err
	}
	d, err := gemm.ParseDims(Shape(world))
	if err != nil {
		return err
	}
	if err := gemm.Validate(cfg, d, world); err != nil {
		return fmt.Errorf("table config %s at world %d: %w", c, world, err)
	}
	return nil
}

package matmulrs

import (
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/gemmtest"
)

// TestVerifyTable: every table config at worlds 1, 2 and 4 against the
// float64 reference (gemmtest.VerifyTable).
func TestVerifyTable(t *testing.T) { gemmtest.VerifyTable(t, cpuKernel) }

// TestBackToBack: timed calls and verifies interleaved with no host reset,
// which would catch an overwritten partial product a slow peer was still reducing (gemmtest.BackToBack).
func TestBackToBack(t *testing.T) { gemmtest.BackToBack(t, cpuKernel) }

// TestScheduleCoversEveryTileOnce checks the fused and sequential task
// lists: every tile of the partial product exactly once, one reduction per
// own block, each after every tile of its block on this rank.
func TestScheduleCoversEveryTileOnce(t *testing.T) {
	for _, world := range []int{1, 2, 4} {
		d, _ := gemm.ParseDims(gemmtest.Shape(world))
		for _, c := range gemmtest.Configs() {
			cfg, err := gemm.ParseConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			for me := 0; me < world; me++ {
				in := &cpuInstance{CPUInstance: gemm.CPUInstance[task]{D: d, World: world, Me: me, Rows: d.M / world}}
				tasks := in.Schedule(cfg)
				seen := map[gemm.Tile]int{}
				reduced := map[int]bool{}
				for pos, tk := range tasks {
					if tk.reduce {
						if tk.Row/in.Rows != me || reduced[tk.Row] {
							t.Fatalf("%s rank %d: bad or repeated reduction of row %d", c, me, tk.Row)
						}
						reduced[tk.Row] = true
						for _, later := range tasks[pos:] {
							if !later.reduce && later.Row >= tk.Row && later.Row < tk.Row+cfg.CommBlockM {
								t.Fatalf("%s rank %d: tile %v scheduled after the reduction of its block", c, me, later.Tile)
							}
						}
						continue
					}
					seen[tk.Tile]++
				}
				want := d.M / cfg.BlockM * ((d.N + cfg.BlockN - 1) / cfg.BlockN)
				if len(seen) != want {
					t.Fatalf("%s rank %d: %d distinct tiles, want %d", c, me, len(seen), want)
				}
				for tl, n := range seen {
					if n != 1 {
						t.Fatalf("%s rank %d: tile %v scheduled %d times", c, me, tl, n)
					}
				}
				wantReduce := 0
				if cfg.Impl == gemm.Fused {
					wantReduce = in.Rows / cfg.CommBlockM
				}
				if len(reduced) != wantReduce {
					t.Fatalf("%s rank %d: %d reductions, want %d", c, me, len(reduced), wantReduce)
				}
			}
		}
	}
}

func TestOwnerOrder(t *testing.T) {
	// At every step the ranks serve different owners, and each rank's own
	// rows come last.
	for _, world := range []int{1, 2, 3, 4, 8} {
		for s := 0; s < world; s++ {
			used := map[int]bool{}
			for r := 0; r < world; r++ {
				o := ownerOrder(r, world)
				if o[world-1] != r {
					t.Fatalf("world %d rank %d: own rows not last: %v", world, r, o)
				}
				if used[o[s]] {
					t.Fatalf("world %d step %d: owner %d served by two ranks", world, s, o[s])
				}
				used[o[s]] = true
			}
		}
	}
}

// TestDescribe: the shared CPUKernel (tested in kernels/gemm) carries
// this kernel's name.
func TestDescribe(t *testing.T) {
	if d := CPU().Describe(); d.Name != "matmulrs" {
		t.Fatalf("describe: %+v", d)
	}
}

package agmm

import (
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/gemmtest"
)

// TestVerifyTable: every table config at worlds 1, 2 and 4 against the
// float64 reference (gemmtest.VerifyTable).
func TestVerifyTable(t *testing.T) { gemmtest.VerifyTable(t, cpuKernel) }

// TestBackToBack: timed calls and verifies interleaved with no host reset,
// which would catch a republished shard a slow peer was still reading (gemmtest.BackToBack).
func TestBackToBack(t *testing.T) { gemmtest.BackToBack(t, cpuKernel) }

// TestScheduleCoversEveryTileOnce checks the task lists: every tile of C
// exactly once, reading the shard that holds its rows; in the fused list
// each own chunk is published once, before any tile, and the tiles visit
// shards in pivot order starting with the own one.
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
				published := map[int]bool{}
				lastSrc, step := -1, -1
				for _, tk := range tasks {
					if tk.publish {
						if len(seen) > 0 || tk.Row/in.Rows != me || published[tk.Row] {
							t.Fatalf("%s rank %d: bad publish of row %d", c, me, tk.Row)
						}
						published[tk.Row] = true
						continue
					}
					seen[tk.Tile]++
					if cfg.Impl != gemm.Fused {
						continue
					}
					if tk.src != tk.Row/in.Rows {
						t.Fatalf("%s rank %d: tile %v reads shard %d", c, me, tk.Tile, tk.src)
					}
					if tk.src != lastSrc {
						step++
						if tk.src != (me+step)%world {
							t.Fatalf("%s rank %d: shard %d at step %d", c, me, tk.src, step)
						}
						lastSrc = tk.src
					}
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
				if cfg.Impl == gemm.Fused && len(published) != in.Rows/cfg.CommBlockM {
					t.Fatalf("%s rank %d: %d chunks published, want %d", c, me, len(published), in.Rows/cfg.CommBlockM)
				}
			}
		}
	}
}

func TestShardOrder(t *testing.T) {
	// Own shard first, and at every step the ranks read different shards.
	for _, world := range []int{1, 2, 3, 4, 8} {
		for s := 0; s < world; s++ {
			used := map[int]bool{}
			for r := 0; r < world; r++ {
				o := shardOrder(r, world)
				if o[0] != r {
					t.Fatalf("world %d rank %d: own shard not first: %v", world, r, o)
				}
				if used[o[s]] {
					t.Fatalf("world %d step %d: shard %d read by two ranks", world, s, o[s])
				}
				used[o[s]] = true
			}
		}
	}
}

// TestDescribe: the shared CPUKernel (tested in kernels/gemm) carries
// this kernel's name.
func TestDescribe(t *testing.T) {
	if d := CPU().Describe(); d.Name != "agmm" {
		t.Fatalf("describe: %+v", d)
	}
}

//go:build cuda

package allreduce

import (
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestValidateLamport: the CUDA plugin's Validate of the Lamport configs
// (no GPU needed): each algorithm's message cap, blocks with work over
// what the algorithm walks (the whole unpadded message; two_shot_lamport
// one rank's chunk of it), the resident-grid bound, and what every config
// must meet.
func TestValidateLamport(t *testing.T) {
	cfg := func(algo string, blocks, threads, unroll int64) space.Config {
		return space.Config{pAlgo: space.Str(algo), pBlocks: space.Int(blocks), pThreads: space.Int(threads),
			pUnroll: space.Int(unroll), pStages: space.Int(1)}
	}
	one := func(blocks, threads, unroll int64) space.Config { return cfg(OneShotLamport, blocks, threads, unroll) }
	two := func(blocks, threads, unroll int64) space.Config { return cfg(TwoShotLamport, blocks, threads, unroll) }
	prob := func(n int64, dtype string) space.Problem {
		return space.Problem{Dtype: dtype, Shape: map[string]int64{"n": n}}
	}
	cases := []struct {
		name  string
		c     space.Config
		p     space.Problem
		world int
		bad   string // "" valid
	}{
		{"B=1 bf16", one(8, 128, 1), prob(8192, "bf16"), 2, ""},                      // 1024 vectors, 7 x 128 < 1024
		{"B=1 one block too many", one(9, 128, 1), prob(8192, "bf16"), 2, "no work"}, // 8 x 128 >= 1024
		{"B=256 bf16 at 4 ranks", one(132, 512, 2), prob(256*8192, "bf16"), 4, ""},
		{"over the cap", one(132, 512, 2), prob(512*8192, "bf16"), 2, "takes messages up to"},
		{"f32 at the cap", one(64, 256, 1), prob(1<<20, "f32"), 8, ""},
		{"tiny unaligned n", one(1, 128, 1), prob(3, "f16"), 4, ""},
		{"stages", space.Config{pAlgo: space.Str(OneShotLamport), pBlocks: space.Int(1), pThreads: space.Int(128),
			pUnroll: space.Int(1), pStages: space.Int(2)}, prob(8192, "bf16"), 2, "only two_shot_ce_ag pipelines"},
		{"registers", one(1, 1024, 8), prob(1<<20, "bf16"), 8, "registers"},
		// two_shot_lamport: blocks share a chunk, 1/world of the vectors.
		{"two-shot B=16 at 4 ranks", two(8, 512, 1), prob(16*8192, "bf16"), 4, ""},                // chunks of 4096: 7 x 512 < 4096
		{"two-shot B=16 one block too many", two(9, 512, 1), prob(16*8192, "bf16"), 4, "no work"}, // 8 x 512 >= 4096
		{"two-shot B=64 at 4 ranks", two(32, 512, 1), prob(64*8192, "bf16"), 4, ""},               // chunks of 16384
		{"two-shot B=64 too many blocks", two(64, 512, 1), prob(64*8192, "bf16"), 4, "no work"},   // 63 x 512 >= 16384
		{"two-shot past one_shot_lamport's cap", two(132, 512, 2), prob(512*8192, "bf16"), 2, ""},
		{"two-shot at its cap", two(64, 512, 2), prob(1024*8192, "bf16"), 8, ""},
		{"two-shot over its cap", two(132, 512, 2), prob(1024*8192+8, "bf16"), 8, "two_shot_lamport takes messages up to 16777216"},
		{"two-shot grid not resident", two(264, 1024, 1), prob(1024*8192, "bf16"), 2, "resident threads"},
		{"two-shot tiny", two(1, 128, 1), prob(3, "f16"), 8, ""},
		{"two-shot registers", two(1, 1024, 8), prob(1<<20, "bf16"), 8, "registers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := cudaKernel{}.Validate(c.c, c.p, c.world, "cuda")
			switch {
			case c.bad == "" && err != nil:
				t.Errorf("Validate: %v, want valid", err)
			case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
				t.Errorf("Validate: %v, want an error with %q", err, c.bad)
			}
		})
	}
}

// TestSpaceHasLamport: searches (--where algorithm=one_shot_lamport or
// two_shot_lamport) can name them, and SymmetricBytes leaves room for the
// larger of their areas.
func TestSpaceHasLamport(t *testing.T) {
	found := map[string]bool{}
	for _, p := range cudaSpace().Params {
		if p.Name != pAlgo {
			continue
		}
		for _, v := range p.Values {
			found[v.Str] = true
		}
	}
	if !found[OneShotLamport] || !found[TwoShotLamport] {
		t.Fatalf("the space's algorithms %v lack a Lamport one", found)
	}
	for _, c := range []struct {
		n     int64
		world int
		want  int64
	}{
		{8192, 2, 3*8192*2 + 256 + 6*16384},
		{8192, 4, 3*8192*2 + 256 + 12*16384}, // one_shot_lamport's 12 messages, not two_shot_lamport's 24 chunks of a quarter
		{64, 8, 512 + 256 + 48*256},          // one line each: two_shot_lamport's 48 slots, not 24
		{1024 * 8192, 2, 3*1024*8192*2 + 256 + 12*(8<<20)},
	} {
		p := space.Problem{Dtype: "bf16", Shape: map[string]int64{"n": c.n}}
		got, err := cudaKernel{}.SymmetricBytes(p, c.world, "cuda")
		if err != nil || got != c.want {
			t.Errorf("n=%d world=%d: SymmetricBytes = %d, %v; want %d", c.n, c.world, got, err, c.want)
		}
	}
}

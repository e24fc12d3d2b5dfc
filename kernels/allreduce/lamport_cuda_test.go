//go:build cuda

package allreduce

import (
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestValidateLamport: the CUDA plugin's Validate of one_shot_lamport
// configs (no GPU needed): the message cap, blocks with work over the
// whole unpadded message, and what every config must meet.
func TestValidateLamport(t *testing.T) {
	cfg := func(blocks, threads, unroll int64) space.Config {
		return space.Config{pAlgo: space.Str(OneShotLamport), pBlocks: space.Int(blocks), pThreads: space.Int(threads),
			pUnroll: space.Int(unroll), pStages: space.Int(1)}
	}
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
		{"B=1 bf16", cfg(8, 128, 1), prob(8192, "bf16"), 2, ""},                      // 1024 vectors, 7 x 128 < 1024
		{"B=1 one block too many", cfg(9, 128, 1), prob(8192, "bf16"), 2, "no work"}, // 8 x 128 >= 1024
		{"B=256 bf16 at 4 ranks", cfg(132, 512, 2), prob(256*8192, "bf16"), 4, ""},
		{"over the cap", cfg(132, 512, 2), prob(512*8192, "bf16"), 2, "takes messages up to"},
		{"f32 at the cap", cfg(64, 256, 1), prob(1<<20, "f32"), 8, ""},
		{"tiny unaligned n", cfg(1, 128, 1), prob(3, "f16"), 4, ""},
		{"stages", space.Config{pAlgo: space.Str(OneShotLamport), pBlocks: space.Int(1), pThreads: space.Int(128),
			pUnroll: space.Int(1), pStages: space.Int(2)}, prob(8192, "bf16"), 2, "only two_shot_ce_ag pipelines"},
		{"registers", cfg(1, 1024, 8), prob(1<<20, "bf16"), 8, "registers"},
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

// TestSpaceHasLamport: searches (--where algorithm=one_shot_lamport) can
// name it, and SymmetricBytes leaves room for its area.
func TestSpaceHasLamport(t *testing.T) {
	found := false
	for _, p := range cudaSpace().Params {
		if p.Name != pAlgo {
			continue
		}
		for _, v := range p.Values {
			found = found || v.Str == OneShotLamport
		}
	}
	if !found {
		t.Fatal("one_shot_lamport is not in the space")
	}
	p := space.Problem{Dtype: "bf16", Shape: map[string]int64{"n": 8192}}
	got, err := cudaKernel{}.SymmetricBytes(p, 2, "cuda")
	if want := int64(3*8192*2 + 256 + 6*16384); err != nil || got != want {
		t.Errorf("SymmetricBytes = %d, %v; want %d", got, err, want)
	}
}

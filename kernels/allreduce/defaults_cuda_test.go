//go:build cuda

package allreduce

import (
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestDefaultsValidate: the CUDA plugin's Validate (no GPU needed) takes
// the untuned default at every golden case and at the edges of every rule
// of kernels/defaults.json, on 2, 4 and 8 ranks.
func TestDefaultsValidate(t *testing.T) {
	g := readGolden(t)
	type tc struct {
		n          int64
		elt, world int
	}
	var cases []tc
	for _, c := range g.Cases {
		cases = append(cases, tc{c.N, c.Elt, c.World})
	}
	for _, r := range rules.Rules {
		for _, world := range []int{2, 4, 8} {
			for _, elt := range []int{2, 4} {
				if m := r.MaxBytes / int64(elt); m > 0 {
					cases = append(cases, tc{m, elt, world}, tc{m + 1, elt, world}, tc{m - 3, elt, world})
				}
			}
		}
	}
	dtypes := map[int]string{2: "bf16", 4: "f32"}
	for _, c := range cases {
		d := Default(c.n, c.elt, c.world)
		p := space.Problem{Dtype: dtypes[c.elt], Shape: map[string]int64{"n": c.n}}
		if err := (cudaKernel{}).Validate(d, p, c.world, "cuda"); err != nil {
			t.Errorf("n=%d elt=%d world=%d: Default %s: %v", c.n, c.elt, c.world, d, err)
		}
	}
}

// TestDefaultsValidateTwoShotLamport: Validate takes the default of a
// rule naming two_shot_lamport at and around its bounds.
func TestDefaultsValidateTwoShotLamport(t *testing.T) {
	withRules(t, twoShotLamportRules(t), func() {
		for _, world := range []int{2, 3, 4} {
			for _, n := range []int64{1, 3, 8192, 16 * 8192, 64*8192 - 3, 64 * 8192} {
				d := Default(n, 2, world)
				if d["algorithm"].Str != TwoShotLamport {
					t.Fatalf("n=%d world=%d: Default %s, want the rule's two_shot_lamport", n, world, d)
				}
				p := space.Problem{Dtype: "bf16", Shape: map[string]int64{"n": n}}
				if err := (cudaKernel{}).Validate(d, p, world, "cuda"); err != nil {
					t.Errorf("n=%d world=%d: Default %s: %v", n, world, d, err)
				}
			}
		}
	})
}

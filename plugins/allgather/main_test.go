package main

import (
	"context"
	"testing"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/shm"
)

// The default config must run on every shape: Validate accepts it for
// small and odd sizes too.
func TestDefaultIsValidForEveryShape(t *testing.T) {
	k := allGather{}
	def := k.Describe().Default
	for _, n := range []int64{1, 3, 1000, 1 << 20} {
		for _, world := range []int{1, 2, 8} {
			p := space.Problem{Shape: space.Shape{"n": n}, Dtype: "f32"}
			if err := k.Validate(def, p, world, "cpu"); err != nil {
				t.Errorf("n=%d world %d: default rejected: %v", n, world, err)
			}
		}
	}
}

// Every config Validate accepts gathers the right values, on world ranks
// in this process (sdk.VerifyLocal: no host, no plugin binary).
func TestEveryValidConfigVerifies(t *testing.T) {
	k := allGather{}
	p := space.Problem{Shape: space.Shape{"n": 20000}, Dtype: "f32"}
	for _, c := range k.Describe().Space.Enumerate() {
		if k.Validate(c, p, 2, "cpu") != nil {
			continue
		}
		res, err := sdk.VerifyLocal(context.Background(), k, shm.Backend{}, 2, p, c, 42)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for r, v := range res {
			if !v.OK {
				t.Errorf("%s: rank %d: %s", c, r, v.Detail)
			}
		}
	}
}

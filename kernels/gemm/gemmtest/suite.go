package gemmtest

import (
	"fmt"
	"testing"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// Problem is the table's problem at world ranks.
func Problem(world int) space.Problem {
	return space.Problem{Shape: Shape(world), Dtype: "f32"}
}

// VerifyTable runs every table config, both impls, at worlds 1, 2 and 4
// with ranks as goroutines over real shared memory, and checks each
// rank's output against the float64 reference. All configs run on the
// same instances, so flags are reused across calls and config changes.
func VerifyTable(t *testing.T, k sdk.Kernel) {
	for _, world := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("w%d", world), func(t *testing.T) {
			insts := Open(t, k, Problem(world), world)
			for i, c := range Configs() {
				if err := Check(c, world); err != nil {
					t.Fatal(err)
				}
				if err := k.Validate(c, Problem(world), world, "cpu"); err != nil {
					t.Fatalf("Validate rejects table config %s: %v", c, err)
				}
				Verify(t, insts, c, uint64(1000*world+i))
			}
		})
	}
}

// BackToBack interleaves timed iterations (no host reset between them)
// with verifies at world 4: a call that overwrote symmetric data a slow
// peer was still reading, or a flag that still counted from an earlier
// call, shows up as a wrong verify afterwards.
func BackToBack(t *testing.T, k sdk.Kernel) {
	const world = 4
	insts := Open(t, k, Problem(world), world)
	for i, c := range Configs()[:6] {
		Bench(t, insts, c, 1, 3)
		Verify(t, insts, c, uint64(77+i))
	}
}

package allreduce

import "math"

// The plugin's check of the push two-shots' direct entry (DirectEntry,
// direct_cuda.go): Verify runs it once per config after the in-place call
// it times, on fresh inputs in a plain buffer, so every search trial of
// those algorithms also checks the kernel symmtune.torch runs on plain
// tensors.

// directCase is one direct call Verify makes: n elements at byte offset
// off of the plain buffer, the inputs filled from seed.
type directCase struct {
	n, off int64
	seed   uint64
}

// directGuard is how many bytes past the tensor (and before it, where it
// is offset) must keep their poison: more than the padding of any call
// (world*16 bytes at most), where a store past n would land.
const directGuard = 256

// directCaseFor is the direct call Verify makes for the problem's n
// elements of elt bytes on world ranks and its seed, the same on every
// rank (the call is collective: every rank must chunk the same n): up to a
// padding unit fewer elements than n, so the tensor ends part-way through
// a vector and the message needs padding, and on odd seeds the tensor one
// element past 16-byte alignment, so the tail code runs on every tile
// (symmtune.torch stages misaligned tensors, but the kernel takes them).
func directCaseFor(n int64, elt, world int, seed uint64) directCase {
	unit := int64(world) * int64(16/elt)
	c := directCase{n: max(n-int64(seed%uint64(unit)), 1), seed: seed ^ 0xd1ec7d1ec7}
	if seed>>32&1 == 1 {
		c.off = int64(elt)
	}
	return c
}

// checked turns the check kernel's sums (sum (out-ref)^2, sum ref^2, the
// NaN/Inf outputs) into the relative error and whether it passes tol.
func checked(num, den, bad, tol float64) (rel float64, ok bool) {
	rel = math.Inf(1)
	if bad == 0 && den > 0 {
		rel = math.Sqrt(num / den)
	}
	return rel, bad == 0 && rel <= tol
}

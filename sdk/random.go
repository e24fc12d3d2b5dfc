package sdk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
)

// Uniform returns a deterministic pseudo-random value in [-1, 1) for element
// i of rank's input under seed. Every rank can regenerate every other rank's
// input from (seed, rank, i), so a float64 reference needs no data exchange,
// and a fresh seed per check gives fresh inputs. CUDA kernels use the same
// mixing function (splitmix64), so GPU and CPU inputs agree.
func Uniform(seed uint64, rank int, i int64) float64 {
	x := seed ^ (uint64(rank)+1)*0x9E3779B97F4A7C15 ^ uint64(i)*0xD1B54A32D192ED03
	x = splitmix64(x)
	// 53 random bits -> [0,1) -> [-1,1)
	return float64(x>>11)*(1.0/(1<<53))*2 - 1
}

// UniformSum is the float64 reference of an all-reduce (sum) over world
// ranks whose inputs come from Uniform under seed, each element rounded to
// float32 as the ranks hold it: element i is the sum over ranks of
// float32(Uniform(seed, r, i)).
func UniformSum(seed uint64, world int, n int64) []float64 {
	ref := make([]float64, n)
	for i := range ref {
		for r := 0; r < world; r++ {
			ref[i] += float64(float32(Uniform(seed, r, int64(i))))
		}
	}
	return ref
}

// SumTolerance is the relative error CheckUniformSum accepts: float32
// sums of a few ranks' inputs, in any order, stay well within it.
const SumTolerance = 1e-5

// uniformAbsSum is, per element, the sum over ranks of |input|: the scale
// a float32 sum's rounding error grows with, whatever the sum itself is.
func uniformAbsSum(seed uint64, world int, n int64) []float64 {
	s := make([]float64, n)
	for i := range s {
		for r := 0; r < world; r++ {
			s[i] += math.Abs(float64(float32(Uniform(seed, r, int64(i)))))
		}
	}
	return s
}

// CheckUniformSum is the verdict on out, rank's result of an all-reduce
// (sum) over world ranks whose inputs came from Uniform under seed: OK when
// ‖out − UniformSum‖₂ is at most SumTolerance times the norm of the
// inputs' absolute sums. Against the sum's own norm, a few elements whose
// ranks' inputs nearly cancel (n=1 on 4 ranks, say) made a right float32
// sum fail at random; their rounding is bounded by the inputs, not the sum.
// NaN or Inf anywhere still fails (+Inf).
func CheckUniformSum(out []float32, seed uint64, world, rank int) VerifyResult {
	got := make([]float64, len(out))
	for i, v := range out {
		got[i] = float64(v)
	}
	n := int64(len(out))
	rel := RelErr(got, UniformSum(seed, world, n))
	if !math.IsInf(rel, 0) && !math.IsNaN(rel) {
		ref, scale := UniformSum(seed, world, n), uniformAbsSum(seed, world, n)
		var num, den float64
		for i := range ref {
			d := got[i] - ref[i]
			num += d * d
			den += scale[i] * scale[i]
		}
		if den > 0 {
			rel = math.Sqrt(num / den)
		}
	}
	res := VerifyResult{OK: rel <= SumTolerance, RelErr: rel}
	if !res.OK {
		res.Detail = fmt.Sprintf("rank %d: relative error %.3g exceeds 1e-5", rank, rel)
	}
	return res
}

func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// SourceHash is the kernel version for Description.KernelVersion: the first
// 12 hex digits of the SHA-256 of the kernel's source texts.
func SourceHash(sources ...[]byte) string {
	h := sha256.New()
	for _, s := range sources {
		h.Write(s)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// RelErr is ‖got − ref‖₂ / ‖ref‖₂ (‖got‖₂ when ref is all zero). NaN or Inf
// anywhere in got gives +Inf, so a poisoned element never passes.
func RelErr(got, ref []float64) float64 {
	var num, den float64
	for i := range ref {
		g := got[i]
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return math.Inf(1)
		}
		d := g - ref[i]
		num += d * d
		den += ref[i] * ref[i]
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

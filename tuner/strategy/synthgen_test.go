package strategy

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/symmtune/symmtune/space"
)

// Synthetic landscapes with known structure, each made from a seed
// (issue 57): the recorded landscapes are few and a strategy tuned on them
// learns them, so these judge it on structure it was not tuned on. Their
// spaces look like the kernels' own: a named family parameter (an impl or
// an all-reduce algorithm), a two-valued switch, and short ordinal size
// lists; scores are log-normal-ish microseconds with 1-3% noise. Every
// random choice comes from the seed, so a landscape is the same on every
// machine and run.
//
// Kinds (synthKinds), each a structure that misleads a search differently:
//
//   - basins: every family is a rough plateau with narrow wells (one index
//     step wide); the best well is in a good family.
//   - slowdefault: the best family is slow at the centre of its sizes,
//     where the first pass measures it (sampler.design), and fast only in
//     one corner.
//   - interact: two size parameters matter only through their sum (a ridge,
//     as blocks x threads = constant): one step along either leaves it.
//   - noisy: broad basins with 3% noise, many configs within 3%.
//   - invalid: half the space invalid in blobs, and failing configs around
//     the optimum.
//   - deceptive: two good families with broad basins 5-8% from the optimum,
//     and the optimum a narrow basin in a family that is 30-60% slower on
//     average, away from them.
var synthKinds = []string{"basins", "slowdefault", "interact", "noisy", "invalid", "deceptive"}

// synthShape is the config space of a synthetic landscape.
type synthShape struct {
	kind     string // "gemm" or "allreduce"
	families []string
	ordinals []space.Param
}

func synthGEMMShape() synthShape {
	return synthShape{kind: "gemm",
		families: []string{"pipeline", "fused:128x128:s3", "fused:128x256:s4", "fused:256x128:s4", "ce"},
		ordinals: []space.Param{
			intParam("chunks", 1, 2, 4, 8), intParam("blocks", 4, 8, 16, 32),
			intParam("stages", 2, 3, 4, 5), intParam("split_k", 1, 2, 4),
		}}
}

func synthAllreduceShape(small bool) synthShape {
	s := synthShape{kind: "allreduce",
		families: []string{"one_shot", "two_shot", "two_shot_push", "ring", "tree"},
		ordinals: []space.Param{
			intParam("chunk", 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072),
			intParam("threads", 64, 128, 256, 512, 1024), intParam("blocks", 1, 2, 4, 8, 16),
		}}
	if small {
		// 4 x 6 x 4 x 2 = 192 configs, the size of the all-reduce.
		s.families = s.families[:4]
		s.ordinals = []space.Param{
			intParam("chunk", 2048, 4096, 8192, 16384, 32768, 65536),
			intParam("threads", 128, 256, 512, 1024),
		}
	}
	return s
}

// synthFamily is one family's response surface over the ordinal indexes.
type synthFamily struct {
	base  float64   // log of its best score
	opt   []float64 // where its optimum sits, per ordinal, in index units
	curv  []float64 // curvature per ordinal (log-score per index step squared)
	wells [][]int   // basins: extra narrow wells (index points)
}

// syntheticLandscape generates the landscape of kind for seed on a GEMM-
// or all-reduce-shaped space (the seed picks which, and its size).
func syntheticLandscape(kind string, seed int64) Landscape {
	rng := rand.New(rand.NewSource(seed*7919 + int64(len(kind))))
	var sh synthShape
	switch rng.Intn(3) {
	case 0:
		sh = synthGEMMShape()
	case 1:
		sh = synthAllreduceShape(false)
	default:
		sh = synthAllreduceShape(kind != "deceptive" && kind != "invalid")
		if kind == "deceptive" || kind == "invalid" {
			sh = synthGEMMShape()
		}
	}
	nf, no := len(sh.families), len(sh.ordinals)
	size := func(d int) float64 { return float64(len(sh.ordinals[d].Values)) }
	noiseLevel := 0.01 + 0.02*rng.Float64()
	if kind == "noisy" {
		noiseLevel = 0.03
	}
	fams := make([]synthFamily, nf)
	for f := range fams {
		fm := synthFamily{base: 0.1 + 0.5*rng.Float64(), opt: make([]float64, no), curv: make([]float64, no)}
		for d := range fm.opt {
			fm.opt[d] = rng.Float64() * (size(d) - 1)
			fm.curv[d] = (0.01 + 0.05*rng.Float64())
		}
		fams[f] = fm
	}
	best := rng.Intn(nf)
	fams[best].base = 0
	second := (best + 1 + rng.Intn(nf-1)) % nf
	switch kind {
	case "basins":
		for f := range fams {
			for range 3 {
				w := make([]int, no)
				for d := range w {
					w[d] = rng.Intn(int(size(d)))
				}
				fams[f].wells = append(fams[f].wells, w)
			}
		}
	case "slowdefault":
		for d := range fams[best].opt {
			if rng.Intn(2) == 0 {
				fams[best].opt[d] = 0
			} else {
				fams[best].opt[d] = size(d) - 1
			}
			// 40% slower at the centre than in its corner, a gentle slope
			// (a few % a step) toward it.
			half := (size(d) - 1) / 2
			fams[best].curv[d] = math.Log(1.4) / float64(no) / (half * half)
		}
	case "deceptive":
		// The good families are broad and 5-8% off; the best family is
		// mediocre except for a narrow basin.
		fams[second].base = math.Log(1.05 + 0.03*rng.Float64())
		third := (second + 1) % nf
		if third == best {
			third = (third + 1) % nf
		}
		fams[third].base = math.Log(1.06 + 0.03*rng.Float64())
		for _, f := range []int{second, third} {
			for d := range fams[f].curv {
				fams[f].curv[d] = 0.004
			}
		}
		for f := range fams {
			if f != best && f != second && f != third {
				fams[f].base = math.Log(1.3 + 0.3*rng.Float64())
			}
		}
		for d := range fams[best].opt {
			fams[best].opt[d] = math.Round(fams[best].opt[d])
		}
	}
	// interact: the pair of ordinals that act through their sum.
	ia, ib := 0, 1%no
	ridge := rng.Float64()*(size(ia)-1) + rng.Float64()*(size(ib)-1)
	famParam := "impl"
	if sh.kind == "allreduce" {
		famParam = "algorithm"
	}
	params := append([]space.Param{strParam(famParam, sh.families...), intParam("graph", 0, 1)}, sh.ordinals...)
	graphGain := []float64{0, -0.04 * rng.Float64()}
	if rng.Intn(2) == 0 {
		graphGain[0], graphGain[1] = graphGain[1], graphGain[0]
	}
	name := fmt.Sprintf("synthetic-%s-%s-seed%d", kind, sh.kind, seed)
	salt := fmt.Sprint(seed, kind)
	return synth(name, params, func(idx []int) outcome {
		f, g, x := idx[0], idx[1], idx[2:]
		fm := fams[f]
		key := salt + idxKey(idx)
		// Invalid regions: real spaces lose configs to resource limits
		// (the last family with the largest sizes) and to blobs.
		if f == nf-1 && x[0]+x[1] >= int(size(0)+size(1))-2 {
			return outcome{"invalid", 0}
		}
		if kind == "invalid" {
			cx := int(math.Round(fams[(f+1)%nf].opt[0]))
			if noise("inv"+salt+fmt.Sprint(f, x[1:]))+0.15*math.Abs(float64(x[0]-cx)) < 0.5 {
				return outcome{"invalid", 0}
			}
		}
		s := fm.base + graphGain[g]
		switch kind {
		case "interact":
			for d := range x {
				if d != ia && d != ib {
					dx := float64(x[d]) - fm.opt[d]
					s += fm.curv[d] * dx * dx
				}
			}
			r := float64(x[ia]+x[ib]) - ridge
			s += 0.08 * r * r
			s += 0.005 * float64(x[ia]) // a slight tilt along the ridge
		case "basins":
			var bowl float64
			for d := range x {
				dx := float64(x[d]) - fm.opt[d]
				bowl += fm.curv[d] * dx * dx
			}
			bowl = 0.15 + math.Min(bowl, 0.3)*0.5 + 0.04*noise("rough"+key)
			for k, w := range fm.wells {
				dist := 0
				for d := range x {
					dist += absInt(x[d] - w[d])
				}
				depth := 0.15 - 0.02*float64(k)
				if dist == 0 {
					bowl = math.Min(bowl, 0.15-depth)
				} else if dist == 1 {
					bowl = math.Min(bowl, 0.15-depth/3)
				}
			}
			s += bowl
		case "deceptive":
			if f == best {
				dist := 0.0
				for d := range x {
					dist += math.Abs(float64(x[d]) - fm.opt[d])
				}
				// 0 at the optimum, 8% a step off, then the
				// family's mediocre plateau (35% from three steps).
				s += math.Min(0.08*dist, math.Log(1.35))
				break
			}
			fallthrough
		default:
			for d := range x {
				dx := float64(x[d]) - fm.opt[d]
				s += fm.curv[d] * dx * dx
			}
		}
		if kind == "invalid" && noise("fail"+key) < 0.08 {
			return outcome{"failed", 0}
		}
		if noise("fail2"+key) < 0.02 {
			return outcome{"crash", 0}
		}
		us := 100 * math.Exp(s) * (1 + noiseLevel*(2*noise("noise"+key)-1))
		return outcome{"ok", math.Round(us*1000) / 1000}
	})
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

package strategy

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/symmtune/symmtune/space"
)

// outcome is what a synthetic landscape records for one config.
type outcome struct {
	status string // ok, failed, wrong, hang, crash, invalid
	score  float64
}

// synth builds an in-memory landscape over the product of params, scoring
// each config with f (given its value indexes). Configs f calls invalid are
// left out, as the host's logs leave them out.
func synth(name string, params []space.Param, f func(idx []int) outcome) Landscape {
	sp := space.Space{Params: params}
	l := Landscape{Path: name, Space: sp, results: map[space.ConfigKey]Observation{}}
	idx := make([]int, len(params))
	for k := 0; k < sp.Size(); k++ {
		c := sp.At(idx)
		o := f(idx)
		if k == 0 {
			l.Default = c
		}
		if o.status != "invalid" {
			l.Valid = append(l.Valid, c)
			l.results[c.Key()] = Observation{Config: c, ScoreUS: o.score, OK: o.status == "ok"}
		}
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(params[i].Values) {
				break
			}
			idx[i] = 0
		}
	}
	return l
}

func intParam(name string, vals ...int64) space.Param {
	p := space.Param{Name: name}
	for _, v := range vals {
		p.Values = append(p.Values, space.Int(v))
	}
	return p
}

func strParam(name string, vals ...string) space.Param {
	p := space.Param{Name: name}
	for _, v := range vals {
		p.Values = append(p.Values, space.Str(v))
	}
	return p
}

func rangeParam(name string, n int) space.Param {
	p := space.Param{Name: name}
	for i := 0; i < n; i++ {
		p.Values = append(p.Values, space.Int(int64(i)))
	}
	return p
}

// noise returns a deterministic pseudo-random number in [0, 1) for key.
func noise(key string) float64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return float64(h.Sum64()>>11) / float64(1<<53)
}

func idxKey(idx []int) string { return fmt.Sprint(idx) }

// bowl: a smooth quadratic bowl with its minimum away from the default.
func bowl() Landscape {
	opt := []int{4, 1, 3, 6}
	return synth("bowl", []space.Param{rangeParam("a", 6), rangeParam("b", 5), rangeParam("c", 4), rangeParam("d", 8)},
		func(idx []int) outcome {
			s := 100.0
			for i, v := range idx {
				d := float64(v - opt[i])
				s += 3 * d * d
			}
			return outcome{"ok", s}
		})
}

// named: only named parameters vary, so there is no order to walk and
// nothing for a simplex to span.
func named() Landscape {
	return synth("named", []space.Param{strParam("alg", "one_shot", "ring", "two_shot", "tree", "push"), strParam("impl", "fused", "sequential", "ce")},
		func(idx []int) outcome {
			return outcome{"ok", 100 + 10*noise(idxKey(idx))}
		})
}

// plateau: flat almost everywhere, a narrow well in one corner with a cliff
// of failing configs on its edge.
func plateau() Landscape {
	return synth("plateau", []space.Param{rangeParam("a", 8), rangeParam("b", 8), rangeParam("c", 6)},
		func(idx []int) outcome {
			a, b, c := idx[0], idx[1], idx[2]
			switch {
			case a >= 6 && b >= 6:
				return outcome{"ok", 60 + 2*float64(7-a+7-b) + float64(c)}
			case a >= 5 && b >= 5:
				return outcome{"failed", 0}
			}
			return outcome{"ok", 100 + noise(idxKey(idx))}
		})
}

// holes: a bowl with a third of the configs invalid and some failing,
// including the lattice point at the bowl's bottom.
func holes() Landscape {
	opt := []int{5, 2, 6}
	return synth("holes", []space.Param{rangeParam("a", 8), strParam("alg", "one_shot", "ring", "two_shot"), rangeParam("c", 10)},
		func(idx []int) outcome {
			key := idxKey(idx)
			if idx[0] == opt[0] && idx[1] == opt[1] && idx[2] == opt[2] {
				return outcome{"invalid", 0}
			}
			if r := noise(key); r < 0.33 && idx[0]+idx[2] > 0 {
				return outcome{"invalid", 0}
			} else if r < 0.4 {
				return outcome{"crash", 0}
			}
			s := 50.0
			for i, v := range idx {
				d := float64(v - opt[i])
				s += 2 * d * d
			}
			return outcome{"ok", s * (1 + 0.01*noise("n"+key))}
		})
}

// syntheticGEMM models a tiled GEMM's config space on a GPU with 132 SMs
// and 164 KiB of shared memory per SM: tile sizes, k-depth, pipeline
// stages, warps per block and split-k. Shared memory above 99 KiB per
// block or tiles too small for their warps are invalid;
// a few configs fail (a deterministic hash stands in for flaky kernels);
// scores get ±1.5% multiplicative noise. It has several basins and large
// flat regions, like real GEMM landscapes.
func syntheticGEMM() Landscape {
	bms := []int64{32, 64, 128, 256}
	bns := []int64{32, 64, 128, 256}
	bks := []int64{16, 32, 64}
	stages := []int64{1, 2, 3, 4}
	warps := []int64{1, 2, 4, 8}
	splits := []int64{1, 2, 4}
	params := []space.Param{
		intParam("block_m", bms...), intParam("block_n", bns...), intParam("block_k", bks...),
		intParam("stages", stages...), intParam("warps", warps...), intParam("split_k", splits...),
	}
	const M, N, K = 4096.0, 2048.0, 8192.0
	return synth("landscape-synthetic-gemm", params, func(idx []int) outcome {
		bm, bn, bk := float64(bms[idx[0]]), float64(bns[idx[1]]), float64(bks[idx[2]])
		st, w, sk := float64(stages[idx[3]]), float64(warps[idx[4]]), float64(splits[idx[5]])
		key := idxKey(idx)
		smem := (bm + bn) * bk * st * 2
		if smem > 99*1024 || bm*bn/(w*32) < 16 || (w == 8 && bm*bn < 128*64) {
			return outcome{"invalid", 0}
		}
		if noise("fail"+key) < 0.03 {
			return outcome{"failed", 0}
		}
		tiles := math.Ceil(M/bm) * math.Ceil(N/bn) * sk
		perSM := math.Floor(164 * 1024 / smem)
		perSM = math.Min(perSM, math.Floor(64/w))
		if perSM < 1 {
			perSM = 1
		}
		waves := math.Ceil(tiles / (132 * perSM))
		// Work per tile: bigger tiles reuse operands better; warps must
		// match the tile; stages hide latency up to a point; a deep k-step
		// amortises the loop.
		flops := bm * bn * (K / sk)
		reuse := 1 / (1/bm + 1/bn) / 64
		eff := math.Min(1, 0.25+0.6*math.Min(reuse, 1.2))
		ideal := bm * bn / (w * 32 * 32)
		eff *= 1 / (1 + 0.15*math.Abs(math.Log2(ideal)))
		eff *= 1 - 0.35/st - 0.1*math.Abs(math.Log2(bk/32))
		t := waves * perSM * flops / (eff * 2.5e6)
		t += (sk - 1) * M * N * 4 / 3e6 // split-k reduction
		t *= 1 + 0.03*(noise("noise"+key)-0.5)
		return outcome{"ok", math.Round(t*1000) / 1000}
	})
}

// jsonl renders a landscape as a `symmtune search --log` file would.
func jsonl(l Landscape, kernel string) string {
	var b strings.Builder
	for _, c := range l.Valid {
		o := l.results[c.Key()]
		cfg, _ := json.Marshal(c)
		status, score := "failed", "null"
		if o.OK {
			status, score = "ok", strconv.FormatFloat(o.ScoreUS, 'f', -1, 64)
		}
		ranks := "[]"
		if o.OK {
			ranks = "[" + score + "," + score + "]"
		}
		fmt.Fprintf(&b, `{"config":%s,"status":%q,"score_us":%s,"ranks_us":%s,"kernel":%q,"backend":"synthetic","world":2,"dtype":"bf16","shape":"m=4096,n=2048,k=8192"}`+"\n",
			cfg, status, score, ranks, kernel)
	}
	return b.String()
}

package gpu

import (
	"fmt"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// eachConfig calls f with every config of s in Enumerate's order, like
// space.Each, but in one map that it changes in place: the listing's own
// cost, not a fresh map per config (the plugins get theirs from the wire,
// which is the sdk's cost). f must not keep c.
func eachConfig(s space.Space, f func(c space.Config)) {
	idx := make([]int, len(s.Params))
	c := s.At(idx)
	for n := s.Size(); n > 0; n-- {
		f(c)
		for i := len(idx) - 1; i >= 0; i-- {
			p := s.Params[i]
			if idx[i]++; idx[i] < len(p.Values) {
				c[p.Name] = p.Values[idx[i]]
				break
			}
			idx[i] = 0
			c[p.Name] = p.Values[0]
		}
	}
}

// listSpace is what a plugin does when the host lists its space for a
// problem: for every config, the plugin's check (Kernel.checked) and, for
// each rejected one, its reason's text (the sdk sends it back). It
// returns how many configs it asked about and how many were valid.
func listSpace(v Variant, p space.Problem, world int) (configs, valid int) {
	eachConfig(spaceOf(v), func(c space.Config) {
		configs++
		if _, _, err := v.check(c, p, world); err != nil {
			_ = err.Error()
			return
		}
		valid++
	})
	return configs, valid
}

// BenchmarkListSpace lists each plugin's whole space at the shape of the
// README's example, bf16, on one and two ranks: what delays every GPU
// search's start.
//
//	go test -run '^$' -bench ListSpace -benchmem ./kernels/gemm/gpu
func BenchmarkListSpace(b *testing.B) {
	p := space.Problem{Shape: space.Shape{"m": 8192, "n": 3584, "k": 8192}, Dtype: "bf16"}
	for _, v := range Variants {
		for _, world := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/world=%d", v, world), func(b *testing.B) {
				var configs, valid int
				for b.Loop() {
					configs, valid = listSpace(v, p, world)
				}
				b.ReportMetric(float64(configs), "configs")
				b.ReportMetric(float64(valid), "valid")
			})
		}
	}
}

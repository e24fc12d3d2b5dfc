package main

import (
	"fmt"
	"sort"
	"strings"
)

// The shape sets -set names; no build tag, so CI tests them without CUDA.

type shape struct{ m, n, k int }

func (s shape) String() string { return fmt.Sprintf("%dx%dx%d", s.m, s.n, s.k) }

func parseShapes(s string) ([]shape, error) {
	var out []shape
	for _, f := range strings.Split(s, ",") {
		var sh shape
		if _, err := fmt.Sscanf(f, "%dx%dx%d", &sh.m, &sh.n, &sh.k); err != nil || sh.String() != f {
			return nil, fmt.Errorf("shape %q: want MxNxK", f)
		}
		out = append(out, sh)
	}
	return out, nil
}

// issue56Table is issue 56's table: the shapes its first measurement of
// the GEMM alone against cuBLASLt ran (1 x H200, 2026-12-01).
var issue56Table = []shape{
	{8192, 3584, 8192}, {16384, 3584, 8192}, {4096, 1792, 4096}, {4096, 14336, 4096}, {8192, 8192, 8192},
	{12288, 5120, 5120}, {1024, 28672, 8192}, {512, 7168, 4096}, {256, 8192, 8192}, {128, 14336, 4096},
	{64, 14336, 4096},
}

// model is a dense transformer's dimensions, as its config.json gives them.
type model struct {
	name                     string
	hidden, intermediate     int
	qHeads, kvHeads, headDim int
}

// issue56Models are the models issue 56 names, from their Hugging Face
// configs: Llama-3-70B (hidden_size 8192, intermediate_size 28672, 64
// attention heads, 8 key-value heads of 128) and Qwen2.5-72B (8192, 29568,
// 64, 8, 128).
var issue56Models = []model{
	{name: "Llama-3-70B", hidden: 8192, intermediate: 28672, qHeads: 64, kvHeads: 8, headDim: 128},
	{name: "Qwen2.5-72B", hidden: 8192, intermediate: 29568, qHeads: 64, kvHeads: 8, headDim: 128},
}

// projections are one rank's N x K of the model's four projections at
// tensor parallelism tp, as Megatron and vLLM shard them: qkv (the fused
// q, k and v projection, N = (q heads + 2 kv heads) x head dim, K = hidden)
// and gate_up (the fused gate and up projection, N = 2 x intermediate, K =
// hidden) are column-parallel, N/tp; o (N = hidden, K = q heads x head dim)
// and down (N = hidden, K = intermediate) are row-parallel, K/tp. At tp 8
// each rank holds one of the 8 kv heads, so nothing is replicated.
func (md model) projections(tp int) [][2]int {
	q, kv := md.qHeads*md.headDim, md.kvHeads*md.headDim
	return [][2]int{
		{(q + 2*kv) / tp, md.hidden},          // qkv
		{md.hidden, q / tp},                   // o
		{2 * md.intermediate / tp, md.hidden}, // gate_up
		{md.hidden, md.intermediate / tp},     // down
	}
}

// issue56TP and issue56Rows are the tensor-parallel degrees and the rows
// (tokens) issue 56 measures each model's projections at.
var (
	issue56TP   = []int{1, 2, 4, 8}
	issue56Rows = []int{64, 256, 1024, 4096, 16384}
)

// issue56Shapes is issue 56's whole set: its table, then every model's
// projections at every tp and row count, by M, N and K, each shape once
// (qkv and o are the same in both models; the table's 1024 x 28672 x 8192
// is Llama's gate_up at tp 2, 256 x 8192 x 8192 the o projection at tp 1).
func issue56Shapes() []shape {
	var proj []shape
	for _, md := range issue56Models {
		for _, tp := range issue56TP {
			for _, nk := range md.projections(tp) {
				for _, m := range issue56Rows {
					proj = append(proj, shape{m, nk[0], nk[1]})
				}
			}
		}
	}
	sort.Slice(proj, func(i, j int) bool {
		a, b := proj[i], proj[j]
		if a.m != b.m {
			return a.m < b.m
		}
		if a.n != b.n {
			return a.n < b.n
		}
		return a.k < b.k
	})
	return dedupe(append(append([]shape{}, issue56Table...), proj...))
}

// issue56SmallNK are the N x K of issue56Small: the narrowest and the
// widest column-parallel products (qkv at tp 8, 1280 x 8192; gate_up of
// Llama at tp 2, 28672 x 8192, the table's 1024-row shape), a short K
// (down at tp 8, 8192 x 3584), the table's small-M shape (14336 x 4096)
// and a square one (o at tp 1, 8192 x 8192).
var issue56SmallNK = [][2]int{{1280, 8192}, {8192, 3584}, {14336, 4096}, {8192, 8192}, {28672, 8192}}

// issue56SmallRows are issue56Small's rows: where the default tile (128
// rows, clusters of two CTAs) leaves most of its rows or SMs empty.
var issue56SmallRows = []int{64, 128, 256, 512, 1024}

// issue56Small is the budgeted subset for the small-M default rule (bench/
// gemmalone-56.sh's SET=small: one device call): issue56SmallNK at
// issue56SmallRows, by M so that a run cut short loses the largest rows.
func issue56Small() []shape {
	var out []shape
	for _, m := range issue56SmallRows {
		for _, nk := range issue56SmallNK {
			out = append(out, shape{m, nk[0], nk[1]})
		}
	}
	return out
}

func dedupe(in []shape) []shape {
	seen := map[shape]bool{}
	var out []shape
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// shapeSets are -set's names.
var shapeSets = map[string]func() []shape{
	"issue56":       issue56Shapes,
	"issue56-small": issue56Small,
	"issue56-table": func() []shape { return append([]shape{}, issue56Table...) },
}

// setNames lists shapeSets' names, for -set's usage and errors.
func setNames() string {
	var names []string
	for n := range shapeSets {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// shapesOf is -set's shapes, or -shapes' where set is empty.
func shapesOf(set, list string) ([]shape, error) {
	if set == "" {
		return parseShapes(list)
	}
	f, ok := shapeSets[set]
	if !ok {
		return nil, fmt.Errorf("-set %q: want one of %s", set, setNames())
	}
	return f(), nil
}

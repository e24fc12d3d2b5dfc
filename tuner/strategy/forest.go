package strategy

import (
	"math"
	"math/rand"
)

// forest is a small random forest of regression trees over the index
// lattice: the surrogate model the surrogate strategy ranks unmeasured
// configs by. Features are the configs' value indexes; an ordered
// parameter splits at a threshold (index <= t), a named one (algorithm,
// impl) on one value against the rest, since its order means nothing.
// Trees are fitted on bootstrap samples with a random subset of the
// parameters tried at each node, so their spread says how sure the model
// is. Everything is seeded: the same history fits the same forest.
type forest struct {
	trees []tree
}

type tree struct {
	nodes []treeNode
}

// treeNode is a leaf when left < 0; otherwise points with lo <=
// idx[param] <= hi go left: an ordered split at cut has lo at the least
// int32 and hi = cut, a named one on value cut has lo = hi = cut. One test
// for both kinds, without a branch on the kind.
//
// Fields are int32 to keep a node in 32 bytes: predict walks every tree
// for every valid config after each fit, and the nodes' cache footprint
// was most of its time.
type treeNode struct {
	value       float64
	param       int32
	lo, hi      int32
	left, right int32
}

// Forest shape. Kernel spaces have a handful of parameters and the model
// sees at most a few hundred trials, so small, shallow-ish trees do.
const (
	forestTrees   = 24
	forestMinLeaf = 2
	forestDepth   = 10
)

// fitForest fits a forest to points x (value indexes) and targets y.
// named[d] marks parameter d as named (unordered).
func fitForest(x [][]int, y []float64, named []bool, rng *rand.Rand) forest {
	f := forest{trees: make([]tree, forestTrees)}
	dims := len(named)
	try := (dims*2 + 2) / 3
	if try < 1 {
		try = 1
	}
	// Per-value sums for bestSplit, sized once: values are small indexes.
	width := 1
	for _, p := range x {
		for _, v := range p {
			width = max(width, v+1)
		}
	}
	b := treeBuilder{x: x, y: y, named: named, try: try, rng: rng, sum: make([]float64, width), cnt: make([]int, width)}
	// The points by parameter (col[d][i] = x[i][d]): bestSplit reads one
	// parameter of every point in a sample.
	b.col = make([][]int32, dims)
	for d := range b.col {
		b.col[d] = make([]int32, len(x))
		for i, p := range x {
			b.col[d][i] = int32(p[d])
		}
	}
	b.order = make([]int, dims)
	b.right = make([]int, len(x))
	sample := make([]int, len(x))
	for k := range f.trees {
		for i := range sample {
			sample[i] = rng.Intn(len(x))
		}
		b.nodes = nil
		b.grow(sample, 0)
		f.trees[k] = tree{nodes: b.nodes}
	}
	return f
}

// predict returns the mean and the standard deviation over the trees of
// the prediction for point p (predictAll's answer for one point).
func (f forest) predict(p []int) (mean, sd float64) {
	var m, s [1]float64
	f.predictAll([][]int{p}, m[:], s[:])
	return m[0], s[0]
}

// predictAll sets mean[i] and sd[i] to predict(pts[i]) for every point,
// walking the trees one at a time over all the points: a tree's nodes stay
// in the core's cache while it answers them all, where predict walks all
// trees for each point. Each point's sums add the trees in the same order
// as predict, so the answers are the same to the bit.
func (f forest) predictAll(pts [][]int, mean, sd []float64) {
	sum, sq := mean[:len(pts)], sd[:len(pts)]
	clear(sum)
	clear(sq)
	for _, t := range f.trees {
		for i, p := range pts {
			v := t.predict(p)
			sum[i] += v
			sq[i] += v * v
		}
	}
	n := float64(len(f.trees))
	for i := range pts {
		mu := sum[i] / n
		mean[i], sd[i] = mu, math.Sqrt(math.Max(0, sq[i]/n-mu*mu))
	}
}

func (t tree) predict(p []int) float64 {
	nodes := t.nodes
	nd := &nodes[0]
	for nd.left >= 0 {
		if nd.goesLeft(p) {
			nd = &nodes[nd.left]
		} else {
			nd = &nodes[nd.right]
		}
	}
	return nd.value
}

func (nd *treeNode) goesLeft(p []int) bool {
	x := p[nd.param]
	return int(nd.lo) <= x && x <= int(nd.hi)
}

type treeBuilder struct {
	x     [][]int
	y     []float64
	named []bool
	try   int
	rng   *rand.Rand
	nodes []treeNode
	sum   []float64 // scratch for bestSplit
	cnt   []int
	col   [][]int32 // col[d][i] = x[i][d]
	order []int     // scratch for bestSplit's parameter order
	right []int     // scratch for grow's partition
}

// grow adds the subtree for the points in sample and returns its node.
func (b *treeBuilder) grow(sample []int, depth int) int {
	id := len(b.nodes)
	mean := 0.0
	for _, i := range sample {
		mean += b.y[i]
	}
	mean /= float64(len(sample))
	b.nodes = append(b.nodes, treeNode{left: -1, right: -1, value: mean})
	if depth >= forestDepth || len(sample) < 2*forestMinLeaf {
		return id
	}
	param, cut, isNamed, ok := b.bestSplit(sample)
	if !ok {
		return id
	}
	// Partition sample in place, each side in its order: the left points
	// to its front, the right ones through the scratch to its back. The
	// subtrees only reorder their own parts.
	col := b.col[param]
	nl, right := 0, b.right[:0]
	for _, i := range sample {
		v := int(col[i])
		if (isNamed && v == cut) || (!isNamed && v <= cut) {
			sample[nl] = i
			nl++
		} else {
			right = append(right, i)
		}
	}
	copy(sample[nl:], right)
	l := b.grow(sample[:nl], depth+1)
	r := b.grow(sample[nl:], depth+1)
	nd := &b.nodes[id]
	nd.left, nd.right = int32(l), int32(r)
	nd.param, nd.lo, nd.hi = int32(param), math.MinInt32, int32(cut)
	if isNamed {
		nd.lo = int32(cut)
	}
	return id
}

// bestSplit tries a random subset of the parameters and returns the split
// that most reduces the squared error, leaving forestMinLeaf points or
// more on each side.
func (b *treeBuilder) bestSplit(sample []int) (param, cut int, isNamed, ok bool) {
	// b.rng.Perm(dims) into a reused slice: the same draws, in the same
	// order, as math/rand's Perm makes.
	order := b.order
	for i := range order {
		j := b.rng.Intn(i + 1)
		order[i] = order[j]
		order[j] = i
	}
	bestGain := 1e-12
	var total, totalSq float64
	for _, i := range sample {
		total += b.y[i]
		totalSq += b.y[i] * b.y[i]
	}
	n := float64(len(sample))
	base := totalSq - total*total/n
	tried := 0
	for _, d := range order {
		if tried == b.try && ok {
			break
		}
		tried++
		// Sum and count of targets per value index, in one pass over the
		// sample (the scratch spans every value; the splits read up to
		// the sample's largest).
		col := b.col[d]
		clear(b.sum)
		clear(b.cnt)
		maxV := int32(0)
		for _, i := range sample {
			v := col[i]
			maxV = max(maxV, v)
			b.sum[v] += b.y[i]
			b.cnt[v]++
		}
		sum, cnt := b.sum[:maxV+1], b.cnt[:maxV+1]
		gain := func(ls float64, lc int) float64 {
			rc := len(sample) - lc
			if lc < forestMinLeaf || rc < forestMinLeaf {
				return -1
			}
			rs := total - ls
			sse := totalSq - ls*ls/float64(lc) - rs*rs/float64(rc)
			return base - sse
		}
		if b.named[d] {
			for v := range sum {
				if g := gain(sum[v], cnt[v]); g > bestGain {
					bestGain, param, cut, isNamed, ok = g, d, v, true, true
				}
			}
			continue
		}
		var ls float64
		lc := 0
		for v := 0; v < int(maxV); v++ {
			ls += sum[v]
			lc += cnt[v]
			if cnt[v] == 0 {
				continue
			}
			if g := gain(ls, lc); g > bestGain {
				bestGain, param, cut, isNamed, ok = g, d, v, false, true
			}
		}
	}
	return param, cut, isNamed, ok
}

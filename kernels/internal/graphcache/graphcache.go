// Package graphcache keeps a kernel runner's CUDA graphs by the operands they were captured
// with: the rule that a call seen once runs directly, the second is captured,
// and later ones replay (kernels/gemm/gpu's and kernels/allreduce's runners).
package graphcache

import "errors"

// CacheSize is how many graphs a config keeps, and SeenSize how
// many operand sets seen once it remembers: a program's steady state
// passes the same few addresses again and again (torch's caching
// allocator), and a graph holds the addresses it was captured with.
const (
	CacheSize = 8
	SeenSize  = 64
)

// Cache is one config's graphs (G) by operands (K), least recently
// used first, and the operands seen once: graph=1 runs a call seen once at
// a set of operands directly, captures it the second time (Second), and
// replays it from then on (Get). Its rules need no GPU.
type Cache[K comparable, G any] struct {
	graphs  []keyedGraph[K, G]
	seen    []K
	Destroy func(G) error
}

type keyedGraph[K comparable, G any] struct {
	at K
	g  G
}

// Get returns the graph of operands p and marks it the most recently used.
func (gc *Cache[K, G]) Get(p K) (G, bool) {
	for i, kg := range gc.graphs {
		if kg.at == p {
			copy(gc.graphs[i:], gc.graphs[i+1:])
			gc.graphs[len(gc.graphs)-1] = kg
			return kg.g, true
		}
	}
	var none G
	return none, false
}

// Second says whether p was seen once before (and forgets it then), else
// remembers it, forgetting the oldest past SeenSize.
func (gc *Cache[K, G]) Second(p K) bool {
	for i, s := range gc.seen {
		if s == p {
			gc.seen = append(gc.seen[:i], gc.seen[i+1:]...)
			return true
		}
	}
	gc.seen = append(gc.seen, p)
	if len(gc.seen) > SeenSize {
		gc.seen = gc.seen[1:]
	}
	return false
}

// Put adds g as p's graph, destroying the least recently used one past
// CacheSize.
func (gc *Cache[K, G]) Put(p K, g G) error {
	gc.graphs = append(gc.graphs, keyedGraph[K, G]{p, g})
	if len(gc.graphs) <= CacheSize {
		return nil
	}
	old := gc.graphs[0]
	gc.graphs = gc.graphs[1:]
	return gc.Destroy(old.g)
}

// DestroyAll destroys every graph.
func (gc *Cache[K, G]) DestroyAll() error {
	var errs []error
	for _, kg := range gc.graphs {
		errs = append(errs, gc.Destroy(kg.g))
	}
	gc.graphs = nil
	return errors.Join(errs...)
}

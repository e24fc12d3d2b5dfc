package gpu

import "errors"

// graphCacheSize is how many graphs a config keeps, and graphSeenSize how
// many operand sets seen once it remembers: a program's steady state
// passes the same few addresses again and again (torch's caching
// allocator), and a graph holds the addresses it was captured with.
const (
	graphCacheSize = 8
	graphSeenSize  = 64
)

// graphCache is one config's graphs (G) by operands (K), least recently
// used first, and the operands seen once: graph=1 runs a call seen once at
// a set of operands directly, captures it the second time (second), and
// replays it from then on (get). It is the Runner's; its rules need no GPU.
type graphCache[K comparable, G any] struct {
	graphs  []keyedGraph[K, G]
	seen    []K
	destroy func(G) error
}

type keyedGraph[K comparable, G any] struct {
	at K
	g  G
}

// get returns the graph of operands p and marks it the most recently used.
func (gc *graphCache[K, G]) get(p K) (G, bool) {
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

// second says whether p was seen once before (and forgets it then), else
// remembers it, forgetting the oldest past graphSeenSize.
func (gc *graphCache[K, G]) second(p K) bool {
	for i, s := range gc.seen {
		if s == p {
			gc.seen = append(gc.seen[:i], gc.seen[i+1:]...)
			return true
		}
	}
	gc.seen = append(gc.seen, p)
	if len(gc.seen) > graphSeenSize {
		gc.seen = gc.seen[1:]
	}
	return false
}

// put adds g as p's graph, destroying the least recently used one past
// graphCacheSize.
func (gc *graphCache[K, G]) put(p K, g G) error {
	gc.graphs = append(gc.graphs, keyedGraph[K, G]{p, g})
	if len(gc.graphs) <= graphCacheSize {
		return nil
	}
	old := gc.graphs[0]
	gc.graphs = gc.graphs[1:]
	return gc.destroy(old.g)
}

// destroyAll destroys every graph.
func (gc *graphCache[K, G]) destroyAll() error {
	var errs []error
	for _, kg := range gc.graphs {
		errs = append(errs, gc.destroy(kg.g))
	}
	gc.graphs = nil
	return errors.Join(errs...)
}

package gpu

// Span is a range of the M global rows: chunk Index of rank Owner's rows.
type Span struct {
	Owner, Index int
	Start, Rows  int
}

// Shards cuts each of world ranks' m/world rows into chunks spans of
// balanced sizes (they differ by at most one row): spans[owner][index].
func Shards(m, world, chunks int) [][]Span {
	rows := m / world
	out := make([][]Span, world)
	for q := range out {
		out[q] = make([]Span, chunks)
		for c := range out[q] {
			lo, hi := rows*c/chunks, rows*(c+1)/chunks
			out[q][c] = Span{Owner: q, Index: c, Start: q*rows + lo, Rows: hi - lo}
		}
	}
	return out
}

// Step is one product of a plan: the rows of Span, on product stream
// Stream.
type Step struct {
	Span
	Stream int
}

// GEMMs is how many products a plan of kernel issues per call.
func GEMMs(kernel string, chunks, world int) int {
	if kernel == AGMM {
		return 1 + (world-1)*chunks
	}
	return world * chunks
}

// peers lists the other ranks in the order rank talks to them: the next
// rank first. At each moment every rank then works with a different peer,
// so no rank's links are the target of all the others at once.
func peers(rank, world int) []int {
	out := make([]int, 0, world-1)
	for s := 1; s < world; s++ {
		out = append(out, (rank+s)%world)
	}
	return out
}

// AGPlan is one rank's all-gather + matmul: C[M,N] = A[M,K]·B[K,N] where
// each rank holds one row shard of A.
type AGPlan struct {
	// Pulls[i] are the chunks pulled from peer Peers[i], in order, on that
	// peer's own copy stream: every link is busy from the start.
	Peers []int
	Pulls [][]Span
	// Products in issue order: the rank's own shard first (no
	// communication to wait for), then chunk by chunk in arrival order
	// (every peer's chunk 0, then chunk 1, ...), each after its pull.
	Products []Step
}

// PlanAG plans rank's all-gather + matmul.
func PlanAG(m, world, rank, chunks, streams int) AGPlan {
	sh := Shards(m, world, chunks)
	rows := m / world
	p := AGPlan{Peers: peers(rank, world)}
	p.Products = append(p.Products, Step{Span: Span{Owner: rank, Index: -1, Start: rank * rows, Rows: rows}})
	for _, q := range p.Peers {
		p.Pulls = append(p.Pulls, sh[q])
	}
	for c := 0; c < chunks; c++ {
		for _, q := range p.Peers {
			p.Products = append(p.Products, Step{Span: sh[q][c], Stream: len(p.Products) % streams})
		}
	}
	return p
}

// RSPlan is one rank's matmul + reduce-scatter: rank r's output is rows
// [r*M/W, (r+1)*M/W) of Σ_s A_s·B, where every rank s holds A_s [M,K].
type RSPlan struct {
	// Products in issue order, by owner: the next rank's rows first, the
	// rank's own rows last. Owner q then receives rank q-1's partials
	// first and its own last, and reduces each own chunk as soon as its
	// own product of that chunk is done, while the next one runs.
	Products []Step
	// Reduces are the rank's own chunks, in the order they complete.
	Reduces []Span
}

// PlanRS plans rank's matmul + reduce-scatter.
func PlanRS(m, world, rank, chunks, streams int) RSPlan {
	sh := Shards(m, world, chunks)
	var p RSPlan
	for _, q := range append(peers(rank, world), rank) {
		for _, s := range sh[q] {
			p.Products = append(p.Products, Step{Span: s, Stream: len(p.Products) % streams})
		}
	}
	p.Reduces = sh[rank]
	return p
}

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

// Step is one product of a plan, on product stream Stream: the rows of
// Span, and when Batch > 1 the same chunk of the next Batch-1 ranks too
// (Owner+1, ...), as one strided-batched product: their rows lie M/W rows
// apart.
type Step struct {
	Span
	Batch  int
	Stream int
}

// Spans lists the spans the step computes, rows being the rows each rank
// holds.
func (s Step) Spans(rows int) []Span {
	out := make([]Span, s.Batch)
	for i := range out {
		out[i] = Span{Owner: s.Owner + i, Index: s.Index, Start: s.Start + i*rows, Rows: s.Rows}
	}
	return out
}

// runs splits ranks into maximal runs of consecutive rank numbers, in
// order: the peers of a rank, next rank first, form at most two.
func runs(ranks []int) [][]int {
	var out [][]int
	for i, q := range ranks {
		if i > 0 && q == ranks[i-1]+1 {
			out[len(out)-1] = append(out[len(out)-1], q)
		} else {
			out = append(out, []int{q})
		}
	}
	return out
}

// steps appends one product per run of ranks for chunk c (a batch of the
// run when batch is set, else one per rank), on streams round robin.
func steps(dst []Step, sh [][]Span, ranks []int, c int, batch bool, streams int) []Step {
	groups := [][]int{}
	if batch {
		groups = runs(ranks)
	} else {
		for _, q := range ranks {
			groups = append(groups, []int{q})
		}
	}
	for _, g := range groups {
		dst = append(dst, Step{Span: sh[g[0]][c], Batch: len(g), Stream: len(dst) % streams})
	}
	return dst
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

// Plan is the options a plan is made with.
type Plan struct {
	M, World, Rank  int
	Chunks, Streams int
	// Batch runs the same chunk of consecutive peers as one product.
	Batch bool
}

// AGPlan is one rank's all-gather + matmul: C[M,N] = A[M,K]·B[K,N] where
// each rank holds one row shard of A.
type AGPlan struct {
	// Pulls[i] are the chunks pulled from peer Peers[i], in order, on that
	// peer's own copy stream: every link is busy from the start.
	Peers []int
	Pulls [][]Span
	// Own are the rank's own chunks, in order: what it pushes to every
	// peer (on that peer's stream) when the direction is push.
	Own []Span
	// Products in issue order: the rank's own shard first (no
	// communication to wait for), then chunk by chunk in arrival order
	// (every peer's chunk 0, then chunk 1, ...), each after its copies.
	Products []Step
}

// PlanAG plans an all-gather + matmul.
func PlanAG(o Plan) AGPlan {
	sh := Shards(o.M, o.World, o.Chunks)
	rows := o.M / o.World
	p := AGPlan{Peers: peers(o.Rank, o.World), Own: sh[o.Rank]}
	p.Products = append(p.Products, Step{Span: Span{Owner: o.Rank, Index: -1, Start: o.Rank * rows, Rows: rows}, Batch: 1})
	for _, q := range p.Peers {
		p.Pulls = append(p.Pulls, sh[q])
	}
	for c := 0; c < o.Chunks; c++ {
		p.Products = steps(p.Products, sh, p.Peers, c, o.Batch, o.Streams)
	}
	return p
}

// RSPlan is one rank's matmul + reduce-scatter: rank r's output is rows
// [r*M/W, (r+1)*M/W) of Σ_s A_s·B, where every rank s holds A_s [M,K].
type RSPlan struct {
	// Products in issue order. Unbatched, by owner: the next rank's rows
	// first, the rank's own rows last; owner q then receives rank q-1's
	// partials first and its own last, and reduces each own chunk as soon
	// as its own product of that chunk is done, while the next one runs.
	// Batched, chunk by chunk: chunk c of the peers (runs of consecutive
	// ranks as one product each), then the own chunk c, whose reduction
	// then overlaps the products of the next chunks.
	Products []Step
	// Reduces are the rank's own chunks, in the order they complete.
	Reduces []Span
}

// PlanRS plans a matmul + reduce-scatter.
func PlanRS(o Plan) RSPlan {
	sh := Shards(o.M, o.World, o.Chunks)
	pe := peers(o.Rank, o.World)
	var p RSPlan
	if o.Batch {
		for c := 0; c < o.Chunks; c++ {
			p.Products = steps(p.Products, sh, pe, c, true, o.Streams)
			p.Products = steps(p.Products, sh, []int{o.Rank}, c, false, o.Streams)
		}
	} else {
		for _, q := range append(pe, o.Rank) {
			for c := range sh[q] {
				p.Products = steps(p.Products, sh, []int{q}, c, false, o.Streams)
			}
		}
	}
	p.Reduces = sh[o.Rank]
	return p
}

// MaxProducts is the most products any rank's plan of the variant has.
func (v Variant) MaxProducts(o Plan) int {
	n := 0
	for r := 0; r < o.World; r++ {
		o.Rank = r
		if v == VariantAGMM {
			n = max(n, len(PlanAG(o).Products))
		} else {
			n = max(n, len(PlanRS(o).Products))
		}
	}
	return n
}

// copyJob is one copy of agmm's launch: span of peer index peer (plan.Peers),
// on side stream stream; first marks the peer's first copy (where a pull
// waits for the peer's announcement).
type copyJob struct {
	peer, stream int
	span         Span
	first        bool
}

// copyOrder is the order agmm's launch enqueues its copies in. Copy engines
// pushing to the peers go on one stream, chunk by chunk, next rank first:
// a rank's engine ran its pushes one at a time whatever the streams (4 x
// H100, bench/results/2026-11-28-h100x4-agmm-order.md), and in an order
// of its own across streams, so one stream is as fast and lands the
// chunks in the order PlanFusedAG's arrivalSlot expects. Pulls (each
// waits for its peer's announcement) and SM copies (kernels that really
// run at once) keep a stream per peer, peer by peer.
func copyOrder(c Config, plan AGPlan) []copyJob {
	var out []copyJob
	if c.Direction == DirPush && c.Copy == CopyCE {
		for k := 0; k < MaxChunks; k++ {
			for i := range plan.Peers {
				if k < len(plan.Own) {
					out = append(out, copyJob{peer: i, stream: 0, span: plan.Own[k], first: k == 0})
				}
			}
		}
		return out
	}
	for i := range plan.Peers {
		spans := plan.Pulls[i]
		if c.Direction == DirPush {
			spans = plan.Own
		}
		for k, sp := range spans {
			out = append(out, copyJob{peer: i, stream: i, span: sp, first: k == 0})
		}
	}
	return out
}

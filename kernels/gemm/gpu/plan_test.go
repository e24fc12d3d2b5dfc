package gpu

import (
	"fmt"
	"reflect"
	"testing"
)

// covers checks that spans cover rows [lo, hi) exactly once.
func covers(t *testing.T, what string, spans []Span, lo, hi int) {
	t.Helper()
	seen := make([]int, hi-lo)
	for _, s := range spans {
		if s.Rows < 1 {
			t.Errorf("%s: empty span %+v", what, s)
		}
		for i := s.Start; i < s.Start+s.Rows; i++ {
			if i < lo || i >= hi {
				t.Fatalf("%s: span %+v leaves [%d,%d)", what, s, lo, hi)
			}
			seen[i-lo]++
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("%s: row %d covered %d times", what, lo+i, n)
		}
	}
}

type planCase struct {
	m, world, chunks, streams int
	batch                     bool
}

var planCases = []planCase{
	{8192, 4, 4, 2, false}, {8192, 4, 4, 2, true}, {8192, 2, 1, 1, false}, {4096, 4, 8, 3, false},
	{12, 4, 3, 1, true}, {10, 2, 4, 2, false}, {999, 3, 2, 2, true}, {64, 1, 1, 1, false}, {64, 8, 2, 3, true},
}

func (c planCase) plan(rank int) Plan {
	return Plan{M: c.m, World: c.world, Rank: rank, Chunks: c.chunks, Streams: c.streams, Batch: c.batch}
}

// expand lists the spans of steps, checking each step's batch.
func expand(t *testing.T, name string, steps []Step, rows int, batch bool) []Span {
	t.Helper()
	var out []Span
	for _, s := range steps {
		if s.Batch < 1 || (!batch && s.Batch != 1) {
			t.Errorf("%s: step %+v has batch %d", name, s, s.Batch)
		}
		out = append(out, s.Spans(rows)...)
	}
	return out
}

func TestShardsBalanced(t *testing.T) {
	for _, c := range planCases {
		sh := Shards(c.m, c.world, c.chunks)
		rows := c.m / c.world
		for q, spans := range sh {
			covers(t, fmt.Sprintf("%+v owner %d", c, q), spans, q*rows, (q+1)*rows)
			for i, s := range spans {
				if s.Owner != q || s.Index != i {
					t.Errorf("%+v: span %d of owner %d is %+v", c, i, q, s)
				}
				if d := s.Rows - rows/c.chunks; d < 0 || d > 1 {
					t.Errorf("%+v: span %+v is not balanced (%d rows over %d chunks)", c, s, rows, c.chunks)
				}
			}
		}
	}
}

func TestPlanAG(t *testing.T) {
	for _, c := range planCases {
		for rank := 0; rank < c.world; rank++ {
			name := fmt.Sprintf("%+v rank %d", c, rank)
			p := PlanAG(c.plan(rank))
			spans := expand(t, name, p.Products, c.m/c.world, c.batch)
			for _, s := range p.Products {
				if s.Stream < 0 || s.Stream >= c.streams {
					t.Errorf("%s: step %+v on stream %d of %d", name, s, s.Stream, c.streams)
				}
			}
			covers(t, name+" products", spans, 0, c.m)
			if own := p.Products[0]; own.Owner != rank || own.Rows != c.m/c.world {
				t.Errorf("%s: first product %+v is not the own shard", name, own)
			}
			if n := VariantAGMM.MaxProducts(c.plan(0)); len(p.Products) > n {
				t.Errorf("%s: %d products, MaxProducts says %d", name, len(p.Products), n)
			}
			if want := 1 + (c.world-1)*c.chunks; !c.batch && len(p.Products) != want {
				t.Errorf("%s: %d products unbatched, want %d", name, len(p.Products), want)
			}
			if max := 1 + 2*c.chunks; c.batch && c.world > 1 && len(p.Products) > max {
				t.Errorf("%s: %d batched products, more than %d (two runs of peers per chunk)", name, len(p.Products), max)
			}
			// Every product but the first reads a chunk some pull brought,
			// and chunk c of every peer comes before chunk c+1 of any.
			pulled := map[Span]bool{}
			for i, q := range p.Peers {
				if q == rank {
					t.Errorf("%s: pulls from itself", name)
				}
				rows := c.m / c.world
				covers(t, fmt.Sprintf("%s pulls from %d", name, q), p.Pulls[i], q*rows, (q+1)*rows)
				for _, s := range p.Pulls[i] {
					pulled[s] = true
				}
			}
			for i, s := range p.Products[1:] {
				for _, sp := range s.Spans(c.m / c.world) {
					if !pulled[sp] {
						t.Errorf("%s: product %+v reads rows %+v no pull brought", name, s, sp)
					}
				}
				if i > 0 && s.Index < p.Products[i].Index {
					t.Errorf("%s: chunk %d after chunk %d", name, s.Index, p.Products[i].Index)
				}
			}
			covers(t, name+" own chunks", p.Own, rank*(c.m/c.world), (rank+1)*(c.m/c.world))
		}
	}
}

func TestPlanRS(t *testing.T) {
	for _, c := range planCases {
		for rank := 0; rank < c.world; rank++ {
			name := fmt.Sprintf("%+v rank %d", c, rank)
			p := PlanRS(c.plan(rank))
			rows := c.m / c.world
			spans := expand(t, name, p.Products, rows, c.batch)
			for _, s := range p.Products {
				if s.Stream < 0 || s.Stream >= c.streams {
					t.Errorf("%s: step %+v on stream %d of %d", name, s, s.Stream, c.streams)
				}
			}
			covers(t, name+" products", spans, 0, c.m)
			covers(t, name+" reduces", p.Reduces, rank*rows, (rank+1)*rows)
			// Every own chunk's product comes before the partials of later
			// own chunks are needed: own chunk c is the last product of
			// chunk c when batched, and own rows come last unbatched.
			ownAt := map[int]int{}
			for i, s := range p.Products {
				if s.Owner == rank {
					ownAt[s.Index] = i
				}
				if c.batch && s.Owner != rank && s.Index > 0 {
					if j, ok := ownAt[s.Index-1]; !ok || j > i {
						t.Errorf("%s: chunk %d of peers before own chunk %d", name, s.Index, s.Index-1)
					}
				}
			}
			if !c.batch {
				tail := p.Products[len(p.Products)-c.chunks:]
				for _, s := range tail {
					if s.Owner != rank {
						t.Errorf("%s: own rows are not last: %+v", name, tail)
					}
				}
				if c.world > 1 && p.Products[0].Owner != (rank+1)%c.world {
					t.Errorf("%s: first product for owner %d, want the next rank", name, p.Products[0].Owner)
				}
				// At each step the ranks work for different owners.
				if rank == 0 {
					for i := range p.Products {
						owners := map[int]bool{}
						for r := 0; r < c.world; r++ {
							owners[PlanRS(c.plan(r)).Products[i].Owner] = true
						}
						if len(owners) != c.world {
							t.Errorf("%+v: step %d targets only owners %v", c, i, owners)
						}
					}
				}
			}
		}
	}
}

// TestCopyOrder: copy engines pushing go on one stream, chunk by chunk,
// next rank first (the order arrivalSlot expects); pulls and SM copies keep
// a stream per peer, peer by peer.
func TestCopyOrder(t *testing.T) {
	plan := PlanAG(Plan{M: 1024, World: 4, Rank: 1, Chunks: 2, Streams: 1})
	type job struct{ peer, stream, index int }
	for _, tc := range []struct {
		name      string
		direction string
		copy      string
		want      []job
	}{
		{"push by copy engines", DirPush, CopyCE, []job{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 0, 1}, {1, 0, 1}, {2, 0, 1}}},
		{"push by SM copies", DirPush, CopySM, []job{{0, 0, 0}, {0, 0, 1}, {1, 1, 0}, {1, 1, 1}, {2, 2, 0}, {2, 2, 1}}},
		{"pull by copy engines", DirPull, CopyCE, []job{{0, 0, 0}, {0, 0, 1}, {1, 1, 0}, {1, 1, 1}, {2, 2, 0}, {2, 2, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []job
			firsts := map[int]int{}
			for _, cp := range copyOrder(Config{Direction: tc.direction, Copy: tc.copy}, plan) {
				got = append(got, job{cp.peer, cp.stream, cp.span.Index})
				if cp.first {
					firsts[cp.peer]++
					if cp.span.Index != 0 {
						t.Errorf("peer %d: first copy is chunk %d", cp.peer, cp.span.Index)
					}
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
			for i := range plan.Peers {
				if firsts[i] != 1 {
					t.Errorf("peer %d: %d first copies, want 1", i, firsts[i])
				}
			}
		})
	}
}

package gpu

import (
	"fmt"
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

var planCases = []struct{ m, world, chunks, streams int }{
	{8192, 4, 4, 2}, {8192, 2, 1, 1}, {4096, 4, 8, 3}, {12, 4, 3, 1}, {10, 2, 4, 2}, {999, 3, 2, 2}, {64, 1, 1, 1},
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
			p := PlanAG(c.m, c.world, rank, c.chunks, c.streams)
			var spans []Span
			for _, s := range p.Products {
				spans = append(spans, s.Span)
				if s.Stream < 0 || s.Stream >= c.streams {
					t.Errorf("%s: step %+v on stream %d of %d", name, s, s.Stream, c.streams)
				}
			}
			covers(t, name+" products", spans, 0, c.m)
			if own := p.Products[0]; own.Owner != rank || own.Rows != c.m/c.world {
				t.Errorf("%s: first product %+v is not the own shard", name, own)
			}
			if len(p.Products) != GEMMs(AGMM, c.chunks, c.world) {
				t.Errorf("%s: %d products, GEMMs says %d", name, len(p.Products), GEMMs(AGMM, c.chunks, c.world))
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
				if !pulled[s.Span] {
					t.Errorf("%s: product %+v reads rows no pull brought", name, s)
				}
				if i > 0 && s.Index < p.Products[i].Index {
					t.Errorf("%s: chunk %d after chunk %d", name, s.Index, p.Products[i].Index)
				}
			}
		}
	}
}

func TestPlanRS(t *testing.T) {
	for _, c := range planCases {
		for rank := 0; rank < c.world; rank++ {
			name := fmt.Sprintf("%+v rank %d", c, rank)
			p := PlanRS(c.m, c.world, rank, c.chunks, c.streams)
			var spans []Span
			for _, s := range p.Products {
				spans = append(spans, s.Span)
				if s.Stream < 0 || s.Stream >= c.streams {
					t.Errorf("%s: step %+v on stream %d of %d", name, s, s.Stream, c.streams)
				}
			}
			covers(t, name+" products", spans, 0, c.m)
			// Own rows last, the next rank's first.
			tail := p.Products[len(p.Products)-c.chunks:]
			for _, s := range tail {
				if s.Owner != rank {
					t.Errorf("%s: own rows are not last: %+v", name, tail)
				}
			}
			if c.world > 1 && p.Products[0].Owner != (rank+1)%c.world {
				t.Errorf("%s: first product for owner %d, want the next rank", name, p.Products[0].Owner)
			}
			rows := c.m / c.world
			covers(t, name+" reduces", p.Reduces, rank*rows, (rank+1)*rows)
			// At each step the ranks work for different owners.
			if rank == 0 {
				for i := range p.Products {
					owners := map[int]bool{}
					for r := 0; r < c.world; r++ {
						owners[PlanRS(c.m, c.world, r, c.chunks, c.streams).Products[i].Owner] = true
					}
					if len(owners) != c.world {
						t.Errorf("%+v: step %d targets only owners %v", c, i, owners)
					}
				}
			}
		}
	}
}

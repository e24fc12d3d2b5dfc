package gemm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

func TestMulTileMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ h, w, k, bk int }{
		{1, 1, 1, 1}, {16, 32, 32, 32}, {16, 32, 80, 32}, {7, 13, 19, 4},
		{32, 64, 80, 64}, {3, 5, 7, 128}, {64, 17, 33, 5},
	} {
		// Views into larger matrices, so strides differ from widths.
		A := NewMat(make([]float32, (tc.h+3)*(tc.k+2)), tc.h+3, tc.k+2)
		B := NewMat(make([]float32, tc.k*(tc.w+5)), tc.k, tc.w+5)
		C := NewMat(make([]float32, (tc.h+1)*(tc.w+4)), tc.h+1, tc.w+4)
		for _, m := range []Mat{A, B} {
			for i := range m.Data {
				m.Data[i] = rng.Float32()*2 - 1
			}
		}
		Poison(C.Data)
		a, b, c := A.Sub(2, 1, tc.h, tc.k), B.Sub(0, 3, tc.k, tc.w), C.Sub(1, 2, tc.h, tc.w)
		MulTile(c, a, b, tc.bk, make([]float32, tc.h*tc.w))
		a64 := make([]float64, tc.h*tc.k)
		b64 := make([]float64, tc.k*tc.w)
		for i := 0; i < tc.h; i++ {
			for j, v := range a.Row(i) {
				a64[i*tc.k+j] = float64(v)
			}
		}
		for i := 0; i < tc.k; i++ {
			for j, v := range b.Row(i) {
				b64[i*tc.w+j] = float64(v)
			}
		}
		ref := MatMul64(a64, b64, tc.h, tc.w, tc.k)
		got := make([]float32, 0, tc.h*tc.w)
		for i := 0; i < tc.h; i++ {
			got = append(got, c.Row(i)...)
		}
		if rel := RelErr(got, ref); rel > 1e-6 {
			t.Errorf("%+v: rel err %g", tc, rel)
		}
		// Outside the tile, C is untouched (still NaN).
		if !math.IsNaN(float64(C.Data[0])) || !math.IsNaN(float64(C.Row(1)[1])) || !math.IsNaN(float64(C.Row(1)[tc.w+2])) {
			t.Errorf("%+v: MulTile wrote outside its tile", tc)
		}
	}
}

func TestRelErrCatchesPoison(t *testing.T) {
	got := []float32{1, 2, 3}
	if r := RelErr(got, []float64{1, 2, 3}); r != 0 {
		t.Fatalf("exact: %g", r)
	}
	Poison(got[1:2])
	if r := RelErr(got, []float64{1, 2, 3}); !math.IsInf(r, 1) {
		t.Fatalf("poisoned element passes: %g", r)
	}
}

func TestBlockTilesSwizzle(t *testing.T) {
	// 4 row tiles × 3 col tiles, group_m 2: rows 0,1 go down each column
	// before moving right, then rows 2,3.
	c := Config{BlockM: 16, BlockN: 32, CommBlockM: 64, GroupM: 2}
	got := BlockTiles(nil, 128, 96, c)
	want := []Tile{
		{128, 0}, {144, 0}, {128, 32}, {144, 32}, {128, 64}, {144, 64},
		{160, 0}, {176, 0}, {160, 32}, {176, 32}, {160, 64}, {176, 64},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tile %d: got %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	// Every valid config of the space covers each tile of a block once,
	// ragged last column included.
	for _, sc := range Space().Enumerate() {
		cfg, err := ParseConfig(sc)
		if err != nil {
			t.Fatal(err)
		}
		if Validate(cfg, Dims{M: 512, N: 200, K: 64}, 2) != nil {
			continue
		}
		seen := map[Tile]bool{}
		for _, tl := range BlockTiles(nil, 0, 200, cfg) {
			if seen[tl] || tl.Row%cfg.BlockM != 0 || tl.Row >= cfg.CommBlockM || tl.Col%cfg.BlockN != 0 || tl.Col >= 200 {
				t.Fatalf("%s: bad or repeated tile %v", sc, tl)
			}
			seen[tl] = true
		}
		if len(seen) != TilesPerBlock(200, cfg) {
			t.Fatalf("%s: %d tiles, want %d", sc, len(seen), TilesPerBlock(200, cfg))
		}
	}
}

func cfg(bm, bn, bk, gm, cbm, th int) Config {
	return Config{BlockM: bm, BlockN: bn, BlockK: bk, GroupM: gm, CommBlockM: cbm, Threads: th, Impl: Fused}
}

func TestValidate(t *testing.T) {
	d := Dims{M: 512, N: 256, K: 256}
	for _, tc := range []struct {
		name  string
		c     Config
		d     Dims
		world int
		want  string // "" = accepted, else a substring of the reason
	}{
		{"default-ish", cfg(32, 64, 64, 1, 32, 1), d, 2, ""},
		{"largest", cfg(128, 128, 128, 1, 256, 4), d, 2, ""},
		{"ragged n and k", cfg(32, 128, 128, 1, 64, 1), Dims{M: 256, N: 200, K: 136}, 2, ""},
		{"group_m at the limit", cfg(16, 32, 32, 8, 128, 1), d, 2, ""},
		{"world 1", cfg(16, 32, 32, 1, 16, 1), d, 1, ""},
		{"world 0", cfg(16, 32, 32, 1, 16, 1), d, 0, "world 0"},
		{"m not divisible by world", cfg(16, 32, 32, 1, 16, 1), Dims{M: 96, N: 64, K: 64}, 5, "not divisible by world 5"},
		{"block_m over rows per rank", cfg(128, 32, 32, 1, 128, 1), Dims{M: 128, N: 64, K: 64}, 2, "block_m 128 exceeds the 64 rows"},
		{"block_n over n", cfg(16, 128, 32, 1, 16, 1), Dims{M: 128, N: 64, K: 64}, 2, "block_n 128 exceeds n=64"},
		{"block_k over k", cfg(16, 32, 128, 1, 16, 1), Dims{M: 128, N: 64, K: 64}, 2, "block_k 128 exceeds k=64"},
		{"comm block not a multiple of block_m", cfg(64, 32, 32, 1, 32, 1), d, 2, "comm_block_m 32 is not a multiple of block_m 64"},
		{"comm block does not divide rows", cfg(16, 32, 32, 1, 64, 1), Dims{M: 192, N: 64, K: 64}, 2, "comm_block_m 64 does not divide the 96 rows"},
		{"tiny rows per rank", cfg(16, 32, 32, 1, 16, 1), Dims{M: 24, N: 64, K: 64}, 2, "block_m 16 exceeds the 12 rows"},
		{"group_m over row tiles", cfg(32, 32, 32, 4, 64, 1), d, 2, "group_m 4 exceeds the 2 row tiles"},
		{"threads over tiles", cfg(128, 128, 32, 1, 128, 4), Dims{M: 256, N: 128, K: 64}, 2, "threads 4 exceed the 2 output tiles"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.c, tc.d, tc.world)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted, want rejection %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("reason %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestValidateCPU(t *testing.T) {
	c := space.Config{"block_m": space.Int(32), "block_n": space.Int(64), "block_k": space.Int(64),
		"group_m": space.Int(1), "comm_block_m": space.Int(32), "threads": space.Int(1), "impl": space.Str(Fused)}
	p := space.Problem{Shape: space.Shape{"m": 512, "n": 256, "k": 256}, Dtype: "f32"}
	if err := ValidateCPU(c, p, 2, "cpu"); err != nil {
		t.Fatalf("valid: %v", err)
	}
	for _, tc := range []struct {
		name    string
		mutate  func(*space.Config, *space.Problem, *string)
		message string
	}{
		{"bf16", func(_ *space.Config, p *space.Problem, _ *string) { p.Dtype = "bf16" }, "bf16 is reserved for the cuda backend"},
		{"f64", func(_ *space.Config, p *space.Problem, _ *string) { p.Dtype = "f64" }, "supports f32"},
		{"cuda", func(_ *space.Config, _ *space.Problem, b *string) { *b = "cuda" }, "cpu backend"},
		{"missing k", func(_ *space.Config, p *space.Problem, _ *string) { p.Shape = space.Shape{"m": 512, "n": 256} }, "m=<rows>"},
		{"wrong dim", func(_ *space.Config, p *space.Problem, _ *string) {
			p.Shape = space.Shape{"m": 512, "n": 256, "x": 3}
		}, "missing dimension \"k\""},
		{"impl", func(c *space.Config, _ *space.Problem, _ *string) { (*c)["impl"] = space.Str("magic") }, "neither fused nor sequential"},
		{"string tile", func(c *space.Config, _ *space.Problem, _ *string) { (*c)["block_m"] = space.Str("big") }, "not an integer"},
		{"missing param", func(c *space.Config, _ *space.Problem, _ *string) { delete(*c, "threads") }, "\"threads\" missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c2, p2, b := c.Clone(), p, "cpu"
			p2.Shape = space.Shape{"m": 512, "n": 256, "k": 256}
			tc.mutate(&c2, &p2, &b)
			err := ValidateCPU(c2, p2, 2, b)
			if err == nil || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("got %v, want a reason mentioning %q", err, tc.message)
			}
		})
	}
}

// TestSpaceSize pins the numbers the docs quote: the full product, and how
// many configs Validate keeps on a large shape (where only the structural
// rules bite) and on the landscape shapes.
func TestSpaceSize(t *testing.T) {
	s := Space()
	if got := s.Size(); got != 3240 {
		t.Fatalf("space size %d, want 3240", got)
	}
	if err := s.Check(Default()); err != nil {
		t.Fatalf("default: %v", err)
	}
	cbm, _ := s.Param(ParamCommBlockM)
	for _, v := range cbm.Values {
		if v.Int%FlagRows != 0 {
			t.Fatalf("comm_block_m %d is not a multiple of FlagRows %d", v.Int, FlagRows)
		}
	}
	count := func(d Dims, world int) int {
		n := 0
		for _, sc := range s.Enumerate() {
			c, err := ParseConfig(sc)
			if err != nil {
				t.Fatal(err)
			}
			if Validate(c, d, world) == nil {
				n++
			}
		}
		return n
	}
	if got := count(Dims{M: 4096, N: 1024, K: 1024}, 2); got != 1242 {
		t.Fatalf("valid on a large shape: %d, want 1242", got)
	}
	t.Logf("valid configs: m=512,n=256,k=256 w2: %d; m=256,n=128,k=128 w2: %d; m=256,n=64,k=64 w2: %d",
		count(Dims{512, 256, 256}, 2), count(Dims{256, 128, 128}, 2), count(Dims{256, 64, 64}, 2))
}

// TestRefMatmulRSMatchesSumOfProducts checks the shortcut (sum A first)
// against the definition, Σ_r A_r·B, and that it picks rank's rows.
func TestRefMatmulRSMatchesSumOfProducts(t *testing.T) {
	d := Dims{M: 32, N: 24, K: 16}
	const world, seed = 4, 9
	b := fillB64(seed, d)
	full := make([]float64, d.M*d.N)
	for r := 0; r < world; r++ {
		a := make([]float64, d.M*d.K)
		for i := range a {
			a[i] = input64(seed, r, int64(i))
		}
		for i, v := range MatMul64(a, b, d.M, d.N, d.K) {
			full[i] += v
		}
	}
	rows := d.M / world
	for rank := 0; rank < world; rank++ {
		got := RefMatmulRS(seed, d, world, rank)
		want := full[rank*rows*d.N : (rank+1)*rows*d.N]
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("rank %d element %d: %g, want %g", rank, i, got[i], want[i])
			}
		}
	}
}

func TestRefAllGatherMatmulUsesShards(t *testing.T) {
	d := Dims{M: 8, N: 4, K: 4}
	const world, seed = 2, 3
	ref := RefAllGatherMatmul(seed, d, world)
	// Row 4 of A is rank 1's local row 0.
	var want float64
	for kk := 0; kk < d.K; kk++ {
		want += input64(seed, 1, int64(kk)) * input64(seed, StreamB, int64(kk*d.N))
	}
	if math.Abs(ref[4*d.N]-want) > 1e-12 {
		t.Fatalf("C[4][0] = %g, want %g", ref[4*d.N], want)
	}
}

func TestLayout(t *testing.T) {
	if FlagOffset(0) != 0 || FlagOffset(16) != FlagStride || FlagOffset(48) != 3*FlagStride {
		t.Fatal("flag offsets")
	}
	if PayloadOffset(512)%4096 != 0 || PayloadOffset(512) < FlagSlots(512)*FlagStride {
		t.Fatalf("payload offset %d", PayloadOffset(512))
	}
	n, err := SymmetricBytes(512, 512*256, 4)
	if err != nil || n != int64(PayloadOffset(512))+512*256*4 {
		t.Fatalf("symmetric bytes %d, %v", n, err)
	}
	if _, err := SymmetricBytes(0, 1, 4); err == nil {
		t.Fatal("m=0 accepted")
	}
}

func TestPoolRunsEveryTaskOnceAndStopsOnError(t *testing.T) {
	var p Pool
	for _, threads := range []int{1, 2, 4} {
		hits := make([]int32, 1000)
		if err := p.Run(threads, len(hits), func(w, i int) error {
			if w < 0 || w >= threads {
				t.Errorf("worker %d of %d", w, threads)
			}
			hits[i]++ // each i is claimed by exactly one worker
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("threads %d: task %d ran %d times", threads, i, h)
			}
		}
		err := p.Run(threads, 1000, func(_, i int) error {
			if i == 10 {
				return errTest
			}
			return nil
		})
		if err != errTest {
			t.Fatalf("threads %d: error %v", threads, err)
		}
	}
}

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "test" }

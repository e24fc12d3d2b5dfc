package gpu

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

func TestParseDtype(t *testing.T) {
	for _, tc := range []struct {
		name          string
		want          Dtype
		in            int
		fp8, rows, bf bool
		wantErr       string
	}{
		{"bf16", DtypeBF16, 2, false, false, true, ""},
		{"f16", DtypeF16, 2, false, false, false, ""},
		{"e4m3", DtypeE4M3, 1, true, false, true, ""},
		{"e4m3_row", DtypeE4M3Row, 1, true, true, true, ""},
		{"f32", 0, 0, false, false, false, "e4m3_row"},
		{"e5m2", 0, 0, false, false, false, "bf16 or f16"},
		{"", 0, 0, false, false, false, `dtype ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDtype(tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseDtype(%q) = %v, %v; want an error saying %q", tc.name, d, err, tc.wantErr)
				}
				return
			}
			if err != nil || d != tc.want || d.String() != tc.name {
				t.Fatalf("ParseDtype(%q) = %v (%s), %v", tc.name, d, d, err)
			}
			if d.InBytes() != tc.in || d.FP8() != tc.fp8 || d.RowScales() != tc.rows || d.OutBF16() != tc.bf {
				t.Errorf("%s: in %d fp8 %t rows %t bf16 out %t", d, d.InBytes(), d.FP8(), d.RowScales(), d.OutBF16())
			}
			if d.Format().String() != tc.name || d.Format().Elem.Bytes() != d.InBytes() {
				t.Errorf("%s: fused format %v", d, d.Format())
			}
			want := map[bool]int{false: 0, true: 1}[tc.fp8]
			if tc.rows {
				want = 7
			}
			if got := d.ScaleCount(7); got != want {
				t.Errorf("%s: %d scales for 7 rows, want %d", d, got, want)
			}
		})
	}
	if !slices.Equal(DtypeNames(), []string{"bf16", "f16", "e4m3", "e4m3_row"}) {
		t.Errorf("DtypeNames %v", DtypeNames())
	}
}

func fp8Problem(t *testing.T, dtype string, m, n, k, world int) Problem {
	t.Helper()
	p, err := ParseProblem(space.Problem{Shape: space.Shape{"m": int64(m), "n": int64(n), "k": int64(k)}, Dtype: dtype}, world)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseProblemFP8(t *testing.T) {
	for _, tc := range []struct {
		dtype   string
		n, k    int
		elem    int
		wantErr string
	}{
		{"e4m3", 1792, 4096, 1, ""},
		{"e4m3_row", 1792, 4096, 1, ""},
		{"bf16", 1000, 1001, 2, ""},
		{"e4m3", 1792, 4104, 0, "multiples of 16"},
		{"e4m3_row", 1800, 4096, 0, "multiples of 16"},
	} {
		p, err := ParseProblem(space.Problem{Shape: space.Shape{"m": 4096, "n": int64(tc.n), "k": int64(tc.k)}, Dtype: tc.dtype}, 2)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s n=%d k=%d: %v, want an error saying %q", tc.dtype, tc.n, tc.k, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s n=%d k=%d: %v", tc.dtype, tc.n, tc.k, err)
		case p.ElemSize != tc.elem || p.Dtype.String() != tc.dtype:
			t.Errorf("%s: elem %d dtype %s", tc.dtype, p.ElemSize, p.Dtype)
		}
	}
}

func TestValidateFP8(t *testing.T) {
	slow := map[string]space.Value{ParamFastAccum: space.Int(0)}
	withSet := func(a, b map[string]space.Value) map[string]space.Value {
		out := map[string]space.Value{}
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out
	}
	fused := map[string]space.Value{ParamImpl: space.Str(fused0)}
	for _, tc := range []struct {
		name    string
		kernel  Variant
		dtype   string
		set     map[string]space.Value
		world   int
		kn      bool // the tile reads B stored [K, N] (no searched tile does)
		wantErr string
	}{
		{"fast_accum 0 on FP8 pipeline", VariantAGMM, "e4m3", slow, 2, false, ""},
		{"fast_accum 0 on row-scaled matmulrs", VariantMatmulRS, "e4m3_row", slow, 2, false, ""},
		{"fast_accum 0 on bf16", VariantAGMM, "bf16", slow, 2, false, "only FP8 products"},
		{"fast_accum 0 on f16", VariantMatmulRS, "f16", slow, 2, false, "only FP8 products"},
		{"fused FP8", VariantAGMM, "e4m3_row", map[string]space.Value{ParamImpl: space.Str(fused0)}, 2, false, ""},
		{"fused FP8 accumulates fast", VariantMatmulRS, "e4m3", map[string]space.Value{ParamImpl: space.Str(fused0), ParamFastAccum: space.Int(0)}, 2, false, "FP8 accumulator only"},
		{"fused bf16, B [K, N]", VariantAGMM, "bf16", fused, 2, true, ""},
		{"fused FP8, B [K, N]", VariantAGMM, "e4m3", fused, 2, true, "K-major"},
		{"tensor scales batched", VariantAGMM, "e4m3", map[string]space.Value{ParamBatch: space.Int(1)}, 4, false, ""},
		{"row scales batched (agmm)", VariantAGMM, "e4m3_row", map[string]space.Value{ParamBatch: space.Int(1)}, 4, false, "not proven batched"},
		{"row scales batched (matmulrs)", VariantMatmulRS, "e4m3_row", withSet(slow, map[string]space.Value{ParamBatch: space.Int(1)}), 2, false, "not proven batched"},
		{"row scales, algo 1", VariantAGMM, "e4m3_row", map[string]space.Value{ParamAlgo: space.Int(1)}, 2, false, "one algorithm"},
		{"tensor scales, algo 1", VariantMatmulRS, "e4m3", map[string]space.Value{ParamAlgo: space.Int(1)}, 2, false, ""},
		{"FP8 SM copies of 16-byte rows", VariantAGMM, "e4m3_row", map[string]space.Value{ParamCopy: space.Str(CopySM), ParamCopyBlocks: space.Int(16), ParamSMReserve: space.Int(16)}, 4, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := with(tc.kernel, tc.set)
			c.Tile.BKMajor = c.Tile.BKMajor && !tc.kn
			err := tc.kernel.Validate(c, fp8Problem(t, tc.dtype, 4096, 1792, 4096, tc.world))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

// TestFastAccumAddedLater: a config cached before fast_accum existed ran
// fast accumulation (every product then was bf16 or f16), and Default
// says so too.
func TestFastAccumAddedLater(t *testing.T) {
	for _, kernel := range Variants {
		old := kernel.Default()
		if old[ParamFastAccum] != space.Int(1) {
			t.Errorf("%s default fast_accum %v", kernel, old[ParamFastAccum])
		}
		delete(old, ParamFastAccum)
		if c, err := kernel.ParseConfig(old); err != nil || c.NoFastAccum {
			t.Errorf("%s: a config without fast_accum: %+v, %v; want fast accumulation", kernel, c, err)
		}
		slow := kernel.Default()
		slow[ParamFastAccum] = space.Int(0)
		if c, err := kernel.ParseConfig(slow); err != nil || !c.NoFastAccum {
			t.Errorf("%s: fast_accum 0 parsed %+v, %v", kernel, c, err)
		}
	}
}

// TestBF16SpaceUnchanged: fast_accum and push=none leave the valid
// configs of bf16 problems as they were: the same set (fingerprinted
// before fast_accum was added, each with fast_accum=1; again when the
// searched tiles gained 128x128:s5:c2:g4:pp and :g8:pp, whose
// reduce-scatter epilogue has room for a peer's partials in shared
// memory; and again when they gained the small-M tiles with more stages,
// 64x128:s8:pp and 64x64:s10:pp, whole and split; and again when they
// gained the 160-column tiles, 128x160:s6 and 256x160:s4; and again when
// they gained 128x224:s5:c2:g16, the untuned rule's 128x224; and again
// when they gained the untuned 64-row ping-pong tiles with B loaded
// evict-first, 64x224:s6, 64x128:s8 and 64x64:s10 with :ef; and again
// when they gained the 64-row wave-width tiles, 64x192:s6, 64x160:s7,
// 64x112:s9, 64x96:s10 and 64x80:s11, each plain and :ef; and again when
// they gained the H100's clustered twin of the ping-pong tile,
// 128x128:s6:c2:g4:cl2), besides the push=none
// configs (counted: fused, reduce=epilogue, on those tiles and teams of
// two).
func TestBF16SpaceUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("enumerates both spaces")
	}
	skipEnumerationUnderRace(t)
	for _, tc := range []struct {
		kernel     Variant
		m, n, k, w int
		count      int
		sum        string
		pushNone   int
	}{
		{VariantAGMM, 4096, 1792, 4096, 2, 3552, "6a0ae4ff6ee7", 0},
		{VariantAGMM, 1000, 1000, 1000, 4, 7088, "1f92476679ed", 0},
		{VariantMatmulRS, 4096, 1792, 4096, 2, 16704, "4357fcc1b597", 64},
		{VariantMatmulRS, 1000, 1000, 1000, 4, 16960, "deb44d9e6cf9", 0},
	} {
		p := problem(t, tc.m, tc.n, tc.k, tc.w)
		n, none, h := 0, 0, sha256.New()
		for _, c := range tc.kernel.Space().Enumerate() {
			cfg, err := tc.kernel.ParseConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			if tc.kernel.Validate(cfg, p) != nil {
				continue
			}
			if cfg.Push == PushNone {
				if _, ok := cfg.Tile.WithPeerBuffers(tc.w - 1); cfg.Impl != ImplFused || cfg.Reduce != ReduceEpilogue || !ok {
					t.Errorf("%s: %s valid", tc.kernel, c)
				}
				none++
				continue
			}
			if c[ParamFastAccum] != space.Int(1) {
				t.Fatalf("%s: %s valid on bf16", tc.kernel, c)
			}
			delete(c, ParamFastAccum)
			n++
			fmt.Fprintln(h, c.String())
		}
		if sum := fmt.Sprintf("%x", h.Sum(nil)[:6]); n != tc.count || sum != tc.sum || none != tc.pushNone {
			t.Errorf("%s %dx%dx%d world %d: %d valid configs (%s) and %d with push=none, were %d (%s) and %d", tc.kernel, tc.m, tc.n, tc.k, tc.w, n, sum, none, tc.count, tc.sum, tc.pushNone)
		}
	}
}

func TestFitDefaultFP8(t *testing.T) {
	for _, kernel := range Variants {
		for _, dtype := range []string{"e4m3", "e4m3_row"} {
			for _, w := range []int{1, 2, 8} {
				p := fp8Problem(t, dtype, 4096, 1792, 4096, w)
				c, err := kernel.FitDefault(p)
				if err != nil {
					t.Errorf("%s %s world %d: %v", kernel, dtype, w, err)
					continue
				}
				cfg, err := kernel.ParseConfig(c)
				if err != nil {
					t.Fatal(err)
				}
				if err := kernel.Validate(cfg, p); err != nil || cfg.NoFastAccum {
					t.Errorf("%s %s world %d: default %s: %v", kernel, dtype, w, c, err)
				}
			}
		}
	}
}

func TestLayoutFP8(t *testing.T) {
	for _, tc := range []struct {
		kernel     Variant
		dtype      string
		m, n, k, w int
		want       int64
	}{
		// The gathered A in bytes of e4m3, then the scales past a 16-byte boundary.
		{VariantAGMM, "e4m3", 4096, 1792, 4096, 2, PayloadOffset + 4096*4096},
		{VariantAGMM, "e4m3_row", 4096, 1792, 4096, 2, PayloadOffset + 4096*4096 + 4096*4},
		{VariantAGMM, "e4m3_row", 6, 16, 16, 2, PayloadOffset + 96 + 6*4},
		{VariantAGMM, "e4m3_row", 6, 16, 16, 3, PayloadOffset + 96 + 6*4},
		{VariantAGMM, "bf16", 4096, 1792, 4096, 2, PayloadOffset + 4096*4096*2},
		// matmulrs's slots hold bf16 partials whatever the inputs.
		{VariantMatmulRS, "e4m3_row", 4096, 1792, 4096, 2, PayloadOffset + 2*2048*1792*2},
		{VariantMatmulRS, "e4m3", 4096, 1792, 4096, 2, PayloadOffset + 2*2048*1792*2},
		{VariantMatmulRS, "bf16", 4096, 1792, 4096, 2, PayloadOffset + 2*2048*1792*2},
	} {
		p := fp8Problem(t, tc.dtype, tc.m, tc.n, tc.k, tc.w)
		if got := tc.kernel.SymmetricBytes(p); got != tc.want {
			t.Errorf("%s %s %dx%dx%d world %d: %d bytes, want %d", tc.kernel, tc.dtype, tc.m, tc.n, tc.k, tc.w, got, tc.want)
		}
	}
	// Scales start 16-byte aligned past rows that are not.
	p := Problem{Dtype: DtypeE4M3Row, ElemSize: 1, World: 1}
	p.M, p.K = 3, 17
	if got := AGScaleOffset(p); got != 64 {
		t.Errorf("scales of 3 rows of 17 bytes at %d, want 64", got)
	}
}

// TestRowScaleAlignment: a row-scaled pipeline product's scales start at
// its first row's, which cuBLASLt takes only 16-byte aligned.
func TestRowScaleAlignment(t *testing.T) {
	chunks := func(n int) map[string]space.Value { return map[string]space.Value{ParamChunks: space.Int(int64(n))} }
	for _, tc := range []struct {
		name    string
		dtype   string
		m       int
		set     map[string]space.Value
		wantErr bool
	}{
		{"aligned chunks", "e4m3_row", 4096, chunks(8), false},
		{"rank 1 starts at row 2050", "e4m3_row", 4100, chunks(1), true},
		{"chunk 1 starts at row 1026", "e4m3_row", 4104, chunks(2), true},
		{"aligned shards, one chunk", "e4m3_row", 4104, chunks(1), false},
		{"tensor scales need no alignment", "e4m3", 4100, chunks(1), false},
		{"the fused GEMM reads scales itself", "e4m3_row", 4100, map[string]space.Value{ParamImpl: space.Str(fused0), ParamChunks: space.Int(1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VariantAGMM.Validate(with(VariantAGMM, tc.set), fp8Problem(t, tc.dtype, tc.m, 1792, 4096, 2))
			if (err != nil) != tc.wantErr || (err != nil && !strings.Contains(err.Error(), "16-byte aligned")) {
				t.Errorf("Validate = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

// skipEnumerationUnderRace skips a test that validates every config of a
// space (hundreds of thousands, in one goroutine: -race finds nothing there
// and makes it five times slower); make test runs these again without it
// (ENUMERATION_TESTS in the Makefile).
func skipEnumerationUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("enumerates whole spaces; run without -race (make test does)")
	}
}

func TestBucketRows(t *testing.T) {
	for _, c := range []struct{ m, world, lo, top int }{
		{1, 1, 0, 64}, {64, 2, 0, 64}, {65, 2, 64, 128}, {96, 8, 64, 128}, {4096, 2, 2048, 4096}, {4097, 4, 4096, 8192},
		{11520, 8, 8192, 16384}, {30, 3, 0, 66}, {67, 3, 66, 129},
	} {
		lo, top := BucketRows(c.m, c.world)
		if lo != c.lo || top != c.top {
			t.Errorf("BucketRows(%d, %d) = (%d, %d], want (%d, %d]", c.m, c.world, lo, top, c.lo, c.top)
		}
		if c.m <= lo || c.m > top || top%c.world != 0 {
			t.Errorf("BucketRows(%d, %d) = (%d, %d]: m outside, or top not a multiple of the world", c.m, c.world, lo, top)
		}
	}
}

package gpu

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// listingCase is one problem whose whole space TestListingUnchanged lists,
// with what the listing gave before it was made faster.
type listingCase struct {
	v          Variant
	dtype      string
	m, n, k, w int
	// valid is how many configs the plugin accepts; distinct, how many
	// different reasons it gives for the rest.
	valid, distinct int
	// validSum fingerprints the valid configs (their keys, in the space's
	// order); reasonSum, how many configs each reason text rejects;
	// sampleSum, every 101st config's key with its reason ("" if valid).
	validSum, reasonSum, sampleSum string
}

// listingCases were recorded at commit c3612c7, before the listing's
// caches (the parsed impls, the tile verdicts per problem, the constant
// reasons), by this test with the sums left empty: its failures print each
// case's row as it stands. Small M (64 rows: split-K tiles valid on one
// rank), ragged k (3696: a partial last k-block; 1000: split-K slices
// under SplitKMinK), n and k that the fused GEMM refuses (1000x1001), FP8
// formats, on 1, 2, 4 and 8 ranks.
var listingCases = []listingCase{
	{VariantAGMM, "bf16", 8192, 3584, 8192, 1, 416, 26, "1f902a8d65d9", "1f8ee9809f8f", "5006b96ebf6a"},
	{VariantAGMM, "bf16", 8192, 3584, 8192, 2, 3536, 24, "10b11dab04c3", "8f995f3e35a8", "5b7a8c1c595a"},
	{VariantAGMM, "bf16", 8192, 3584, 8192, 4, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 8192, 3584, 8192, 8, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 1, 456, 16, "276935d04b04", "91f08bf9305f", "6d2eaf4ea407"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 2, 3536, 24, "10b11dab04c3", "8f995f3e35a8", "5b7a8c1c595a"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 4, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 8, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 1, 416, 26, "1f902a8d65d9", "00b192fb570a", "5ea2945ca977"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 2, 3536, 24, "10b11dab04c3", "8f995f3e35a8", "5b7a8c1c595a"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 4, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 8, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 1, 416, 26, "1f902a8d65d9", "f275604b8330", "b6b798da16e3"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 2, 3536, 24, "10b11dab04c3", "8f995f3e35a8", "5b7a8c1c595a"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 4, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 8, 7072, 22, "3333c45c87a7", "19973515421b", "f5de7d60a256"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 1, 16, 15, "59b54a15572d", "b82a341cbb3b", "8a703f756900"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 2, 176, 11, "4cc97759f7b6", "a9f09bb56148", "3f902de25bea"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 4, 384, 9, "7806ba7a72d2", "ba2bd3d71d43", "c68bd5b6f8b2"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 8, 384, 9, "7806ba7a72d2", "ba2bd3d71d43", "c68bd5b6f8b2"},
	{VariantAGMM, "f16", 4096, 1792, 4096, 2, 3536, 24, "10b11dab04c3", "7fba2f6391a8", "d65062ccf86f"},
	{VariantAGMM, "e4m3", 128, 2048, 4096, 1, 728, 16, "0ebab411f7b8", "0d6bb2f55a9b", "d6ad4cb63906"},
	{VariantAGMM, "e4m3_row", 8192, 3584, 8192, 2, 2040, 27, "e0f005b13d4e", "e77965fa8053", "a7c53c7d00b2"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 1, 104, 154, "6187066d7373", "636ac698e452", "fab37db9c718"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 2, 16448, 46, "6de8ae685d72", "e355189e4f83", "0fc619a2e9e7"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 4, 17184, 50, "c4fdc4809627", "225c85bc2b5b", "9c148d156983"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 8, 17104, 48, "d91b75b95360", "4354756a9b54", "730c96f77721"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 1, 124, 144, "0d36d22688c5", "74cb60ec1c17", "e19d0bbd1890"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 2, 15840, 24, "d659fdf8947d", "2afc1d33b735", "775ca81a7f8b"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 4, 16640, 22, "e7de53c34ef4", "7419fd7abe38", "434b8a92f858"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 8, 16640, 22, "e7de53c34ef4", "ee48fcbb848e", "d1cc5025d737"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 1, 104, 154, "6187066d7373", "1e18651e3c71", "6df7dc753ed3"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 2, 16448, 46, "6de8ae685d72", "e355189e4f83", "0fc619a2e9e7"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 4, 17200, 50, "6d2fc4ca16c9", "80585d7fd733", "9c148d156983"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 8, 17184, 50, "c4fdc4809627", "79ebe2b46e8d", "01abedf55d60"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 1, 104, 154, "6187066d7373", "ac88325fbb5f", "8002f8e62899"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 2, 15840, 27, "d659fdf8947d", "e75b48c45613", "f4e24b80d713"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 4, 16640, 23, "e7de53c34ef4", "967eb1e307c2", "1777b6ed51a9"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 8, 16640, 22, "e7de53c34ef4", "9755fab6f050", "097aa0578250"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 1, 32, 25, "9841ae7f29d2", "fe38e6764877", "1e0ca1864b2e"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 2, 4960, 7, "d6c5c9f606a3", "f1f6aed0740d", "aca69fc198ac"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 4, 5760, 5, "331b3482294f", "6cf6a8f23a43", "b676bedc9815"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 8, 5760, 5, "331b3482294f", "6cf6a8f23a43", "b676bedc9815"},
	{VariantMatmulRS, "f16", 4096, 1792, 4096, 2, 16432, 46, "5850aabf2063", "a81a81e8fdae", "90cb5376fbb5"},
	{VariantMatmulRS, "e4m3", 128, 2048, 4096, 1, 156, 144, "83362836890c", "f648438580ab", "929c30fabf1f"},
	{VariantMatmulRS, "e4m3_row", 8192, 3584, 8192, 2, 13248, 48, "279851b4c052", "6a7f51a38988", "5811aca44768"},
}

// sampleEvery is the stride of the configs whose reasons are fingerprinted
// one by one (prime, so the sample walks every parameter's values).
const sampleEvery = 101

// TestListingUnchanged lists whole spaces the way a plugin does (check, for
// every config, as the host asks) and compares the valid configs and the
// reasons for the rest with those recorded before the listing was made
// faster. On the sampled configs it also compares check, which reads the
// tile verdicts cached for the problem, with the uncached ParseConfig and
// Validate.
func TestListingUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("lists whole spaces")
	}
	skipEnumerationUnderRace(t)
	for _, tc := range listingCases {
		name := fmt.Sprintf("%s/%s/%dx%dx%d/world=%d", tc.v, tc.dtype, tc.m, tc.n, tc.k, tc.w)
		t.Run(name, func(t *testing.T) {
			got := listFingerprint(t, tc)
			if got != tc {
				t.Errorf("listing changed:\n got  %s\n want %s", got.row(), tc.row())
			}
		})
	}
}

// listFingerprint lists tc's problem and returns tc with what it found.
func listFingerprint(t *testing.T, tc listingCase) listingCase {
	t.Helper()
	p := space.Problem{Shape: space.Shape{"m": int64(tc.m), "n": int64(tc.n), "k": int64(tc.k)}, Dtype: tc.dtype}
	prob, err := ParseProblem(p, tc.w)
	if err != nil {
		t.Fatal(err)
	}
	validH, sampleH := sha256.New(), sha256.New()
	reasons := map[string]int{}
	i, valid, mismatches := 0, 0, 0
	eachConfig(spaceOf(tc.v), func(c space.Config) {
		_, _, err := tc.v.check(c, p, tc.w)
		why := ""
		if err != nil {
			why = err.Error()
			reasons[why]++
		} else {
			valid++
			fmt.Fprintln(validH, c)
		}
		if i%sampleEvery == 0 {
			fmt.Fprintf(sampleH, "%s\t%s\n", c, why)
			if direct := directReason(tc.v, c, prob); direct != why && mismatches < 5 {
				mismatches++
				t.Errorf("%s: check says %q, ParseConfig and Validate %q", c, why, direct)
			}
		}
		i++
	})
	texts := make([]string, 0, len(reasons))
	for why := range reasons {
		texts = append(texts, why)
	}
	slices.Sort(texts)
	reasonH := sha256.New()
	for _, why := range texts {
		fmt.Fprintf(reasonH, "%d %s\n", reasons[why], why)
	}
	tc.valid, tc.distinct = valid, len(reasons)
	tc.validSum, tc.reasonSum, tc.sampleSum = short(validH), short(reasonH), short(sampleH)
	return tc
}

// directReason is why the uncached path rejects c on p ("" if it does not).
func directReason(v Variant, c space.Config, p Problem) string {
	cfg, err := v.ParseConfig(c)
	if err == nil {
		err = v.Validate(cfg, p)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func short(h hash.Hash) string { return fmt.Sprintf("%x", h.Sum(nil)[:6]) }

// row is the case as a line of listingCases.
func (tc listingCase) row() string {
	v := "VariantAGMM"
	if tc.v == VariantMatmulRS {
		v = "VariantMatmulRS"
	}
	return fmt.Sprintf("{%s, %q, %d, %d, %d, %d, %d, %d, %q, %q, %q},", v, tc.dtype, tc.m, tc.n, tc.k, tc.w, tc.valid, tc.distinct, tc.validSum, tc.reasonSum, tc.sampleSum)
}

// TestParseProblemAgain: check's parseProblem, which answers again for the
// last problem, answers as ParseProblem does, whatever came before, and
// from goroutines asking about different problems at once.
func TestParseProblemAgain(t *testing.T) {
	shape := func(m, n, k int64) space.Shape { return space.Shape{"m": m, "n": n, "k": k} }
	type ask struct {
		p     space.Problem
		world int
	}
	asks := []ask{
		{space.Problem{Shape: shape(8192, 3584, 8192), Dtype: "bf16"}, 2},
		{space.Problem{Shape: shape(8192, 3584, 8192), Dtype: "bf16"}, 2},
		{space.Problem{Shape: shape(8192, 3584, 8192), Dtype: "bf16"}, 3},
		{space.Problem{Shape: shape(8192, 3584, 8192), Dtype: "e4m3"}, 2},
		{space.Problem{Shape: shape(8192, 3584, 8192), Dtype: "f32"}, 2},
		{space.Problem{Shape: shape(8192, 3584, 1000), Dtype: "e4m3_row"}, 2},
		{space.Problem{Shape: shape(8192, 3584, 1000), Dtype: "e4m3_row"}, 2},
		{space.Problem{Shape: shape(8192, 3584, 1000), Dtype: "bf16"}, 9},
		{space.Problem{Shape: shape(0, 3584, 1000), Dtype: "bf16"}, 1},
		{space.Problem{Shape: shape(1<<20, 1<<20, 1), Dtype: "bf16"}, 1},
		{space.Problem{Shape: space.Shape{"m": 64, "n": 64}, Dtype: "bf16"}, 1},
		{space.Problem{Shape: space.Shape{"m": 64, "n": 64, "x": 64}, Dtype: "bf16"}, 1},
		{space.Problem{Shape: space.Shape{"m": 64, "n": 64, "k": 64, "x": 64}, Dtype: "bf16"}, 1},
		{space.Problem{Shape: shape(64, 64, 64), Dtype: "bf16"}, 1},
	}
	same := func(a ask) error {
		got, gotErr := parseProblem(a.p, a.world)
		want, wantErr := ParseProblem(a.p, a.world)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			return fmt.Errorf("%v on %d: %+v, %v; ParseProblem %+v, %v", a.p, a.world, got, gotErr, want, wantErr)
		}
		return nil
	}
	for _, a := range asks {
		if err := same(a); err != nil {
			t.Error(err)
		}
	}
	errs := make(chan error, len(asks))
	for i := range asks {
		go func() {
			var err error
			for j := 0; j < 200 && err == nil; j++ {
				err = same(asks[(i+j)%len(asks)])
			}
			errs <- err
		}()
	}
	for range asks {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

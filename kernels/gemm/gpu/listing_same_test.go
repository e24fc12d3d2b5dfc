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
// formats, on 1, 2, 4 and 8 ranks. Re-recorded (2026-12-07) when the
// searched tiles gained 128x128:s6:c2:g4:cl2, the H100's untuned tile
// where rows start off 32-byte sectors (defaultTile's ppClusterTwin): more
// valid configs, and at two ranks and more one more reason in matmulrs.
var listingCases = []listingCase{
	{VariantAGMM, "bf16", 8192, 3584, 8192, 1, 420, 26, "20e8ad0261c5", "0f71a9709131", "02980adafe9f"},
	{VariantAGMM, "bf16", 8192, 3584, 8192, 2, 3552, 24, "df0a3168d94f", "414eb0debb8f", "e9f05bd85614"},
	{VariantAGMM, "bf16", 8192, 3584, 8192, 4, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 8192, 3584, 8192, 8, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 1, 460, 16, "82777d0e0b25", "6f9345d2ee11", "1b7a576fb098"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 2, 3552, 24, "df0a3168d94f", "414eb0debb8f", "e9f05bd85614"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 4, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 64, 3584, 8192, 8, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 1, 420, 26, "20e8ad0261c5", "306e91c73c72", "0fb7f858f4c3"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 2, 3552, 24, "df0a3168d94f", "414eb0debb8f", "e9f05bd85614"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 4, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 16384, 8192, 3696, 8, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 1, 420, 26, "20e8ad0261c5", "aabe1e6800ed", "9a17cb9518ee"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 2, 3552, 24, "df0a3168d94f", "414eb0debb8f", "e9f05bd85614"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 4, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 256, 1280, 1000, 8, 7088, 22, "76eb77450c9b", "cd9d546f3537", "bf726e221464"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 1, 16, 15, "59b54a15572d", "1e4c6b9afaa2", "f38a4fbf4907"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 2, 176, 11, "4cc97759f7b6", "deeb753ff601", "b4e476c7329f"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 4, 384, 9, "7806ba7a72d2", "f42ebc9f4509", "1f2dcd827f57"},
	{VariantAGMM, "bf16", 1000, 1000, 1001, 8, 384, 9, "7806ba7a72d2", "f42ebc9f4509", "1f2dcd827f57"},
	{VariantAGMM, "f16", 4096, 1792, 4096, 2, 3552, 24, "df0a3168d94f", "aaf3070c0189", "50d1d1abea0d"},
	{VariantAGMM, "e4m3", 128, 2048, 4096, 1, 732, 16, "1eff8aff644d", "3d8ebe0387d3", "3e770eca8103"},
	{VariantAGMM, "e4m3_row", 8192, 3584, 8192, 2, 2056, 27, "342fc0875e40", "e613b3b21220", "d4d30df97c25"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 1, 106, 154, "8fe4795d86c1", "dd966ee81774", "c8e5a83e7ae7"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 2, 16784, 47, "fc73c2c4e545", "cf75d2c87fad", "d5e3dfb3ef76"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 4, 17520, 51, "cd9c02b3c6ac", "150a03360253", "8605db8aa967"},
	{VariantMatmulRS, "bf16", 8192, 3584, 8192, 8, 17440, 49, "e4a458f96e0e", "f5ab82500827", "39685bbe5b18"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 1, 126, 144, "b1e2789332db", "eb8bd019eb4c", "d4d2d72f4df5"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 2, 16160, 24, "003870789c38", "a132e3c7278e", "196fa193d802"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 4, 16960, 22, "7baaf634dda0", "e70f428c2239", "2ce0f7deb75c"},
	{VariantMatmulRS, "bf16", 64, 3584, 8192, 8, 16960, 22, "7baaf634dda0", "eac5bbcea28e", "6dc42e4adec8"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 1, 106, 154, "8fe4795d86c1", "7282c921d84e", "dc1fcd25ec65"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 2, 16784, 47, "fc73c2c4e545", "cf75d2c87fad", "d5e3dfb3ef76"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 4, 17536, 51, "adfbd2f2dddc", "cdde5a5e5b76", "8605db8aa967"},
	{VariantMatmulRS, "bf16", 16384, 8192, 3696, 8, 17520, 51, "cd9c02b3c6ac", "42003cc87508", "fc2b3ce90d42"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 1, 106, 154, "8fe4795d86c1", "3707605cb78e", "bfaa4488f924"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 2, 16160, 27, "003870789c38", "8af94a9d4ea9", "b5a85f923acf"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 4, 16960, 23, "7baaf634dda0", "cba2e788512e", "6448273bb260"},
	{VariantMatmulRS, "bf16", 256, 1280, 1000, 8, 16960, 22, "7baaf634dda0", "4c13fdc8980f", "9df47b90e3f3"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 1, 32, 25, "9841ae7f29d2", "471105d045f8", "d27e009629e6"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 2, 4960, 7, "d6c5c9f606a3", "5fc0d9ac1d6c", "6942a34ad99d"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 4, 5760, 5, "331b3482294f", "2677c221c375", "4330581b4bcd"},
	{VariantMatmulRS, "bf16", 1000, 1000, 1001, 8, 5760, 5, "331b3482294f", "2677c221c375", "4330581b4bcd"},
	{VariantMatmulRS, "f16", 4096, 1792, 4096, 2, 16768, 47, "73e08669fb69", "0e8e5a43b733", "90502b9f2b76"},
	{VariantMatmulRS, "e4m3", 128, 2048, 4096, 1, 158, 144, "c8d747dcbc82", "9a8e5d383f7d", "364ce8376dee"},
	{VariantMatmulRS, "e4m3_row", 8192, 3584, 8192, 2, 13584, 49, "f7c5dabcabbd", "73afbd3f0db4", "90582a8f448b"},
}

// sampleEvery is the stride of the configs whose reasons are fingerprinted
// one by one (prime, so the sample walks every parameter's values).
const sampleEvery = 101

// TestListingUnchanged lists whole spaces as a plugin answers the host
// (ParseConfig and Validate for every config, on the case's problem) and
// compares the valid configs and the reasons for the rest with those
// recorded before the listing was made faster. On the sampled configs it
// also asks check, the plugin's own path (with the problem it parsed last
// cached), and compares its reason with that one.
func TestListingUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("lists whole spaces")
	}
	skipEnumerationUnderRace(t)
	got := listFingerprints(t, listingCases)
	for i, tc := range listingCases {
		name := fmt.Sprintf("%s/%s/%dx%dx%d/world=%d", tc.v, tc.dtype, tc.m, tc.n, tc.k, tc.w)
		t.Run(name, func(t *testing.T) {
			if got[i] != tc {
				t.Errorf("listing changed:\n got  %s\n want %s", got[i].row(), tc.row())
			}
		})
	}
}

// listFingerprints lists each case's problem and returns the cases with
// what it found. Each variant's space is walked once for all its cases and
// each config parsed once: the cases' problems differ, their configs do
// not (a walk and a parse per case were most of the test's time).
func listFingerprints(t *testing.T, cases []listingCase) []listingCase {
	t.Helper()
	type listing struct {
		tc                *listingCase
		p                 space.Problem
		prob              Problem
		validH, sampleH   hash.Hash
		reasons           map[string]int
		valid, mismatches int
	}
	out := slices.Clone(cases)
	var variants []Variant
	for _, tc := range cases {
		if !slices.Contains(variants, tc.v) {
			variants = append(variants, tc.v)
		}
	}
	for _, v := range variants {
		var ls []*listing
		for i := range out {
			tc := &out[i]
			if tc.v != v {
				continue
			}
			p := space.Problem{Shape: space.Shape{"m": int64(tc.m), "n": int64(tc.n), "k": int64(tc.k)}, Dtype: tc.dtype}
			prob, err := ParseProblem(p, tc.w)
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, &listing{tc: tc, p: p, prob: prob, validH: sha256.New(), sampleH: sha256.New(), reasons: map[string]int{}})
		}
		i := 0
		eachConfig(spaceOf(v), func(c space.Config) {
			cfg, parseErr := v.ParseConfig(c)
			for _, l := range ls {
				err := parseErr
				if err == nil {
					err = v.Validate(cfg, l.prob)
				}
				why := ""
				if err != nil {
					why = err.Error()
					l.reasons[why]++
				} else {
					l.valid++
					fmt.Fprintln(l.validH, c)
				}
				if i%sampleEvery == 0 {
					fmt.Fprintf(l.sampleH, "%s\t%s\n", c, why)
					_, _, checkErr := v.check(c, l.p, l.tc.w)
					if said := errText(checkErr); said != why && l.mismatches < 5 {
						l.mismatches++
						t.Errorf("%s on %v: check says %q, ParseConfig and Validate %q", c, l.p, said, why)
					}
				}
			}
			i++
		})
		for _, l := range ls {
			texts := make([]string, 0, len(l.reasons))
			for why := range l.reasons {
				texts = append(texts, why)
			}
			slices.Sort(texts)
			reasonH := sha256.New()
			for _, why := range texts {
				fmt.Fprintf(reasonH, "%d %s\n", l.reasons[why], why)
			}
			l.tc.valid, l.tc.distinct = l.valid, len(l.reasons)
			l.tc.validSum, l.tc.reasonSum, l.tc.sampleSum = short(l.validH), short(reasonH), short(l.sampleH)
		}
	}
	return out
}

// errText is err's text, "" for nil.
func errText(err error) string {
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

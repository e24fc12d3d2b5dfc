package sdk

import (
	"math"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

func TestUniformIsDeterministicPerSeedRankIndex(t *testing.T) {
	if Uniform(1, 0, 5) != Uniform(1, 0, 5) {
		t.Fatal("same (seed, rank, i) gave different values")
	}
	distinct := map[float64]bool{}
	var sum, sumsq float64
	const n = 100000
	for i := int64(0); i < n; i++ {
		v := Uniform(42, 3, i)
		if v < -1 || v >= 1 {
			t.Fatalf("value %v outside [-1,1)", v)
		}
		if v == 0 {
			t.Fatalf("element %d is exactly zero", i)
		}
		distinct[v] = true
		sum += v
		sumsq += v * v
	}
	// Uniform on [-1,1): mean 0, variance 1/3.
	if mean := sum / n; math.Abs(mean) > 0.01 {
		t.Errorf("mean %v, want ~0", mean)
	}
	if v := sumsq / n; math.Abs(v-1.0/3) > 0.01 {
		t.Errorf("variance %v, want ~1/3", v)
	}
	if len(distinct) < n-10 {
		t.Errorf("only %d distinct values of %d", len(distinct), n)
	}
	if Uniform(1, 0, 5) == Uniform(2, 0, 5) || Uniform(1, 0, 5) == Uniform(1, 1, 5) {
		t.Error("seed and rank must change the value")
	}
}

func TestRelErr(t *testing.T) {
	ref := []float64{1, 2, 3}
	tests := []struct {
		name string
		got  []float64
		want float64
	}{
		{"equal", []float64{1, 2, 3}, 0},
		{"off", []float64{1, 2, 4}, 1 / math.Sqrt(14)},
		{"nan", []float64{1, math.NaN(), 3}, math.Inf(1)},
		{"inf", []float64{1, math.Inf(-1), 3}, math.Inf(1)},
	}
	for _, tc := range tests {
		if got := RelErr(tc.got, ref); math.Abs(got-tc.want) > 1e-12 && !(math.IsInf(got, 1) && math.IsInf(tc.want, 1)) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDescriptionRoundTripAndChecks(t *testing.T) {
	d := Description{
		Name: "k", KernelVersion: SourceHash([]byte("src")), Dims: []string{"n"}, Dtypes: []string{"f32"},
		Space: space.Space{Params: []space.Param{
			{Name: "algo", Values: []space.Value{space.Str("a"), space.Str("b")}},
			{Name: "blocks", Values: []space.Value{space.Int(8), space.Int(16)}},
		}},
		Default:  space.Config{"algo": space.Str("b"), "blocks": space.Int(16)},
		Backends: []string{"cpu"},
	}
	back, err := DescriptionFromProto(DescriptionToProto(d))
	if err != nil {
		t.Fatal(err)
	}
	if back.Name != d.Name || back.KernelVersion != d.KernelVersion || back.Default.String() != d.Default.String() ||
		back.Space.Size() != 4 || back.Space.Params[1].Values[1] != space.Int(16) {
		t.Errorf("round trip: %+v", back)
	}
	bad := d
	bad.Default = space.Config{"algo": space.Str("c"), "blocks": space.Int(16)}
	if _, err := DescriptionFromProto(DescriptionToProto(bad)); err == nil {
		t.Error("a default outside the space must be refused")
	}
	hw := hardware.Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 4, SMs: 132, MemoryMiB: 143771, Compute: "9.0", Driver: "580", Interconnect: "NVLink x18"}
	if got := HardwareFromProto(HardwareToProto(hw)); got != hw {
		t.Errorf("hardware round trip: %+v", got)
	}
	p := space.Problem{Shape: space.Shape{"m": 4, "n": 8}, Dtype: "bf16"}
	if got := ProblemFromProto(ProblemToProto(p)); !got.Shape.Equal(p.Shape) || got.Dtype != p.Dtype {
		t.Errorf("problem round trip: %+v", got)
	}
}

func TestUniformSumIsTheSumOfRanksFloat32Inputs(t *testing.T) {
	ref := UniformSum(7, 3, 5)
	for i := int64(0); i < 5; i++ {
		want := float64(float32(Uniform(7, 0, i))) + float64(float32(Uniform(7, 1, i))) + float64(float32(Uniform(7, 2, i)))
		if ref[i] != want {
			t.Errorf("element %d: %v, want %v", i, ref[i], want)
		}
	}
}

// TestCheckUniformSumNearCancellation: a right float32 sum passes even
// where the ranks' inputs nearly cancel (the rounding is the inputs'
// scale, not the sum's), and a wrong or poisoned one still fails.
func TestCheckUniformSumNearCancellation(t *testing.T) {
	const world = 4
	passed := 0
	for seed := uint64(1); seed <= 5000; seed++ {
		var f32 float32
		for r := 0; r < world; r++ {
			f32 += float32(Uniform(seed, r, 0))
		}
		if !CheckUniformSum([]float32{f32}, seed, world, 0).OK {
			t.Fatalf("seed %d: a float32 sum %g of %d ranks fails", seed, f32, world)
		}
		passed++
		if CheckUniformSum([]float32{f32 + 0.01}, seed, world, 0).OK {
			t.Fatalf("seed %d: a sum off by 0.01 passes", seed)
		}
	}
	if CheckUniformSum([]float32{float32(math.NaN())}, 1, world, 0).OK {
		t.Error("NaN passes")
	}
}

// TestDescriptionNames: the names outside the space (dimensions, dtypes,
// backends) and the kernel version are refused at describe where shape
// text, flags and cache keys could not carry them, or are listed twice.
func TestDescriptionNames(t *testing.T) {
	good := Description{
		Name: "k", KernelVersion: "v1", Dims: []string{"m", "n", "k"}, Dtypes: []string{"bf16", "e4m3_row"},
		Space:    space.Space{Params: []space.Param{{Name: "algo", Values: []space.Value{space.Str("a")}}}},
		Default:  space.Config{"algo": space.Str("a")},
		Backends: []string{"cpu", "cuda"},
	}
	for _, tc := range []struct {
		name    string
		edit    func(d *Description)
		wantErr string // "": accepted
	}{
		{"the kernels' kind", func(d *Description) {}, ""},
		{"a dtype with a comma", func(d *Description) { d.Dtypes = []string{"bf16,f32"} }, `dtype "bf16,f32"`},
		{"a dimension with an '='", func(d *Description) { d.Dims = []string{"m=1"} }, `dimension "m=1"`},
		{"an empty backend", func(d *Description) { d.Backends = []string{""} }, `backend ""`},
		{"a dimension twice", func(d *Description) { d.Dims = []string{"n", "n"} }, `dimension "n" is listed twice`},
		{"a dtype twice", func(d *Description) { d.Dtypes = []string{"f32", "f32"} }, `dtype "f32" is listed twice`},
		{"a version with a newline", func(d *Description) { d.KernelVersion = "v1\nv2" }, "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := good
			tc.edit(&d)
			_, err := DescriptionFromProto(DescriptionToProto(d))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}

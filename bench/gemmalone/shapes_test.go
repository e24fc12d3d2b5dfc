package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// TestProjections: one rank's N x K of each projection, by hand from the
// models' configs (hidden 8192; q heads 64, kv heads 8, head dim 128;
// intermediate 28672 and 29568): column-parallel qkv and gate_up split N,
// row-parallel o and down split K.
func TestProjections(t *testing.T) {
	for _, tc := range []struct {
		model int
		tp    int
		want  [][2]int // qkv, o, gate_up, down
	}{
		{0, 1, [][2]int{{10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}}},
		{0, 2, [][2]int{{5120, 8192}, {8192, 4096}, {28672, 8192}, {8192, 14336}}},
		{0, 8, [][2]int{{1280, 8192}, {8192, 1024}, {7168, 8192}, {8192, 3584}}},
		{1, 1, [][2]int{{10240, 8192}, {8192, 8192}, {59136, 8192}, {8192, 29568}}},
		{1, 4, [][2]int{{2560, 8192}, {8192, 2048}, {14784, 8192}, {8192, 7392}}},
		{1, 8, [][2]int{{1280, 8192}, {8192, 1024}, {7392, 8192}, {8192, 3696}}},
	} {
		md := issue56Models[tc.model]
		if got := md.projections(tc.tp); !slices.Equal(got, tc.want) {
			t.Errorf("%s tp %d: %v, want %v", md.name, tc.tp, got, tc.want)
		}
	}
}

// TestIssue56Shapes: the whole set holds the issue's table and every
// projection at every row count once, and every shape is one the fused
// kernel takes, bf16 and FP8 alike.
func TestIssue56Shapes(t *testing.T) {
	all := issue56Shapes()
	if len(dedupe(all)) != len(all) {
		t.Errorf("duplicate shapes in %v", all)
	}
	for _, s := range issue56Table {
		if !slices.Contains(all, s) {
			t.Errorf("table shape %s missing", s)
		}
	}
	n := 0
	for _, md := range issue56Models {
		for _, tp := range issue56TP {
			for _, nk := range md.projections(tp) {
				for _, m := range issue56Rows {
					n++
					if !slices.Contains(all, shape{m, nk[0], nk[1]}) {
						t.Errorf("%s tp %d: %dx%dx%d missing", md.name, tp, m, nk[0], nk[1])
					}
				}
			}
		}
	}
	// 11 table shapes, 2 models x 4 tp x 4 projections x 5 rows; qkv and o
	// are the same in both models (40 repeats), and two table shapes are
	// projections (1024x28672x8192, 256x8192x8192).
	if want := 11 + n - 40 - 2; len(all) != want {
		t.Errorf("%d shapes, want %d", len(all), want)
	}
	// Every shape's untuned tile takes it, and a split one is timed
	// (splitKSkip lets it through: -tiles default would skip it else).
	splits := 0
	for _, s := range all {
		for _, dtype := range []string{"bf16", "e4m3_row"} {
			def, err := untunedTile(s, dtype, gpu.Device{Name: "NVIDIA H200", SMs: 132})
			if err != nil {
				t.Fatal(err)
			}
			dt, err := gpu.ParseDtype(dtype)
			if err != nil {
				t.Fatal(err)
			}
			if err := def.CheckShapeFor(dt.Format(), s.n, s.k); err != nil {
				t.Errorf("%s: %v", s, err)
			}
			if def.KSplits() > 1 {
				splits++
				if why := splitKSkip(def, s, 132); why != "" {
					t.Errorf("%s %s: default %s not timed: %s", s, dtype, def, why)
				}
			}
		}
	}
	if splits == 0 {
		t.Error("no shape's untuned tile is split (qkv at tp 8, 64 x 1280 x 8192, should be)")
	}
	if got, err := shapesOf("issue56-table", ""); err != nil || !slices.Equal(got, issue56Table) {
		t.Errorf("issue56-table: %v, %v", got, err)
	}
}

// TestIssue56Small: the budgeted subset is 25 shapes of at most 1,024
// rows, smallest rows first, each N x K one of the whole set's.
func TestIssue56Small(t *testing.T) {
	small, err := shapesOf("issue56-small", "ignored")
	if err != nil {
		t.Fatal(err)
	}
	if len(small) != 25 || small[0].m != 64 || small[len(small)-1].m != 1024 {
		t.Errorf("issue56-small: %v", small)
	}
	nks := map[[2]int]bool{}
	for _, s := range issue56Shapes() {
		nks[[2]int{s.n, s.k}] = true
	}
	for i, s := range small {
		if !nks[[2]int{s.n, s.k}] {
			t.Errorf("%s: N x K not in issue56", s)
		}
		if i > 0 && s.m < small[i-1].m {
			t.Errorf("%s after %s: want rows ascending", s, small[i-1])
		}
	}
}

func TestParseShapes(t *testing.T) {
	got, err := parseShapes("64x1280x8192,8192x3584x8192")
	if err != nil || !slices.Equal(got, []shape{{64, 1280, 8192}, {8192, 3584, 8192}}) {
		t.Errorf("parseShapes: %v, %v", got, err)
	}
	for _, bad := range []string{"64x1280", "64x1280x8192x2", "64x1280x8192,", "axbxc"} {
		if _, err := parseShapes(bad); err == nil {
			t.Errorf("parseShapes(%q): want an error", bad)
		}
	}
	if _, err := shapesOf("nope", ""); err == nil {
		t.Error("shapesOf(nope): want an error")
	}
}

// TestTiles: the named lists parse, every tile of them fits the GPU, and
// "default" becomes each shape's untuned tile once.
func TestTiles(t *testing.T) {
	all, err := parseTiles("sweep,smallm,splitk,default")
	if err != nil {
		t.Fatal(err)
	}
	for _, tile := range all[:len(all)-1] {
		if err := tile.Check(hopper.SmemLimit); err != nil {
			t.Errorf("%s: %v", tile, err)
		}
	}
	name := func(ts []hopper.Tile) []string {
		var out []string
		for _, tl := range ts {
			out = append(out, tl.String())
		}
		return out
	}
	def := gpu.DefaultTile(8192, 3584, 8192, gpu.Device{SMs: 132}, false) // not one of smallm's
	for _, tc := range []struct{ list, want string }{
		{"default,smallm", def.String() + "," + smallM},
		{"default,smallm,splitk", def.String() + "," + smallM + "," + splitK},
		{"smallm,default", smallM + "," + def.String()},
		{"128x256:s4:c2:g8:cl2,64x256:s5:c2:g8:pp,default", "128x256:s4:c2:g8:cl2,64x256:s5:c2:g8:pp"},
		{"default,64x256:s5:c2:g8:pp,default", def.String() + ",64x256:s5:c2:g8:pp"},
		// No "default": duplicates stay (a tile timed first and last).
		{"128x224:s5:c2:g4,128x256:s4:c2:g8:cl2,128x224:s5:c2:g4", "128x224:s5:c2:g4,128x256:s4:c2:g8:cl2,128x224:s5:c2:g4"},
	} {
		ts, err := parseTiles(tc.list)
		if err != nil {
			t.Fatal(err)
		}
		want, err := parseTiles(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := tilesFor(ts, def); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", tc.list, name(got), name(want))
		}
	}
	if _, err := parseTiles("128x256:s4:zz"); err == nil {
		t.Error("a bad tile name: want an error")
	}
}

// TestSplitKSkip: split-K tiles are timed only at shapes of few rows
// where their tiles leave SMs idle and their units fill more of them; every
// split-K tile of the list runs on some shape of issue56-small; other tiles
// always run.
func TestSplitKSkip(t *testing.T) {
	tile := func(name string) hopper.Tile {
		tl, err := hopper.ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	for _, c := range []struct {
		tile string
		sh   shape
		want string // "" when timed, else a part of the reason
	}{
		{"64x128:s6:c2:g8:pp:sk4", shape{64, 1280, 8192}, ""},         // 10 tiles, 40 units
		{"64x128:s6:c2:g8:pp:sk8", shape{64, 1280, 8192}, ""},         // 80 units
		{"64x128:s6:c2:g8:pp:sk2", shape{64, 8192, 3584}, ""},         // 64 tiles, 128 units
		{"64x128:s6:c2:g8:pp:sk2", shape{64, 14336, 4096}, "2 waves"}, // 112 tiles, 224 units
		{"64x128:s6:c2:g8:pp:sk4", shape{64, 14336, 4096}, "4 waves"}, // 448 units
		{"64x128:s6:c2:g8:pp:sk2", shape{64, 28672, 8192}, "fill the 132 SMs"},
		{"64x128:s6:c2:g8:pp:sk8", shape{64, 8192, 3584}, "under 512"},
		{"128x256:s4:c2:g8:sk2", shape{512, 1280, 8192}, "above split-K's 256 rows"},
		{"128x256:s4:c2:g8:sk2", shape{256, 14336, 4096}, "2 waves"}, // 112 tiles
		{"128x256:s4:c2:g8", shape{64, 1280, 8192}, ""},
		{"128x256:s4:c2:g8", shape{8192, 1280, 8192}, ""},
	} {
		got := splitKSkip(tile(c.tile), c.sh, 132)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s at %s: %q, want %q", c.tile, c.sh, got, c.want)
		}
	}
	small, err := shapesOf("issue56-small", "")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := parseTiles("splitk")
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range ts {
		if tl.KSplits() < 2 {
			t.Errorf("%s in splitk is not split", tl)
		}
		runs := 0
		for _, sh := range small {
			if splitKSkip(tl, sh, 132) == "" {
				runs++
				if err := tl.CheckShapeFor(hopper.Format{Elem: hopper.ElemBF16}, sh.n, sh.k); err != nil {
					t.Errorf("%s at %s: %v", tl, sh, err)
				}
			}
		}
		if runs == 0 {
			t.Errorf("%s runs on no shape of issue56-small", tl)
		}
	}
}

// TestParseDevice: -defaults-on takes "NAME:SMS" (the name may hold
// colons) and refuses anything else with one error line.
func TestParseDevice(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want gpu.Device
		ok   bool
	}{
		{"NVIDIA H100 80GB HBM3:132", gpu.Device{Major: 9, SMs: 132, Name: "NVIDIA H100 80GB HBM3"}, true},
		{"a:b:114", gpu.Device{Major: 9, SMs: 114, Name: "a:b"}, true},
		{" NVIDIA H200 : 132 ", gpu.Device{Major: 9, SMs: 132, Name: "NVIDIA H200"}, true},
		{"NVIDIA H200", gpu.Device{}, false},
		{":132", gpu.Device{}, false},
		{"NVIDIA H200:0", gpu.Device{}, false},
		{"NVIDIA H200:13x", gpu.Device{}, false},
	} {
		got, err := parseDevice(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseDevice(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("parseDevice(%q): a multi-line error %q", tc.in, err)
		}
	}
}

// TestUntunedLines: -list -defaults-on prints what -tiles default would
// time on the named card: the H100's own factors move a bf16 pick there
// (2026-12-06-h100-card-factors.md) and an FP8 one
// (2026-12-07-h100-card-factors-5.md); the H200's stay the ping-pong tile.
func TestUntunedLines(t *testing.T) {
	shs, err := parseShapes("1024x29568x8192")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dtype, card, want string
	}{
		{"bf16", "NVIDIA H100 80GB HBM3:132", "1024x29568x8192 128x224:s5:c2:g16"},
		{"bf16", "NVIDIA H200:132", "1024x29568x8192 128x128:s6:c2:g4:pp"},
		{"e4m3_row", "NVIDIA H100 80GB HBM3:132", "1024x29568x8192 128x224:s5:c2:g16"},
		{"e4m3_row", "NVIDIA H200:132", "1024x29568x8192 128x128:s6:c2:g4:pp"},
	} {
		d, err := parseDevice(tc.card)
		if err != nil {
			t.Fatal(err)
		}
		got, err := untunedLines(shs, tc.dtype, d)
		if err != nil || len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s on %s: %q, %v; want %q", tc.dtype, tc.card, got, err, tc.want)
		}
	}
	if _, err := untunedLines(shs, "fp32", gpu.Device{SMs: 132}); err == nil {
		t.Error("dtype fp32: no error")
	}
}

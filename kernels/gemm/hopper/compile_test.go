//go:build cuda

package hopper

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/symmtune/symmtune/cuda/nvrtc"
)

// TestCompileAllTiles compiles every tile Check accepts for sm_90a with
// NVRTC (no GPU needed; NVRTC 12 or newer, since wgmma and setmaxnreg need
// sm_90a) and fails when ptxas spills registers or uses a stack frame for
// any of them: Check's register arithmetic must keep tuned configs off
// local memory. make cuda-test runs it with the NVRTC 12 that
// scripts/fetch-cuda.sh fetches and SYMMTUNE_REQUIRE_SM90A=1, so there a
// missing or old NVRTC fails instead of skipping. $SYMMTUNE_TILES, a
// regular expression, compiles only the tiles whose names match (for a
// developer changing the kernel; CI compiles them all).
func TestCompileAllTiles(t *testing.T) {
	major, _, err := nvrtc.Version()
	if err == nil && major < 12 {
		err = errOld(major)
	}
	if err != nil {
		if os.Getenv("SYMMTUNE_REQUIRE_SM90A") != "" {
			t.Fatalf("SYMMTUNE_REQUIRE_SM90A is set but NVRTC cannot build sm_90a: %v", err)
		}
		t.Skipf("no NVRTC for sm_90a here: %v", err)
	}
	c := nvrtc.Compiler{Arch: "sm_90a", CacheDir: t.TempDir()}
	spill := regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	tiles := AllTiles()
	if len(tiles) < 10 {
		t.Fatalf("only %d tiles pass Check", len(tiles))
	}
	if expr := os.Getenv("SYMMTUNE_TILES"); expr != "" {
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("SYMMTUNE_TILES: %v", err)
		}
		var some []Tile
		for _, tl := range tiles {
			if re.MatchString(tl.String()) {
				some = append(some, tl)
			}
		}
		tiles = some
		if len(tiles) == 0 {
			t.Fatalf("SYMMTUNE_TILES %q matches no tile", expr)
		}
	}
	type variant struct {
		tile     Tile
		bf16     bool
		epilogue bool
	}
	vs := []variant{}
	for _, tl := range tiles {
		vs = append(vs, variant{tile: tl, bf16: true})
	}
	// The reduce-scatter's epilogue reduction on every tile a search may
	// run it with (bf16; f16 on the first).
	for i, name := range Searched {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, variant{tile: tl, bf16: true, epilogue: true})
		if i == 0 {
			vs = append(vs, variant{tile: tl, epilogue: true})
		}
	}
	// The other dtype and B layout on one tile each: they change types and
	// descriptors, not the structure.
	f16 := tiles[0]
	vs = append(vs, variant{tile: f16})
	mn := tiles[0]
	mn.BKMajor = false
	vs = append(vs, variant{tile: mn, bf16: true})
	for _, v := range vs {
		opts := v.tile.Options(v.bf16)
		if v.epilogue {
			opts = append(opts, EpilogueOption)
		}
		log, err := c.PtxasInfo(nvrtc.Source{Name: "hopper_gemm.cu", Text: Source, Options: opts})
		if err != nil {
			t.Errorf("%v bf16=%v epilogue=%v: %v", v.tile, v.bf16, v.epilogue, err)
			continue
		}
		m := spill.FindStringSubmatch(log)
		if m == nil {
			t.Errorf("%v: no ptxas report in the log:\n%s", v.tile, log)
			continue
		}
		for _, n := range m[1:] {
			if x, _ := strconv.Atoi(n); x != 0 {
				t.Errorf("%v bf16=%v epilogue=%v: ptxas: %s", v.tile, v.bf16, v.epilogue, m[0])
				break
			}
		}
	}
	t.Logf("%d variants compiled", len(vs))
}

type errOld int

func (e errOld) Error() string { return "NVRTC " + strconv.Itoa(int(e)) + " predates sm_90a" }

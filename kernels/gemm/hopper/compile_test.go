//go:build cuda

package hopper

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// TestCompileAllTiles compiles every tile Check accepts for sm_90a with
// NVRTC (no GPU needed; NVRTC 12 or newer, since wgmma and setmaxnreg need
// sm_90a) and fails when ptxas spills registers or uses a stack frame for
// any of them: Check's register arithmetic must keep tuned configs off
// local memory. make cuda-test runs it with the NVRTC 12 that
// scripts/fetch-cuda.sh fetches and SYMMTUNE_REQUIRE_SM90A=1, so there a
// missing or old NVRTC fails instead of skipping. $SYMMTUNE_TILES, a
// regular expression, compiles only the tiles whose names match (for a
// developer changing the kernel; CI compiles them all). With
// $SYMMTUNE_CUBIN_DIR and $SYMMTUNE_NVDISASM set it writes each variant's
// cubin and SASS there (make sass).
func TestCompileAllTiles(t *testing.T) {
	c := sm90aCompiler(t)
	spill := regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	tiles := AllTiles()
	if len(tiles) < 10 {
		t.Fatalf("only %d tiles pass Check", len(tiles))
	}
	vs := compileVariants(t, tiles)
	if expr := os.Getenv("SYMMTUNE_TILES"); expr != "" {
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("SYMMTUNE_TILES: %v", err)
		}
		var some []compileVariant
		for _, v := range vs {
			if re.MatchString(v.tile.String()) {
				some = append(some, v)
			}
		}
		vs = some
		if len(vs) == 0 {
			t.Fatalf("SYMMTUNE_TILES %q matches no tile", expr)
		}
	}
	nvdisasm := os.Getenv("SYMMTUNE_NVDISASM")
	if nvdisasm == "" && os.Getenv("SYMMTUNE_REQUIRE_NVDISASM") != "" {
		t.Fatal("SYMMTUNE_REQUIRE_NVDISASM is set but SYMMTUNE_NVDISASM (nvdisasm's path) is not")
	}
	// Where cubins (and their SASS) go: $SYMMTUNE_CUBIN_DIR, kept for
	// make sass, or a directory the test removes.
	dir, keep := os.Getenv("SYMMTUNE_CUBIN_DIR"), true
	if dir == "" {
		dir, keep = t.TempDir(), false
	}
	// Each variant is compiled (and disassembled) on its own goroutine, as
	// many at once as there are CPUs: NVRTC is thread-safe per program
	// (nvrtc.Compiler.CompileAll relies on it too), and the compiles are
	// most of make cuda-test's time. The findings are reported afterwards
	// in the variants' order, as a sequential loop would.
	type result struct {
		name     string
		cubinErr error // CheckFormat or the compile
		log      string
		sass     bool // the main loop was checked
		n, r2ur  int
		sassErr  error
	}
	results := make([]result, len(vs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				v, r := vs[i], &results[i]
				r.name = fmt.Sprintf("%v %v epilogue=%v peer_buffers=%d", v.tile, v.f, v.epilogue, v.tile.PeerBuffers)
				if r.cubinErr = v.tile.CheckFormat(v.f); r.cubinErr != nil {
					continue
				}
				opts := v.tile.Options(v.f)
				if v.epilogue {
					opts = append(opts, EpilogueOption)
				}
				var cubin []byte
				cubin, r.log, r.cubinErr = c.CompileInfo(nvrtc.Source{Name: "hopper_gemm.cu", Text: Source, Options: opts})
				if r.cubinErr != nil {
					continue
				}
				// In SASS: the searched tiles' variants (those with the epilogue;
				// each disassembly takes most of a second), every one for make sass.
				if nvdisasm != "" && (v.epilogue || keep) {
					r.sass = true
					r.n, r.r2ur, r.sassErr = checkMainLoop(nvdisasm, cubin, filepath.Join(dir, cubinName(v.tile, v.f, v.epilogue)), keep)
				}
			}
		}()
	}
	for i := range vs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, r := range results {
		name := r.name
		if r.cubinErr != nil {
			t.Errorf("%s: %v", name, r.cubinErr)
			continue
		}
		if r.sass {
			if r.sassErr != nil {
				t.Errorf("%s: %v", name, r.sassErr)
			} else {
				t.Logf("%s: main loop %d instructions, %d R2UR", name, r.n, r.r2ur)
			}
		}
		m := spill.FindStringSubmatch(r.log)
		if m == nil {
			t.Errorf("%s: no ptxas report in the log:\n%s", name, r.log)
			continue
		}
		for _, n := range m[1:] {
			if x, _ := strconv.Atoi(n); x != 0 {
				t.Errorf("%s: ptxas: %s", name, m[0])
				break
			}
		}
	}
	t.Logf("%d variants compiled", len(vs))
}

// compileVariant is one compile of TestCompileAllTiles: a tile, its
// operands' format and whether the reduce-scatter's epilogue is on.
type compileVariant struct {
	tile     Tile
	f        Format
	epilogue bool
}

// compileVariants lists TestCompileAllTiles' compiles for tiles (every
// tile Check accepts), each once: the lists below overlap (a searched
// stream-K tile, a 64-row tile that AllTiles holds too), and each compile
// costs CI a second of a core.
func compileVariants(t *testing.T, tiles []Tile) []compileVariant {
	t.Helper()
	bf16, f16 := Format{Elem: ElemBF16}, Format{Elem: ElemF16}
	e4m3, e4m3Row := Format{Elem: ElemE4M3}, Format{Elem: ElemE4M3, RowScales: true}
	vs := []compileVariant{}
	for _, tl := range tiles {
		vs = append(vs, compileVariant{tile: tl, f: bf16})
	}
	// The reduce-scatter's epilogue reduction on every tile a search may
	// run it with (bf16; f16 on the first). FP8 on every searched tile: row
	// scales (a scale per accumulator row and column) with the epilogue
	// reduction, the most registers the epilogue takes; the other three
	// FP8 combinations on the first (each compile costs CI seconds).
	for i, name := range Searched {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		if tl.Shares() {
			// Split-K and stream-K run plain products only (no epilogue variant: the
			// kernel's #error); the fixup beside the accumulators must not
			// spill: bf16 (f16's code but the conversion) and FP8 row
			// scales (tensor scales' code and more; with it, it once did),
			// two formats of four to keep CI's compile pass short.
			vs = append(vs, compileVariant{tile: tl, f: bf16}, compileVariant{tile: tl, f: e4m3Row})
			continue
		}
		vs = append(vs, compileVariant{tile: tl, f: bf16, epilogue: true}, compileVariant{tile: tl, f: e4m3Row, epilogue: true})
		// With the peers' partials in shared memory, where a two-rank
		// team's fit (the runner's choice; RS_SMEM_PEERS).
		if pt, ok := tl.WithPeerBuffers(1); ok {
			vs = append(vs, compileVariant{tile: pt, f: bf16, epilogue: true}, compileVariant{tile: pt, f: e4m3Row, epilogue: true})
		}
		if i == 0 {
			vs = append(vs, compileVariant{tile: tl, f: f16, epilogue: true}, compileVariant{tile: tl, f: e4m3},
				compileVariant{tile: tl, f: e4m3, epilogue: true}, compileVariant{tile: tl, f: e4m3Row})
		}
	}
	// Stream-K (plain products, cooperative consumers) on the widest
	// tiles it takes, bf16 and FP8 row scales: the schedule and the fixup
	// beside 128 accumulators must not spill.
	for _, name := range []string{"128x256:s4:c2:g8:st", "128x224:s5:c2:g4:st", "128x128:s6:c2:g8:st", "128x256:s4:c2:g8:cl2:st", "256x160:s4:c2:g8:cl2:st"} {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, compileVariant{tile: tl, f: bf16}, compileVariant{tile: tl, f: e4m3Row})
	}
	// B loaded evict-first (small M): the untuned 64-row tiles, whole
	// and in k-slices, and with B stored [K, N].
	for _, name := range []string{"64x128:s8:c2:g8:pp:ef", "64x64:s10:c2:g8:pp:ef", "64x128:s8:c2:g8:pp:sk2:ef", "64x256:s5:c2:g8:pp:bn:ef"} {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, compileVariant{tile: tl, f: bf16})
		if tl.BKMajor { // FP8 reads a K-major B only
			vs = append(vs, compileVariant{tile: tl, f: e4m3Row})
		}
	}
	// The 64-row tiles of the widths that fit one wave at small M (48,
	// 80, 96, 112: an odd count of 16-column blocks in three of them,
	// whose epilogue's last pair has one block): bf16 and FP8 row scales,
	// plain and with the reduce-scatter's reduction, and evict-first B.
	for _, name := range []string{"64x48:s12:c2:g8:pp", "64x80:s11:c2:g8:pp", "64x96:s10:c2:g8:pp", "64x112:s9:c2:g8:pp", "64x112:s9:c2:g8:pp:ef", "64x80:s11:c2:g8:pp:sk2:ef"} {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, compileVariant{tile: tl, f: bf16}, compileVariant{tile: tl, f: e4m3Row})
		if !tl.Shares() && !tl.EvictFirstB {
			vs = append(vs, compileVariant{tile: tl, f: bf16, epilogue: true}, compileVariant{tile: tl, f: e4m3Row, epilogue: true})
		}
	}
	// The other dtype and B layout on one tile each: they change types and
	// descriptors, not the structure.
	f16Tile := tiles[0]
	vs = append(vs, compileVariant{tile: f16Tile, f: f16})
	mn := tiles[0]
	mn.BKMajor = false
	vs = append(vs, compileVariant{tile: mn, f: bf16})
	// By the whole variant, not its name: a tile's name leaves out its
	// peer buffers, which change the compile.
	seen := map[compileVariant]bool{}
	once := vs[:0]
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			once = append(once, v)
		}
	}
	return once
}

// TestCompileAllTilesRefusesBadFormats: the kernel's own guards stop the
// formats CheckFormat rejects (a caller that skips CheckFormat gets a
// compile error, not a kernel that reads B the wrong way or never scales).
// Named so make cuda-test's -run TestCompileAllTiles runs it too.
func TestCompileAllTilesRefusesBadFormats(t *testing.T) {
	c := sm90aCompiler(t)
	kMajor, err := ParseTile(Searched[0])
	if err != nil {
		t.Fatal(err)
	}
	mn := kMajor
	mn.BKMajor = false
	split := kMajor
	split.SplitK, split.Cluster = 2, 0
	cluster := kMajor
	cluster.Cluster = 2
	for _, v := range []struct {
		opts []string
		want string
	}{
		{mn.Options(Format{Elem: ElemE4M3}), "must be K-major"},
		{append(split.Options(Format{Elem: ElemBF16}), EpilogueOption), "split-K tiles run plain products"},
		{append(cluster.Options(Format{Elem: ElemBF16}), "-DSPLIT_K=2"), "split-K tiles run plain products"},
		{append(kMajor.Options(Format{Elem: ElemBF16}), "-DROW_SCALES=1"), "row scales are for e4m3"},
		{append(kMajor.Options(Format{Elem: ElemF16}), "-DIN_E4M3=1"), "e4m3 products write bf16"},
		{kMajor.Options(Format{}), "DTYPE_BF16 must be defined"},
	} {
		_, err := c.PtxasInfo(nvrtc.Source{Name: "hopper_gemm.cu", Text: Source, Options: v.opts})
		if err == nil || !strings.Contains(err.Error(), v.want) {
			t.Errorf("%q: err %v, want one with %q", v.opts, err, v.want)
		}
	}
}

// sm90aCompiler is an NVRTC compiler for sm_90a, or skips the test (fails
// it under SYMMTUNE_REQUIRE_SM90A) where there is none.
func sm90aCompiler(t *testing.T) nvrtc.Compiler {
	t.Helper()
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
	return nvrtc.Compiler{Arch: "sm_90a", CacheDir: t.TempDir()}
}

type errOld int

func (e errOld) Error() string { return "NVRTC " + strconv.Itoa(int(e)) + " predates sm_90a" }

// cubinName names a variant's cubin file: the tile (":" as "_"), the format
// and "-rs" for the reduce-scatter's epilogue.
func cubinName(t Tile, f Format, epilogue bool) string {
	name := strings.ReplaceAll(t.String(), ":", "_") + "-" + f.String()
	if epilogue {
		name += "-rs"
	}
	if t.PeerBuffers > 0 {
		name += fmt.Sprintf("-peers%d", t.PeerBuffers)
	}
	return name + ".cubin"
}

// checkMainLoop writes cubin to path, disassembles it with nvdisasm (the
// SASS kept beside it, its extension .sass, when keep is set) and fails when a
// consumer's main loop (from its first WARPGROUP.ARRIVE, the wgmma fence, to
// the first WARPGROUP.DEPBAR, the wait for the group before) moves values
// into uniform registers (R2UR): ptxas then builds the wgmma descriptors per
// thread, because it cannot tell the warpgroup index is warp-uniform. That
// cost 1.8x cuBLAS's instructions and a lower clock
// (bench/results/2026-11-26-h200x2-fp8-uniform-wg.md).
func checkMainLoop(nvdisasm string, cubin []byte, path string, keep bool) (n, r2ur int, err error) {
	if err := os.WriteFile(path, cubin, 0o644); err != nil {
		return 0, 0, err
	}
	out, err := exec.Command(nvdisasm, "-c", path).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("nvdisasm: %w", err)
	}
	if keep {
		if err := os.WriteFile(strings.TrimSuffix(path, ".cubin")+".sass", out, 0o644); err != nil {
			return 0, 0, err
		}
	}
	n, r2ur, ok := mainLoop(string(out))
	if !ok {
		return n, r2ur, fmt.Errorf("no consumer main loop (WARPGROUP.ARRIVE ... WARPGROUP.DEPBAR) in the SASS")
	}
	if r2ur > 0 {
		return n, r2ur, fmt.Errorf("the main loop's %d instructions hold %d R2UR: its descriptors are built per thread", n, r2ur)
	}
	return n, r2ur, nil
}

// mainLoop counts the instructions, and the R2UR among them, from the
// first WARPGROUP.ARRIVE to the next WARPGROUP.DEPBAR of nvdisasm's output.
func mainLoop(sass string) (n, r2ur int, ok bool) {
	on := false
	for _, line := range strings.Split(sass, "\n") {
		if !on && strings.Contains(line, "WARPGROUP.ARRIVE") {
			on = true
		}
		if !on || !strings.Contains(line, ";") {
			continue
		}
		n++
		if strings.Contains(line, "R2UR") {
			r2ur++
		}
		if strings.Contains(line, "WARPGROUP.DEPBAR") {
			return n, r2ur, true
		}
	}
	return n, r2ur, false
}

// TestCompileAllTilesMainLoopParse: mainLoop finds the span and counts its
// R2UR (named so make cuda-test's -run TestCompileAllTiles runs it too).
func TestCompileAllTilesMainLoopParse(t *testing.T) {
	for _, c := range []struct {
		name    string
		sass    string
		n, r2ur int
		found   bool
	}{
		{"uniform", "  /*0a0*/ SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR17], R13 ;\n  /*0b0*/ WARPGROUP.ARRIVE ;\n  /*0c0*/ UIADD3.64 UR20, UR30, UR20, URZ ;\n  /*0d0*/ QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR16], R24 ;\n  /*0e0*/ WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n  /*0f0*/ R2UR UR4, R2 ;\n", 4, 0, true},
		{"per thread", "  /*0b0*/ WARPGROUP.ARRIVE ;\n  /*0c0*/ R2UR UR20, R12 ;\n  /*0d0*/ R2UR UR21, R13 ;\n  /*0e0*/ QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR20], R24 ;\n.L_x_1:\n  /*0f0*/ WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n", 5, 2, true},
		{"no loop", "  /*0b0*/ WARPGROUP.ARRIVE ;\n  /*0c0*/ R2UR UR20, R12 ;\n", 2, 1, false},
	} {
		n, r2ur, found := mainLoop(c.sass)
		if n != c.n || r2ur != c.r2ur || found != c.found {
			t.Errorf("%s: mainLoop = %d, %d, %v; want %d, %d, %v", c.name, n, r2ur, found, c.n, c.r2ur, c.found)
		}
	}
}

// TestCompileRuntimeTimeout: the runtime's build of the kernel, whose
// compiler sets the start gate's bound (cudamem.TimeoutOptions, carried by
// nvrtc.Compiler.Options), compiles without spills on the first searched
// tile with the reduce-scatter's epilogue.
func TestCompileRuntimeTimeout(t *testing.T) {
	c := sm90aCompiler(t)
	c.Options = cudamem.TimeoutOptions(cudamem.RuntimeTimeout)
	tl, err := ParseTile(Searched[0])
	if err != nil {
		t.Fatal(err)
	}
	f := Format{Elem: ElemBF16}
	_, log, err := c.CompileInfo(nvrtc.Source{Name: "hopper_gemm.cu", Text: Source, Options: append(tl.Options(f), EpilogueOption)})
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(\d+) bytes spill stores`).FindStringSubmatch(log); m != nil && m[1] != "0" {
		t.Errorf("%v: %s", tl, m[0])
	}
}

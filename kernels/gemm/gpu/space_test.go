package gpu

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

func problem(t *testing.T, m, n, k, world int) Problem {
	t.Helper()
	p, err := ParseProblem(space.Problem{Shape: space.Shape{"m": int64(m), "n": int64(n), "k": int64(k)}, Dtype: "bf16"}, world)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func with(kernel Variant, set map[string]space.Value) Config {
	c := kernel.Default()
	for k, v := range set {
		c[k] = v
	}
	cfg, err := kernel.ParseConfig(c)
	if err != nil {
		panic(err)
	}
	return cfg
}

// TestDefaultRunsEverywhere: what an untuned caller gets must be valid on
// any shape the problem rules accept, odd sizes included.
func TestDefaultRunsEverywhere(t *testing.T) {
	for _, kernel := range Variants {
		for _, w := range []int{1, 2, 3, 4, 8} {
			for _, s := range [][3]int{{8192, 3584, 8192}, {4096, 1792, 4096}, {24, 1, 1}, {1000, 999, 1001}, {16, 7, 5}} {
				m := s[0] / w * w
				if m/w < 2 && w > 1 {
					continue
				}
				p := problem(t, m, s[1], s[2], w)
				c := kernel.Default()
				if w == 1 {
					c[ParamChunks] = space.Int(1) // one rank: nothing to overlap
				}
				cfg, err := kernel.ParseConfig(c)
				if err != nil {
					t.Fatal(err)
				}
				if err := kernel.Validate(cfg, p); err != nil {
					t.Errorf("%s default on %dx%dx%d world %d: %v", kernel, m, s[1], s[2], w, err)
				}
			}
		}
	}
}

// fused0 is the first fused impl of agmm's space.
var fused0 = ImplFused + ":" + hopper.Searched[0]

// TestSpacesFitTheHost: each variant's space passes the host's describe
// check (space.CheckSize). With 47 impls the matmulrs space (2,165,760
// configs) and then agmm's (1,155,072) passed the host's former bound of
// 2^20, and both plugins failed to load on every GPU machine (2026-12-05,
// unseen until the wheel check's output on 2026-12-06): a searched tile
// more is a factor more configs.
func TestSpacesFitTheHost(t *testing.T) {
	for _, v := range []Variant{VariantAGMM, VariantMatmulRS} {
		s := v.Space()
		if err := s.CheckSize(); err != nil {
			t.Errorf("%v: %d configs: %v", v, s.Size(), err)
		}
	}
}

// Both kernels offer every searched tile, and a fused impl parses into its
// tile.
func TestFusedImpls(t *testing.T) {
	for _, kernel := range Variants {
		p, _ := kernel.Space().Param(ParamImpl)
		if len(p.Values) != 1+len(hopper.Searched) {
			t.Fatalf("%s impls %v", kernel, p.Values)
		}
		cfg := with(kernel, map[string]space.Value{ParamImpl: space.Str(fused0)})
		if cfg.Impl != ImplFused || cfg.Tile.String() != hopper.Searched[0] || !cfg.Tile.BKMajor {
			t.Fatalf("%s parsed %+v", kernel, cfg)
		}
	}
}

// ppS5 is a searched tile with room beside its stages for a peer's
// partials of a tile (hopper.Tile.WithPeerBuffers).
const ppS5 = ImplFused + ":128x128:s5:c2:g4:pp"

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name    string
		kernel  Variant
		set     map[string]space.Value
		m, n, k int
		world   int
		wantErr string // "" when valid
	}{
		{"agmm sm copy", VariantAGMM, map[string]space.Value{ParamCopy: space.Str(CopySM), ParamCopyBlocks: space.Int(16), ParamSMReserve: space.Int(16)}, 8192, 3584, 8192, 4, ""},
		{"sm copy needs 16-byte rows", VariantAGMM, map[string]space.Value{ParamCopy: space.Str(CopySM)}, 8192, 3584, 1001, 4, "multiple of 16 bytes"},
		{"ce copy with odd k", VariantAGMM, nil, 8192, 3584, 1001, 4, ""},
		{"ce copies use no blocks", VariantAGMM, map[string]space.Value{ParamCopyBlocks: space.Int(16)}, 8192, 3584, 8192, 4, "copy_blocks"},
		{"ce copies reserve no SMs", VariantAGMM, map[string]space.Value{ParamSMReserve: space.Int(8)}, 8192, 3584, 8192, 4, "sm_reserve"},
		{"more chunks than rows", VariantAGMM, map[string]space.Value{ParamChunks: space.Int(8)}, 16, 8, 8, 4, "exceed the 4 rows"},
		{"streams beyond products", VariantAGMM, map[string]space.Value{ParamChunks: space.Int(1), ParamStreams: space.Int(3)}, 8192, 64, 64, 2, "streams 3 exceed the 2 products"},
		{"agmm batch with one peer", VariantAGMM, map[string]space.Value{ParamBatch: space.Int(1)}, 8192, 64, 64, 2, "one peer"},
		{"agmm batch on 4", VariantAGMM, map[string]space.Value{ParamBatch: space.Int(1)}, 8192, 64, 64, 4, ""},
		{"matmulrs odd n", VariantMatmulRS, nil, 1002, 999, 1001, 2, ""},
		{"matmulrs batch on 2", VariantMatmulRS, map[string]space.Value{ParamBatch: space.Int(1)}, 8192, 64, 64, 2, ""},
		{"batch cannot push by gemm", VariantMatmulRS, map[string]space.Value{ParamBatch: space.Int(1), ParamPush: space.Str(PushGEMM)}, 8192, 64, 64, 4, "push=gemm"},
		{"one rank has nothing to overlap", VariantMatmulRS, nil, 64, 64, 64, 1, "no communication"},
		{"one rank's pipeline, one chunk", VariantMatmulRS, map[string]space.Value{ParamChunks: space.Int(1)}, 64, 64, 64, 1, ""},
		{"one rank's pipeline pushes nothing", VariantMatmulRS, map[string]space.Value{ParamChunks: space.Int(1), ParamPush: space.Str(PushGEMM)}, 64, 64, 64, 1, "pushes nothing"},
		{"one rank's pipeline reduces nothing", VariantMatmulRS, map[string]space.Value{ParamChunks: space.Int(1), ParamReduceBlocks: space.Int(264)}, 64, 64, 64, 1, "runs no reduction"},
		{"two ranks' pipeline pushes by gemm", VariantMatmulRS, map[string]space.Value{ParamPush: space.Str(PushGEMM), ParamReduceBlocks: space.Int(264)}, 8192, 64, 64, 2, ""},
		{"fused agmm", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0)}, 8192, 3584, 8192, 4, ""},
		{"fused agmm, odd m, 8 chunks, push", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0), ParamChunks: space.Int(8), ParamDirection: space.Str(DirPush)}, 1002, 1096, 520, 2, ""},
		{"fused TMA rows need k%8", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0)}, 8192, 3584, 1001, 4, "multiple of 8"},
		{"fused needs n%8", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0)}, 8192, 3583, 8192, 4, "n a multiple of 8"},
		{"fused copies by copy engine only", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0), ParamCopy: space.Str(CopySM)}, 8192, 3584, 8192, 4, "copy engines only"},
		{"fused ignores streams", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0), ParamStreams: space.Int(2)}, 8192, 3584, 8192, 4, "only their defaults"},
		{"fused ignores algo", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0), ParamAlgo: space.Int(1)}, 8192, 3584, 8192, 4, "only their defaults"},
		{"fused agmm reserves no SMs", VariantAGMM, map[string]space.Value{ParamImpl: space.Str(fused0), ParamSMReserve: space.Int(16)}, 8192, 3584, 8192, 4, "sm_reserve"},
		{"fused matmulrs", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0)}, 8192, 3584, 8192, 4, ""},
		{"fused matmulrs reserves SMs for the reductions", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0), ParamSMReserve: space.Int(16), ParamReduceBlocks: space.Int(64)}, 8192, 3584, 8192, 4, ""},
		{"fused matmulrs, 8 chunks on 8 ranks", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0), ParamChunks: space.Int(8)}, 8192, 3584, 8192, 8, ""},
		{"fused matmulrs, epilogue stores over NVLink", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0), ParamPush: space.Str(PushGEMM)}, 8192, 3584, 8192, 4, ""},
		{"fused matmulrs needs n%8", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0)}, 1002, 999, 1000, 2, "n a multiple of 8"},
		{"epilogue reduction", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0), ParamReduce: space.Str(ReduceEpilogue), ParamPush: space.Str(PushGEMM)}, 8192, 3584, 8192, 4, ""},
		{"epilogue reduction needs the fused GEMM", VariantMatmulRS, map[string]space.Value{ParamReduce: space.Str(ReduceEpilogue)}, 8192, 3584, 8192, 4, "impl=fused"},
		{"epilogue reduction runs no reduction kernel", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0), ParamReduce: space.Str(ReduceEpilogue), ParamReduceBlocks: space.Int(64)}, 8192, 3584, 8192, 4, "reduce_blocks"},
		{"epilogue reduction reserves no SMs", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0), ParamReduce: space.Str(ReduceEpilogue), ParamSMReserve: space.Int(8)}, 8192, 3584, 8192, 4, "sm_reserve"},
		{"epilogue reduction needs whole tiles per rank", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(fused0), ParamReduce: space.Str(ReduceEpilogue)}, 2 * 1000, 3584, 8192, 2, "wait on a peer"},
		// 4 peer tile rows of 512 (a cluster of two 256-row tiles) against groups of 8.
		{"epilogue reduction needs the peers' tile rows in whole groups", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(ImplFused + ":256x128:s4:c2:g8:cl2"), ParamReduce: space.Str(ReduceEpilogue)}, 4096, 1792, 4096, 2, "swizzle groups"},
		{"the same tile where the peers' rows fill a group", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(ImplFused + ":256x128:s4:c2:g8:cl2"), ParamReduce: space.Str(ReduceEpilogue)}, 8192, 3584, 8192, 2, ""},
		{"push=none on a tile with room for the peer's partials", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(ppS5), ParamReduce: space.Str(ReduceEpilogue), ParamPush: space.Str(PushNone)}, 8192, 3584, 8192, 2, ""},
		{"push=none needs the epilogue's reduction", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(ppS5), ParamPush: space.Str(PushNone)}, 8192, 3584, 8192, 2, "reduce=epilogue"},
		{"push=none needs room beside six stages", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(ImplFused + ":128x128:s6:c2:g8:pp"), ParamReduce: space.Str(ReduceEpilogue), ParamPush: space.Str(PushNone)}, 8192, 3584, 8192, 2, "no room"},
		{"push=none needs room for three peers' partials", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(ppS5), ParamReduce: space.Str(ReduceEpilogue), ParamPush: space.Str(PushNone)}, 8192, 3584, 8192, 4, "no room"},
		{"a cluster tile of 256 rows at 4096 (8 peer rows, groups of 4)", VariantMatmulRS, map[string]space.Value{ParamImpl: space.Str(ImplFused + ":128x256:s4:c2:g4:cl2"), ParamReduce: space.Str(ReduceEpilogue)}, 4096, 1792, 4096, 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.kernel.Validate(with(c.kernel, c.set), problem(t, c.m, c.n, c.k, c.world))
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one saying %q", err, c.wantErr)
			}
		})
	}
}

func TestParseProblemAndConfig(t *testing.T) {
	skipEnumerationUnderRace(t)
	for _, c := range []struct {
		shape   space.Shape
		dtype   string
		world   int
		wantErr string
	}{
		{space.Shape{"m": 8192, "n": 3584, "k": 8192}, "bf16", 4, ""},
		{space.Shape{"m": 8192, "n": 3584, "k": 8192}, "f16", 8, ""},
		{space.Shape{"m": 8192, "n": 3584, "k": 8192}, "f32", 4, "bf16 or f16"},
		{space.Shape{"m": 8190, "n": 3584, "k": 8192}, "bf16", 4, "not divisible by world 4"},
		{space.Shape{"m": 8192, "n": 3584, "k": 8192}, "bf16", 9, "world 9"},
		{space.Shape{"m": 8192, "n": 3584}, "bf16", 4, "want m="},
	} {
		_, err := ParseProblem(space.Problem{Shape: c.shape, Dtype: c.dtype}, c.world)
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("ParseProblem(%v, %s, %d) = %v, want error %q", c.shape, c.dtype, c.world, err, c.wantErr)
		}
	}
	for _, kernel := range Variants {
		n := 0
		for _, c := range kernel.Space().Enumerate() {
			if _, err := kernel.ParseConfig(c); err != nil {
				t.Fatalf("%s: a config of the space does not parse: %v", kernel, err)
			}
			n++
		}
		if kernel == VariantMatmulRS {
			// A config cached before reduce existed ran the reduction kernel.
			old := kernel.Default()
			delete(old, ParamReduce)
			if c, err := kernel.ParseConfig(old); err != nil || c.Reduce != ReduceKernel {
				t.Errorf("a config without reduce: %+v, %v; want reduce=%s", c, err, ReduceKernel)
			}
		}
		bad := kernel.Default()
		bad["bogus"] = space.Int(1)
		delete(bad, ParamAlgo)
		if _, err := kernel.ParseConfig(bad); err == nil || !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), "algo") {
			t.Errorf("%s: ParseConfig of a config with an unknown and a missing parameter: %v", kernel, err)
		}
	}
}

// TestFlagWaits: flags group by kind and chunk, each source on its own
// bit, source q's flag at First + q*Stride; a non-flag or a flag listed
// twice is refused.
func TestFlagWaits(t *testing.T) {
	for _, c := range []struct {
		name string
		idx  []int
		want []FlagWait
		bad  bool
	}{
		{"none", nil, nil, false},
		{"a pull's ready flag", []int{ReadyFlag(1)}, []FlagWait{{ReadyFlag(0), 1, 1 << 1}}, false},
		{"the last rank's ready flag", []int{ReadyFlag(MaxWorld - 1)}, []FlagWait{{ReadyFlag(0), 1, 1 << (MaxWorld - 1)}}, false},
		{"one partial", []int{PartialFlag(3, 2)}, []FlagWait{{PartialFlag(0, 2), MaxChunks, 1 << 3}}, false},
		{"every rank's partial of a chunk", []int{PartialFlag(0, 5), PartialFlag(1, 5), PartialFlag(2, 5), PartialFlag(3, 5)},
			[]FlagWait{{PartialFlag(0, 5), MaxChunks, 0b1111}}, false},
		{"a batched step's peers, out of order", []int{PartialFlag(7, 0), PartialFlag(2, 0)},
			[]FlagWait{{PartialFlag(0, 0), MaxChunks, 1<<7 | 1<<2}}, false},
		{"two chunks", []int{PartialFlag(1, 0), PartialFlag(1, 1), PartialFlag(2, 0)},
			[]FlagWait{{PartialFlag(0, 0), MaxChunks, 0b110}, {PartialFlag(0, 1), MaxChunks, 0b10}}, false},
		{"kinds apart", []int{StartFlag(4), ReadyFlag(4), PartialFlag(4, 7)},
			[]FlagWait{{StartFlag(0), 1, 1 << 4}, {ReadyFlag(0), 1, 1 << 4}, {PartialFlag(0, 7), MaxChunks, 1 << 4}}, false},
		{"twice", []int{ReadyFlag(1), ReadyFlag(1)}, nil, true},
		{"negative", []int{-1}, nil, true},
		{"past the flags", []int{flagCount}, nil, true},
	} {
		got, err := FlagWaits(c.idx)
		if c.bad != (err != nil) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, %v; want %v (error: %v)", c.name, got, err, c.want, c.bad)
		}
		// Each group's flags are the ones asked for.
		n := 0
		for _, w := range got {
			for q := 0; q < MaxWorld; q++ {
				if w.Sources&(1<<q) != 0 {
					n++
					if i := w.First + q*w.Stride; !slices.Contains(c.idx, i) {
						t.Errorf("%s: source %d's flag %d was not asked for", c.name, q, i)
					}
				}
			}
		}
		if err == nil && n != len(c.idx) {
			t.Errorf("%s: %d flags in the groups, %d asked for", c.name, n, len(c.idx))
		}
	}
	// Every flag of every rank, alone.
	for src := 0; src < MaxWorld; src++ {
		is := []int{ReadyFlag(src), StartFlag(src)}
		for c := 0; c < MaxChunks; c++ {
			is = append(is, PartialFlag(src, c))
		}
		for _, i := range is {
			w, err := FlagWaits([]int{i})
			if err != nil || len(w) != 1 || w[0].Sources != 1<<src || w[0].First+src*w[0].Stride != i {
				t.Errorf("flag %d of rank %d: %v, %v", i, src, w, err)
			}
		}
	}
}

func TestLayout(t *testing.T) {
	seen := map[int]string{}
	claim := func(i int, what string) {
		if i < 0 || (i+1)*FlagStride > PayloadOffset {
			t.Errorf("flag %s at index %d is outside the flag area", what, i)
		}
		if other, dup := seen[i]; dup {
			t.Errorf("flag %s shares index %d with %s", what, i, other)
		}
		seen[i] = what
	}
	for src := 0; src < MaxWorld; src++ {
		claim(ReadyFlag(src), fmt.Sprintf("ready %d", src))
		claim(StartFlag(src), fmt.Sprintf("start %d", src))
		for c := 0; c < MaxChunks; c++ {
			claim(PartialFlag(src, c), fmt.Sprintf("partial %d/%d", src, c))
		}
	}
	if PayloadOffset%4096 != 0 {
		t.Errorf("PayloadOffset %d is not page aligned", PayloadOffset)
	}
	p := problem(t, 1002, 999, 8, 2)
	if s := SlotElems(p); s%8 != 0 || s < 501*999 {
		t.Errorf("SlotElems = %d: not a 16-byte multiple of at least the rows", s)
	}
	if got, want := VariantMatmulRS.SymmetricBytes(p), int64(PayloadOffset)+2*SlotElems(p)*2; got != want {
		t.Errorf("matmulrs region %d, want %d", got, want)
	}
	if got, want := VariantAGMM.SymmetricBytes(p), int64(PayloadOffset)+1002*8*2; got != want {
		t.Errorf("agmm region %d, want %d", got, want)
	}
}

// TestShardInPlace: the cases of python/tests/test_gemm.py's
// test_shard_in_place (the parity test samples the rest).
func TestShardInPlace(t *testing.T) {
	tile := space.Str(ImplFused + ":128x224:s4:c2:g8")
	push := space.Str(DirPush)
	for _, tc := range []struct {
		name           string
		set            map[string]space.Value
		m, world, rank int
		want           bool
	}{
		{"pulling, peers read the shard from the buffer", map[string]space.Value{ParamDirection: space.Str(DirPull)}, 4096, 2, 1, false},
		{"the pipeline's products take any rows", map[string]space.Value{ParamDirection: push}, 999, 3, 2, true},
		{"fused, whole tiles", map[string]space.Value{ParamDirection: push, ParamImpl: tile}, 4096, 2, 1, true},
		{"fused, tile 2 holds both ranks' rows", map[string]space.Value{ParamDirection: push, ParamImpl: tile}, 2 * 328, 2, 1, false},
		{"fused, rank 0's last tile too", map[string]space.Value{ParamDirection: push, ParamImpl: tile}, 2 * 328, 2, 0, false},
		{"fused, shard starting mid-tile", map[string]space.Value{ParamDirection: push, ParamImpl: tile}, 2*256 + 2, 2, 1, false},
		{"fused, the last rank's tail tile", map[string]space.Value{ParamDirection: push, ParamImpl: tile}, 3 * 320, 3, 2, true},
		{"fused, rank 1 of 3 at row 320", map[string]space.Value{ParamDirection: push, ParamImpl: tile}, 3 * 320, 3, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problem(t, tc.m, 1792, 4096, tc.world)
			if got := ShardInPlace(with(VariantAGMM, tc.set), p, tc.rank); got != tc.want {
				t.Errorf("ShardInPlace = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestFitDefault: the default runs as it is where Validate takes it, and
// otherwise with fewer chunks (one rank; ranks holding fewer rows); an
// agmm of one rank pushes, reading A in place.
func TestFitDefault(t *testing.T) {
	for _, tc := range []struct {
		kernel     Variant
		m, world   int
		wantChunks int64
		changed    map[string]space.Value // besides chunks, what differs from Default
	}{
		{VariantAGMM, 8192, 2, 2, nil},
		{VariantMatmulRS, 8192, 4, 2, nil},
		{VariantAGMM, 8192, 1, 1, map[string]space.Value{ParamDirection: space.Str(DirPush)}},
		{VariantMatmulRS, 8192, 1, 1, nil},
		{VariantAGMM, 4, 4, 1, nil}, // one row per rank
		{VariantMatmulRS, 4, 4, 1, nil},
	} {
		c, err := tc.kernel.FitDefault(problem(t, tc.m, 3584, 8192, tc.world))
		if err != nil {
			t.Errorf("%s m=%d world %d: %v", tc.kernel, tc.m, tc.world, err)
			continue
		}
		if got := c[ParamChunks].Int; got != tc.wantChunks {
			t.Errorf("%s m=%d world %d: chunks %d, want %d", tc.kernel, tc.m, tc.world, got, tc.wantChunks)
		}
		for name, v := range tc.kernel.Default() {
			if want, ok := tc.changed[name]; ok {
				v = want
			}
			if name != ParamChunks && c[name] != v {
				t.Errorf("%s m=%d world %d: %s = %v, want %v", tc.kernel, tc.m, tc.world, name, c[name], v)
			}
		}
		p := problem(t, tc.m, 3584, 8192, tc.world)
		if cfg, err := tc.kernel.ParseConfig(c); err != nil || tc.kernel == VariantAGMM && tc.world == 1 && !ShardInPlace(cfg, p, 0) {
			t.Errorf("%s m=%d world %d: %v; a rank alone should read its A in place", tc.kernel, tc.m, tc.world, err)
		}
	}
}

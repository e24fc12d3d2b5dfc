package gpu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/internal/pyplugins"
	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/space"
)

func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func spanJSON(s Span) map[string]any {
	return map[string]any{"owner": s.Owner, "index": s.Index, "start": s.Start, "rows": s.Rows}
}

func spansJSON(ss []Span) []any {
	out := []any{}
	for _, s := range ss {
		out = append(out, spanJSON(s))
	}
	return out
}

func stepsJSON(ss []Step) []any {
	out := []any{}
	for _, s := range ss {
		m := spanJSON(s.Span)
		m["batch"], m["stream"] = s.Batch, s.Stream
		out = append(out, m)
	}
	return out
}

// planJSON is kernel's plan for o in the form python/tests/gemm_answers.py
// writes symmtune.gemm's.
func planJSON(kernel Variant, o Plan) map[string]any {
	if kernel == VariantAGMM {
		p := PlanAG(o)
		pulls := []any{}
		for _, ss := range p.Pulls {
			pulls = append(pulls, spansJSON(ss))
		}
		return map[string]any{"peers": p.Peers, "pulls": pulls, "own": spansJSON(p.Own), "products": stepsJSON(p.Products)}
	}
	p := PlanRS(o)
	return map[string]any{"products": stepsJSON(p.Products), "reduces": spansJSON(p.Reduces)}
}

// TestPlanParity: symmtune.gemm and symmtune.hopper (the Python runtime's
// bindings) and libsymmtune asked directly (for the plans, ShardInPlace
// and the fused plans and tables, which Python does not bind) answer every
// plan of a table, the search spaces, Validate's verdicts on a sample of
// configs and problems (pipelined and fused), the Hopper tile rules on a
// table of names, the fused plans and tables, and the kernel versions
// exactly as this package (and kernels/gemm/hopper) does: the conversions
// lose nothing.
func TestPlanParity(t *testing.T) {
	python := pyplugins.Need(t)
	root, err := pyplugins.Root()
	if err != nil {
		t.Fatal(err)
	}
	var plans []map[string]any
	var want []any
	for _, k := range Variants {
		for world := 1; world <= MaxWorld; world++ {
			for _, per := range []int{1, 7, 1024} {
				for _, chunks := range []int{1, 2, 4, 8} {
					if chunks > per {
						continue
					}
					for streams := 1; streams <= MaxStreams; streams++ {
						for _, batch := range []bool{false, true} {
							for r := 0; r < world; r++ {
								o := Plan{M: world * per, World: world, Rank: r, Chunks: chunks, Streams: streams, Batch: batch}
								plans = append(plans, map[string]any{"kernel": k, "m": o.M, "world": world, "rank": r,
									"chunks": chunks, "streams": streams, "batch": batch})
								want = append(want, planJSON(k, o))
							}
						}
					}
				}
			}
		}
	}
	// Validate on a sample of each space over problems near its limits.
	rng := rand.New(rand.NewPCG(1, 2))
	problems := []Problem{}
	for _, w := range []int{1, 2, 3, 4, 8} {
		for _, d := range [][3]int{{8192, 3584, 8192}, {w, 16, 12}, {2 * w, 8, 8}, {16 * w, 24, 4}, {129 * w, 1096, 520}, {64 * w, 3583, 8192}} {
			problems = append(problems, Problem{World: w, ElemSize: 2, Dims: gemm.Dims{M: d[0], N: d[1], K: d[2]}})
		}
	}
	var configs []map[string]any
	var verdicts []any
	for _, k := range Variants {
		sp := k.Space()
		impl, _ := sp.Param(ParamImpl)
		for i := 0; i < 600; i++ {
			c := space.Config{}
			for _, p := range sp.Params {
				c[p.Name] = p.Values[rng.IntN(len(p.Values))]
			}
			if i%2 == 1 {
				// Near the default, with a fused impl: a uniform draw
				// rarely gets past the rules of the parameters a fused
				// config leaves at their defaults.
				c = k.Default()
				for _, p := range sp.Params {
					if rng.IntN(4) == 0 {
						c[p.Name] = p.Values[rng.IntN(len(p.Values))]
					}
				}
				c[ParamImpl] = impl.Values[1+rng.IntN(len(impl.Values)-1)]
			}
			cfg, err := k.ParseConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			p := problems[rng.IntN(len(problems))]
			msg := "ok"
			if err := k.Validate(cfg, p); err != nil {
				msg = err.Error()
			} else if k == VariantAGMM {
				msg += " in place:"
				for r := range p.World {
					msg += fmt.Sprintf(" %t", ShardInPlace(cfg, p, r))
				}
			}
			configs = append(configs, map[string]any{"kernel": k, "config": c, "m": p.M, "n": p.N, "k": p.K, "world": p.World})
			verdicts = append(verdicts, msg)
		}
	}
	// The default each kernel fits to each problem.
	var defaults []map[string]any
	var fitted []any
	for _, k := range Variants {
		for _, p := range problems {
			defaults = append(defaults, map[string]any{"kernel": k, "m": p.M, "n": p.N, "k": p.K, "world": p.World})
			c, err := k.FitDefault(p)
			if err != nil {
				fitted = append(fitted, err.Error())
			} else {
				fitted = append(fitted, jsonOf(t, c))
			}
		}
	}
	tiles, tileVerdicts := tileQueries(rng)
	fusedQs, fusedWant := fusedQueries(rng)
	q, err := json.Marshal(map[string]any{"plans": plans, "configs": configs, "defaults": defaults, "tiles": tiles, "fused": fusedQs, "spaces": Variants})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join(root, "python", "tests", "gemm_answers.py"))
	cmd.Env = append(os.Environ(), pyplugins.EnvLib+"="+pyplugins.Library(t))
	cmd.Stdin = bytes.NewReader(q)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python gemm_answers: %v\n%s", err, stderr.String())
	}
	var got struct {
		Plans    []any             `json:"plans"`
		Configs  []any             `json:"configs"`
		Defaults []any             `json:"defaults"`
		Tiles    []string          `json:"tiles"`
		Fused    []any             `json:"fused"`
		Spaces   map[string][]any  `json:"spaces"`
		Versions map[string]string `json:"versions"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python answer: %v", err)
	}
	if len(got.Plans) != len(plans) || len(got.Configs) != len(configs) || len(got.Defaults) != len(defaults) || len(got.Tiles) != len(tiles) || len(got.Fused) != len(fusedQs) {
		t.Fatalf("python answered %d plans, %d configs, %d defaults, %d tiles and %d fused plans of %d, %d, %d, %d and %d", len(got.Plans), len(got.Configs), len(got.Defaults), len(got.Tiles), len(got.Fused), len(plans), len(configs), len(defaults), len(tiles), len(fusedQs))
	}
	bad := 0
	for i := range plans {
		if w := jsonOf(t, want[i]); !reflect.DeepEqual(got.Plans[i], w) && bad < 5 {
			bad++
			t.Errorf("plan %v:\n  go:     %v\n  python: %v", plans[i], w, got.Plans[i])
		}
	}
	for i := range configs {
		if got.Configs[i] != verdicts[i] && bad < 10 {
			bad++
			t.Errorf("validate %v:\n  go:     %v\n  python: %v", configs[i], verdicts[i], got.Configs[i])
		}
	}
	for i := range defaults {
		if !reflect.DeepEqual(got.Defaults[i], fitted[i]) && bad < 15 {
			bad++
			t.Errorf("default for %v:\n  go:     %v\n  python: %v", defaults[i], fitted[i], got.Defaults[i])
		}
	}
	for i := range tiles {
		if got.Tiles[i] != tileVerdicts[i] && bad < 15 {
			bad++
			t.Errorf("tile %q:\n  go:     %v\n  python: %v", tiles[i], tileVerdicts[i], got.Tiles[i])
		}
	}
	for i := range fusedQs {
		if w := jsonOf(t, fusedWant[i]); !reflect.DeepEqual(got.Fused[i], w) && bad < 20 {
			bad++
			t.Errorf("fused plan %v:\n  go:     %v\n  python: %v", fusedQs[i], w, got.Fused[i])
		}
	}
	fused := 0
	for i, c := range configs {
		if strings.HasPrefix(c["config"].(space.Config)[ParamImpl].Str, ImplFused+":") && strings.HasPrefix(verdicts[i].(string), "ok") {
			fused++
		}
	}
	for _, k := range Variants {
		if w := jsonOf(t, k.Space().Params); !reflect.DeepEqual(jsonOf(t, got.Spaces[k.String()]), w) {
			t.Errorf("space %s:\n  go:     %v\n  python: %v", k, w, got.Spaces[k.String()])
		}
		if v := k.KernelVersion(); got.Versions[k.String()] != v {
			t.Errorf("kernel version of %s: go %s, python %s", k, v, got.Versions[k.String()])
		}
	}
	t.Logf("%d plans, %d configs (%d valid fused), %d fitted defaults, %d tile names, %d fused plans and tables, 2 spaces and kernel versions agree", len(plans), len(configs), fused, len(defaults), len(tiles), len(fusedQs))
}

// fusedQueries are problems of the fused GEMM, each with Go's PlanFusedAG
// and PlanFusedRS for it and the RSTable bytes (hex) of the latter with
// made-up addresses: the tables symmtune.torch uploads for the kernel.
func fusedQueries(rng *rand.Rand) (qs []map[string]any, want []any) {
	for i := 0; i < 300; i++ {
		world := 1 + rng.IntN(MaxWorld)
		rows := []int{1, 3, 64, 100, 128, 300, 1024}[rng.IntN(7)]
		chunks := []int{1, 2, 4, 8}[rng.IntN(4)]
		bm := []int{64, 128, 256}[rng.IntN(3)]
		bn := []int{128, 192, 224, 256}[rng.IntN(4)]
		tile := bm * (1 + rng.IntN(2))
		m, n, r := world*rows, 8*(1+rng.IntN(600)), rng.IntN(world)
		if chunks > rows || chunks*world > maxRSChunks {
			continue
		}
		ag := PlanFusedAG(m, world, r, chunks, tile, false)
		rs := PlanFusedRS(m, n, world, r, chunks, bm, bn, tile)
		dst, flag := make([]uint64, world), make([]uint64, len(rs.Owner))
		for q := range dst {
			dst[q] = 0x7f0000000000 + uint64(q)<<32 + uint64(r)
		}
		for j := range flag {
			flag[j] = 0x7e0000000000 + uint64(j)*FlagStride
		}
		var ep RSEpilogue
		if i%2 == 1 { // half the tables with the epilogue's reduction
			ep = RSEpilogue{Me: r, World: world, SlotBytes: uint64(2 * rows * n), Flags: 0x7d0000000000 + uint64(r)<<20}
		}
		tab, err := rs.Table(dst, flag, ep)
		if err != nil {
			panic(err)
		}
		qs = append(qs, map[string]any{"m": m, "n": n, "world": world, "rank": r, "chunks": chunks, "bm": bm, "bn": bn,
			"rows_per_tile": tile, "dst": dst, "flag": flag,
			"epilogue": map[string]any{"me": ep.Me, "world": ep.World, "slot_bytes": ep.SlotBytes, "flags": ep.Flags}})
		want = append(want, map[string]any{
			"ag":       map[string]any{"order": ag.Order, "table": ag.Table()},
			"rs":       map[string]any{"order": rs.Order, "bounds": rs.Bounds, "owner": rs.Owner, "index": rs.Index, "expect": rs.Expect},
			"rs_table": fmt.Sprintf("%x", tab),
		})
	}
	return qs, want
}

// tileQueries are tile names, Searched's, odd and malformed ones and a
// sample of fields in and out of what Check accepts, each with Go's answer:
// ParseTile's error, or the canonical name and Check's verdict.
func tileQueries(rng *rand.Rand) (names, answers []string) {
	names = append([]string{"", "128", "128x", "128x256x64", "128x256:q4", "128x256:s", "128x256:sfour", "128x256:",
		"128x256::s4", "+128x256", "0128x256", "-64x128", "128X256", " 128x256", "128x 256", "128x256:cl", "128x256:c",
		"128x256:cl2x", "128x256:s+4", "128x256:s-4", "128x256:g0", "128x128:pp", "64x256:s5:c2:g8:pp:bn",
		"99999999999999999999x128", "128x256:s99999999999999999999", "128x256:s9223372036854775807",
		"128x256:s4:s5:c1:c2", "256x256:c2:cl1", "128x256:bn:cl2", "128x128:pp:cl2", "128x128:cl3"}, hopper.Searched...)
	pick := func(vs ...int) int { return vs[rng.IntN(len(vs))] }
	for range 400 {
		name := fmt.Sprintf("%dx%d", pick(-64, 0, 64, 96, 128, 192, 256, 320, 512), pick(32, 64, 96, 128, 192, 224, 256, 512))
		for _, part := range []string{
			fmt.Sprintf("s%d", pick(0, 1, 2, 3, 4, 6, 8, 12)), fmt.Sprintf("c%d", pick(0, 1, 2, 3)),
			fmt.Sprintf("g%d", pick(-1, 0, 1, 8)), "pp", "bn", fmt.Sprintf("cl%d", pick(0, 1, 2, 3)),
		} {
			if rng.IntN(2) == 0 {
				name += ":" + part
			}
		}
		names = append(names, name)
	}
	for _, name := range names {
		tl, err := hopper.ParseTile(name)
		switch {
		case err != nil:
			answers = append(answers, err.Error())
		case tl.Check(hopper.SmemLimit) != nil:
			answers = append(answers, tl.String()+" "+tl.Check(hopper.SmemLimit).Error())
		default:
			answers = append(answers, tl.String()+" ok "+strings.Join(tl.Options(hopper.Format16(true)), " "))
		}
	}
	return names, answers
}

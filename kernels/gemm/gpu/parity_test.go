package gpu

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/symmtune/symmtune/internal/pyplugins"
	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/space"
)

// TestDefaultsJSON holds defaults.json, which symmtune.torch reads as the
// plugins' untuned config, equal to Default.
func TestDefaultsJSON(t *testing.T) {
	b, err := os.ReadFile("defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("defaults.json: %v", err)
	}
	for _, k := range []string{AGMM, MatmulRS} {
		want := jsonOf(t, Default(k))
		if !reflect.DeepEqual(got[k], want) {
			t.Errorf("defaults.json %s = %v, Default(%s) = %v", k, got[k], k, want)
		}
	}
}

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
func planJSON(kernel string, o Plan) map[string]any {
	if kernel == AGMM {
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

// TestPlanParity: symmtune.gemm (the Python runtime's port) answers every
// plan of a table, the search spaces and Validate's verdicts on a sample of
// configs and problems exactly as this package does.
func TestPlanParity(t *testing.T) {
	python := pyplugins.Need(t)
	root, err := pyplugins.Root()
	if err != nil {
		t.Fatal(err)
	}
	var plans []map[string]any
	var want []any
	for _, k := range []string{AGMM, MatmulRS} {
		for world := 1; world <= MaxWorld; world++ {
			for _, per := range []int{1, 7, 1024} {
				for _, chunks := range []int{1, 2, 4, 8} {
					if chunks > per {
						continue
					}
					for streams := 1; streams <= maxStreamsPlan; streams++ {
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
		for _, d := range [][3]int{{8192, 3584, 8192}, {w, 16, 12}, {2 * w, 8, 8}, {16 * w, 24, 4}} {
			problems = append(problems, Problem{World: w, ElemSize: 2, Dims: gemm.Dims{M: d[0], N: d[1], K: d[2]}})
		}
	}
	var configs []map[string]any
	var verdicts []any
	for _, k := range []string{AGMM, MatmulRS} {
		sp := Space(k)
		for i := 0; i < 300; i++ {
			c := space.Config{}
			for _, p := range sp.Params {
				c[p.Name] = p.Values[rng.IntN(len(p.Values))]
			}
			cfg, err := ParseConfig(k, c)
			if err != nil {
				t.Fatal(err)
			}
			p := problems[rng.IntN(len(problems))]
			msg := "ok"
			if err := Validate(k, cfg, p); err != nil {
				msg = err.Error()
			}
			configs = append(configs, map[string]any{"kernel": k, "config": c, "m": p.M, "n": p.N, "k": p.K, "world": p.World})
			verdicts = append(verdicts, msg)
		}
	}
	q, err := json.Marshal(map[string]any{"plans": plans, "configs": configs, "spaces": []string{AGMM, MatmulRS}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join(root, "python", "tests", "gemm_answers.py"))
	cmd.Stdin = bytes.NewReader(q)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python gemm_answers: %v\n%s", err, stderr.String())
	}
	var got struct {
		Plans   []any            `json:"plans"`
		Configs []any            `json:"configs"`
		Spaces  map[string][]any `json:"spaces"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python answer: %v", err)
	}
	if len(got.Plans) != len(plans) || len(got.Configs) != len(configs) {
		t.Fatalf("python answered %d plans and %d configs of %d and %d", len(got.Plans), len(got.Configs), len(plans), len(configs))
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
	for _, k := range []string{AGMM, MatmulRS} {
		if w := jsonOf(t, Space(k).Params); !reflect.DeepEqual(jsonOf(t, got.Spaces[k]), w) {
			t.Errorf("space %s:\n  go:     %v\n  python: %v", k, w, got.Spaces[k])
		}
	}
	t.Logf("%d plans, %d configs, 2 spaces agree", len(plans), len(configs))
}

// maxStreamsPlan is the largest streams value of the space (maxStreams,
// which untagged code cannot see).
const maxStreamsPlan = 3

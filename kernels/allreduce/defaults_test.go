package allreduce

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
)

// golden is testdata/default-golden.json: messages and the default each
// gets.
type golden struct {
	Cases []struct {
		N          int64 `json:"n"`
		Elt, World int
		Config     map[string]any
	}
}

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/default-golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil || len(g.Cases) == 0 {
		t.Fatalf("golden: %v", err)
	}
	return g
}

// TestCUDADefaultGolden holds Default to testdata/default-golden.json, the
// cases python/tests/test_kernels.py asks libsymmtune for too.
func TestCUDADefaultGolden(t *testing.T) {
	g := readGolden(t)
	for _, c := range g.Cases {
		got := Default(c.N, c.Elt, c.World)
		want := space.Config{}
		for k, v := range c.Config {
			if s, ok := v.(string); ok {
				want[k] = space.Str(s)
			} else {
				want[k] = space.Int(int64(v.(float64)))
			}
		}
		if got.String() != want.String() {
			t.Errorf("n=%d elt=%d world=%d: %s, want %s", c.N, c.Elt, c.World, got, want)
		}
		// Validate's rule that every block has work (the rest are fixed
		// by the table's values; TestDefaultsValidate runs Validate itself
		// where the cuda tag builds it).
		work := workVectors(got["algorithm"].Str, c.N, c.Elt, c.World)
		if b := got["blocks"].Int; b > 1 && (b-1)*got["threads"].Int*got["unroll"].Int >= work {
			t.Errorf("n=%d world=%d: %s leaves blocks without work (%d vectors)", c.N, c.World, got, work)
		}
	}
}

// TestCUDADefaultNearTuned: on every recorded exhaustive landscape (2 and
// 4 H200s, 4 KiB to 16 MiB of bf16), the default runs within 1.3x of the
// best config measured. The landscapes were recorded before the Lamport
// algorithms existed: where the default is one, the landscape
// cannot judge it (bench/results/2026-11-28-h100-lamport-decode.md does);
// the test says so and needs the rest to hold.
func TestCUDADefaultNearTuned(t *testing.T) {
	files, _ := triallog.Glob("../../tuner/testdata/landscape-cuda-allreduce-w*-n*.jsonl")
	if len(files) < 10 {
		t.Fatalf("%d landscapes found", len(files))
	}
	judged, skipped := 0, 0
	for _, f := range files {
		lf, err := triallog.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		var world int
		var shape string
		best, scores := 0.0, map[string]float64{}
		for _, l := range lf.Results {
			if l.Status != triallog.StatusOK || l.Dtype != "bf16" {
				continue
			}
			if _, ok := l.Config["stages"]; !ok {
				l.Config["stages"] = space.Int(1) // recorded before the parameter existed
			}
			world, shape = l.World, l.Shape
			score := l.Score()
			if s, ok := scores[l.Config.String()]; !ok || score < s {
				scores[l.Config.String()] = score
			}
			if best == 0 || score < best {
				best = score
			}
		}
		sh, err := space.ParseShape(shape, []string{"n"})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		d := Default(sh["n"], 2, world)
		s, ok := scores[d.String()]
		if IsLamport(d["algorithm"].Str) && !ok {
			skipped++
			t.Logf("%s: the default %s is newer than the landscape", filepath.Base(f), d)
			continue
		}
		judged++
		switch {
		case !ok:
			t.Errorf("%s: the default %s was not measured", filepath.Base(f), d)
		case s > 1.3*best:
			t.Errorf("%s: default %s takes %.1f µs, %.2fx the best %.1f", filepath.Base(f), d, s, s/best, best)
		default:
			t.Logf("%s: default %.2fx the best", filepath.Base(f), s/best)
		}
	}
	// Lamport's rules cover 4 MiB at most, on up to 4 ranks (measured in
	// the graphed decode step, not in these older landscapes): the two
	// larger landscapes (16 MiB on 2 and on 4 ranks) judge the rest.
	if judged < 2 {
		t.Errorf("%d landscapes judged the default (%d newer than it): want 2 or more", judged, skipped)
	}
}

// withRules runs f with kernels/defaults.json replaced by text (a rule
// the file does not hold yet, as a measurement may add).
func withRules(t *testing.T, text string, f func()) {
	t.Helper()
	var r defaultRules
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatal(err)
	}
	saved := rules
	rules = r
	defer func() { rules = saved }()
	f()
}

// twoShotLamportRules: defaults.json with a rule naming two_shot_lamport
// up to 1 MiB on 4 ranks, before the file's own.
func twoShotLamportRules(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	rule := map[string]any{"max_bytes": 1 << 20, "max_world": 4, "algorithm": TwoShotLamport, "Blocks": 64, "Threads": 512, "Unroll": 1}
	m["rules"] = append([]any{rule}, m["rules"].([]any)...)
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDefaultRuleTwoShotLamport: a rule may name two_shot_lamport (the
// lead sets rules after measuring): Default takes it, and shrinks its
// blocks until each has work in one rank's chunk, not the message.
func TestDefaultRuleTwoShotLamport(t *testing.T) {
	withRules(t, twoShotLamportRules(t), func() {
		for _, c := range []struct {
			n      int64
			world  int
			algo   string
			blocks int64
		}{
			{64 * 8192, 4, TwoShotLamport, 32},  // chunks of 16384 vectors: 31 x 512 < 16384 <= 63 x 512
			{16 * 8192, 4, TwoShotLamport, 8},   // chunks of 4096
			{8192, 4, TwoShotLamport, 1},        // chunks of 256
			{64 * 8192, 2, TwoShotLamport, 64},  // chunks of 32768
			{64*8192 + 1, 4, TwoShotLamport, 0}, // past the rule: the file's own two_shot_lamport rule (4 MiB, 4 ranks)
			{2<<20 + 1, 4, TwoShotPush, 0},      // past that one too
			{64 * 8192, 8, TwoShotPush, 0},      // past its ranks
		} {
			d := Default(c.n, 2, c.world)
			if d["algorithm"].Str != c.algo || (c.blocks != 0 && d["blocks"].Int != c.blocks) {
				t.Errorf("n=%d world=%d: Default %s, want %s with %d blocks", c.n, c.world, d, c.algo, c.blocks)
			}
		}
	})
}

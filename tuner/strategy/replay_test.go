package strategy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
)

func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadLandscape(t *testing.T) {
	path := writeLog(t,
		`{"config":{"alg":"two_shot","chunk":4096},"status":"ok","score_us":50,"ranks_us":[50,49],"kernel":"allreduce","world":2,"iters":20}`,
		`{"config":{"alg":"one_shot","chunk":16384},"status":"ok","score_us":40,"ranks_us":[40,40],"kernel":"allreduce","world":2}`,
		``,
		`{"config":{"alg":"one_shot","chunk":1024},"status":"wrong","score_us":null,"ranks_us":[],"kernel":"allreduce","world":2}`,
		`{"config":{"alg":"two_shot","chunk":1024},"status":"invalid","score_us":null,"kernel":"allreduce","world":2}`,
		// A repeat (resumed search) keeps the first measurement; a refined
		// re-measurement is not part of the search and is skipped.
		`{"config":{"alg":"one_shot","chunk":16384},"status":"ok","score_us":10,"kernel":"allreduce","world":2}`,
		`{"config":{"alg":"two_shot","chunk":4096},"status":"ok","score_us":5,"refined":true,"kernel":"allreduce","world":2}`,
	)
	l, err := LoadLandscape(path)
	if err != nil {
		t.Fatal(err)
	}
	wantSpace := space.Space{Params: []space.Param{strParam("alg", "one_shot", "two_shot"), intParam("chunk", 1024, 4096, 16384)}}
	if !reflect.DeepEqual(l.Space, wantSpace) {
		t.Errorf("space %+v, want %+v (ints sorted numerically, strings lexically)", l.Space, wantSpace)
	}
	if l.Default.String() != "alg=two_shot,chunk=4096" {
		t.Errorf("default %s, want the first line's config", l.Default)
	}
	var valid []string
	for _, c := range l.Valid {
		valid = append(valid, c.String())
	}
	if want := []string{"alg=two_shot,chunk=4096", "alg=one_shot,chunk=16384", "alg=one_shot,chunk=1024"}; !reflect.DeepEqual(valid, want) {
		t.Errorf("valid %v, want %v", valid, want)
	}
	if opt, _ := l.Optimum(); opt.ScoreUS != 40 {
		t.Errorf("optimum %v, want 40 (first measurement; refined lines skipped)", opt.ScoreUS)
	}
	missing := space.Config{"alg": space.Str("two_shot"), "chunk": space.Int(16384)}
	if o := l.Lookup(missing); o.OK {
		t.Errorf("a config missing from the log looked up as OK")
	}
	if o := l.Lookup(l.Valid[2]); o.OK {
		t.Errorf("a wrong config looked up as OK")
	}
}

func TestLoadLandscapeErrors(t *testing.T) {
	ok := `{"config":{"a":1},"status":"ok","score_us":1}`
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"not json", []string{ok, `{"config":`}, "line 2"},
		{"no config", []string{ok, `{"status":"ok","score_us":1}`}, "line 2: no config"},
		{"no status", []string{`{"config":{"a":1},"score_us":1}`}, "line 1: no status"},
		{"unknown status", []string{ok, `{"config":{"a":2},"status":"meh"}`}, `line 2: unknown status "meh"`},
		{"ok without score", []string{ok, `{"config":{"a":2},"status":"ok","score_us":null}`}, "line 2: status ok needs"},
		{"float value", []string{ok, `{"config":{"a":2.5},"status":"ok","score_us":1}`}, "line 2"},
		{"other params", []string{ok, `{"config":{"b":2},"status":"ok","score_us":1}`}, "line 2: config has parameters b"},
		{"two jobs", []string{`{"config":{"a":1},"status":"ok","score_us":1,"kernel":"x"}`, `{"config":{"a":2},"status":"ok","score_us":1,"kernel":"y"}`}, "line 2: job"},
		{"mixed types", []string{ok, `{"config":{"a":"x"},"status":"ok","score_us":1}`}, "mixes integers and strings"},
		{"empty", []string{""}, "no trials"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeLog(t, tc.lines...)
			_, err := LoadLandscape(path)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err %v (%T), want *InputError", err, err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want the file name and %q", err, tc.want)
			}
		})
	}
	if _, err := LoadLandscape(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}

// TestLoadLandscapeTornLastLine: a log whose search was killed while
// writing its last line loads without it, as the host and the report read
// it; a torn line in the middle is still an error naming its line.
func TestLoadLandscapeTornLastLine(t *testing.T) {
	ok := `{"config":{"a":1},"status":"ok","score_us":1}` + "\n" + `{"config":{"a":2},"status":"ok","score_us":2}` + "\n"
	torn := `{"config":{"a":3},"status":"o`
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte(ok+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := LoadLandscape(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Valid) != 2 || l.Torn != 3 {
		t.Errorf("%d valid configs, torn line %d; want 2 and line 3", len(l.Valid), l.Torn)
	}
	if err := os.WriteFile(path, []byte(ok+torn+"\n"+ok), 0o644); err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	if _, err := LoadLandscape(path); !errors.As(err, &ie) || !strings.Contains(err.Error(), path+" line 3: ") {
		t.Errorf("torn middle line: error %v, want an *InputError naming line 3", err)
	}
}

// TestLoadLandscapeGzip: a gzipped landscape (name ending in .gz) loads
// and replays as the plain one; damaged gzip data is an *InputError
// naming the file.
func TestLoadLandscapeGzip(t *testing.T) {
	raw, err := os.ReadFile("../testdata/landscape-cuda-allreduce-w4-n32768.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	zb := bytes.NewBuffer(triallog.Gzip(raw))
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" for the plain landscape's contents
	}{
		{"gzipped", zb.Bytes(), ""},
		{"cut short", zb.Bytes()[:zb.Len()-100], "corrupt gzip data: unexpected EOF"},
		{"plain bytes", raw, "corrupt gzip data: gzip: invalid header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, gz := filepath.Join(dir, "l.jsonl"), filepath.Join(dir, "l.jsonl.gz")
			if err := os.WriteFile(plain, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(gz, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := LoadLandscape(gz)
			if tc.want != "" {
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), gz+": "+tc.want) {
					t.Fatalf("error %v (%T), want an *InputError naming %s and %q", err, err, gz, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := LoadLandscape(plain)
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != gz {
				t.Errorf("path %s, want %s", got.Path, gz)
			}
			got.Path = want.Path
			if !reflect.DeepEqual(got, want) {
				t.Fatal("the gzipped landscape differs from the plain one")
			}
			for _, name := range []string{Pattern, Random} {
				a, errA := Replay(got, name, 40, 1)
				b, errB := Replay(want, name, 40, 1)
				if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
					t.Errorf("%s replays as %+v (%v), plain as %+v (%v)", name, a, errA, b, errB)
				}
			}
		})
	}
}

func TestReplayResult(t *testing.T) {
	l := bowl()
	r, err := Replay(l, Pattern, 50, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Strategy != Pattern || r.Seed != 2 || r.TrialsUsed != 50 || r.SpaceSize != 960 || r.ValidConfigs != 960 {
		t.Errorf("result %+v", r)
	}
	if r.BestConfig == nil || r.BestScoreUS < 100 {
		t.Errorf("best %v %v", r.BestScoreUS, r.BestConfig)
	}
	if _, err := Replay(l, "nope", 10, 1); err == nil {
		t.Error("unknown strategy replayed")
	}
}

// liar breaks the Strategy contract, to check that Replay notices.
type liar struct{ out []space.Config }

func (liar) Name() string                          { return "liar" }
func (s liar) Next(_ []Observation) []space.Config { return s.out }
func (liar) Close()                                {}

func TestReplayCatchesContractBreaches(t *testing.T) {
	l := bowl()
	// Replay takes strategies by name; its trial loop, drive, is checked
	// with a liar directly.
	for _, tc := range []struct {
		name string
		out  []space.Config
	}{
		{"duplicate", []space.Config{l.Valid[0], l.Valid[0]}},
		{"invalid", []space.Config{{"a": space.Int(99)}}},
	} {
		_, err := drive(l, liar{tc.out}, 10)
		if !errors.Is(err, errContract) {
			t.Errorf("%s: err %v, want errContract", tc.name, err)
		}
	}
}

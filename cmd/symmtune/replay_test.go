package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// writeReplayLog writes a small landscape: a 6x6 grid of (a, b) with the
// optimum at a=4,b=1, one failed config and the a=5 row invalid (missing,
// plus one explicit "invalid" line).
func writeReplayLog(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for a := 0; a < 5; a++ {
		for c := 0; c < 6; c++ {
			score := 100 + 3*float64((a-4)*(a-4)) + 2*float64((c-1)*(c-1))
			status, s := "ok", fmt.Sprint(score)
			if a == 2 && c == 2 {
				status, s = "hang", "null"
			}
			fmt.Fprintf(&b, `{"config":{"a":%d,"b":%d},"status":%q,"score_us":%s,"ranks_us":[],"kernel":"k","world":2,"iters":20}`+"\n", a, c, status, s)
		}
	}
	b.WriteString(`{"config":{"a":5,"b":0},"status":"invalid","score_us":null,"ranks_us":[],"kernel":"k","world":2}` + "\n")
	path := filepath.Join(t.TempDir(), "landscape.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runReplay(args ...string) (string, error) {
	cmd := newReplayCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestReplayJSON(t *testing.T) {
	path := writeReplayLog(t)
	cases := []struct {
		strategy   string
		budget     int
		wantTrials int
		wantBest   float64 // 0: anything
	}{
		{"exhaustive", 0, 30, 100},
		{"auto", 0, 30, 100},
		{"random", 10, 10, 0},
		{"pattern", 12, 12, 0},
		{"nelder-mead", 12, 12, 0},
	}
	for _, tc := range cases {
		t.Run(tc.strategy, func(t *testing.T) {
			out, err := runReplay("--log", path, "--strategy", tc.strategy, "--budget-trials", fmt.Sprint(tc.budget), "--seed", "3", "--json")
			if err != nil {
				t.Fatalf("replay: %v\n%s", err, out)
			}
			var res strategy.ReplayResult
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&res); err != nil {
				t.Fatalf("output is not one ReplayResult: %v\n%s", err, out)
			}
			if dec.More() {
				t.Fatalf("more than one JSON value in the output:\n%s", out)
			}
			if res.TrialsUsed != tc.wantTrials || res.ValidConfigs != 30 || res.SpaceSize != 36 || res.Seed != 3 {
				t.Errorf("got %+v; want %d trials, 30 valid configs, space 36, seed 3", res, tc.wantTrials)
			}
			if res.BestConfig == nil || res.BestScoreUS < 100 || (tc.wantBest != 0 && res.BestScoreUS != tc.wantBest) {
				t.Errorf("best %g %v, want %g", res.BestScoreUS, res.BestConfig, tc.wantBest)
			}
			if tc.wantBest == 100 && (res.BestConfig["a"] != float64(4) || res.BestConfig["b"] != float64(1)) {
				t.Errorf("best config %v, want a=4 b=1", res.BestConfig)
			}
		})
	}
}

func TestReplayHumanLine(t *testing.T) {
	out, err := runReplay("--log", writeReplayLog(t), "--strategy", "exhaustive")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, "best 100.0 µs") || !strings.Contains(out, "exhaustive") {
		t.Errorf("human output %q: want one line naming the strategy and the best score", out)
	}
}

func TestReplayBadInput(t *testing.T) {
	good := writeReplayLog(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"config":{"a":1},"status":"ok","score_us":1}`+"\n"+`{"config":{"a":2},"status":"sideways","score_us":1}`+"\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no log", []string{"--strategy", "pattern"}, "--log"},
		{"missing file", []string{"--log", filepath.Join(dir, "nope.jsonl")}, "nope.jsonl"},
		{"bad line", []string{"--log", bad}, "bad.jsonl line 2"},
		{"unknown strategy", []string{"--log", good, "--strategy", "annealing"}, "nelder-mead"},
		{"negative budget", []string{"--log", good, "--budget-trials", "-1"}, "budget"},
		{"bad flag value", []string{"--log", good, "--seed", "x"}, "seed"},
		{"unknown flag", []string{"--log", good, "--frobnicate"}, "frobnicate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runReplay(tc.args...)
			var ie *strategy.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err %v (%T), want *strategy.InputError (exit code 2)", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestReplayCommittedLandscape replays a recorded landscape end to end.
func TestReplayCommittedLandscape(t *testing.T) {
	files, _ := triallog.Glob("../../tuner/testdata/landscape-cpu-*.jsonl")
	if len(files) == 0 {
		t.Skip("no recorded landscapes")
	}
	out, err := runReplay("--log", files[0], "--strategy", "pattern", "--budget-trials", "50", "--seed", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res strategy.ReplayResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.TrialsUsed != 50 || res.BestConfig == nil {
		t.Fatalf("replay of %s: %v %+v", files[0], err, res)
	}
}

// TestReplayTornLog: a landscape whose search was killed mid-line replays
// without that line, and says on stderr which line it skipped; stdout
// still holds exactly one JSON object.
func TestReplayTornLog(t *testing.T) {
	path := writeReplayLog(t)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"config":{"a":0,"b":0},"status":"o`)
	f.Close()
	cmd := newReplayCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs([]string{"--log", path, "--strategy", "exhaustive", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var res strategy.ReplayResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.ValidConfigs != 30 || res.BestScoreUS != 100 {
		t.Errorf("stdout %q (%v): want the result of the 30 valid configs", out.String(), err)
	}
	if want := path + ": line 32 is cut short"; strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q: want one line with %q", errb.String(), want)
	}
}

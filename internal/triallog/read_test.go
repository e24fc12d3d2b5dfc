package triallog

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lines as the tuner writes them, and the start of one cut short.
const (
	okLine    = `{"config":{"algo":"ring","chunk":64},"status":"ok","score_us":5.5,"ranks_us":[5.5,5.25],"iters":20,"kernel":"allreduce","backend":"cpu","world":2,"dtype":"f32","shape":"n=8","elapsed_ms":1.5}`
	hangLine  = `{"config":{"algo":"tree","chunk":64},"status":"hang","score_us":null,"ranks_us":null,"error":"bench: deadline","phase":"bench","kernel":"allreduce","backend":"cpu","world":2,"dtype":"f32","shape":"n=8","elapsed_ms":3000}`
	tornStart = `{"config":{"algo":"ring","chunk":128},"sta`
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		text      string
		wantLines []int
		wantTorn  int
		// For a malformed line: its number and what Err is (errors.Is),
		// or a substring of the error when that is a JSON error.
		errLine int
		errIs   error
		errText string
	}{
		{name: "complete", text: okLine + "\n" + hangLine + "\n", wantLines: []int{1, 2}},
		{name: "no final newline", text: okLine + "\n" + hangLine, wantLines: []int{1, 2}},
		{name: "blank lines skipped", text: okLine + "\n\n  \n" + hangLine + "\n", wantLines: []int{1, 4}},
		{name: "crlf", text: okLine + "\r\n" + hangLine + "\r\n", wantLines: []int{1, 2}},
		{name: "torn last line", text: okLine + "\n" + hangLine + "\n" + tornStart, wantLines: []int{1, 2}, wantTorn: 3},
		{name: "torn after a blank line", text: okLine + "\n\n" + tornStart, wantLines: []int{1}, wantTorn: 3},
		{name: "only a torn line", text: tornStart, wantTorn: 1},
		{name: "torn line with an unknown status", text: okLine + "\n" + `{"config":{"a":1},"status":"o`, wantLines: []int{1}, wantTorn: 2},
		{name: "empty", text: ""},
		{name: "only blank lines", text: "\n\n"},
		{name: "malformed last line with its newline", text: okLine + "\n" + tornStart + "\n", errLine: 2, errText: "unexpected end of JSON input"},
		{name: "malformed middle line", text: okLine + "\nnot json\n" + hangLine + "\n", errLine: 2, errText: "invalid character"},
		{name: "torn middle line", text: okLine + "\n" + tornStart + "\n" + hangLine, errLine: 2, errText: "unexpected end"},
		{name: "json but no config", text: `{"status":"ok"}` + "\n", errLine: 1, errIs: ErrNoConfig},
		{name: "empty config", text: `{"config":{},"status":"ok"}` + "\n", errLine: 1, errIs: ErrNoConfig},
		{name: "no status", text: okLine + "\n" + `{"config":{"a":1}}` + "\n", errLine: 2, errIs: ErrNoStatus},
		{name: "unknown status", text: `{"config":{"a":1},"status":"great"}` + "\n", errLine: 1, errText: `status "great" is unknown (want ok, wrong, failed, hang, crash or invalid)`},
		{name: "float config value", text: `{"config":{"a":2.5},"status":"ok"}` + "\n", errLine: 1, errText: "want an integer or a string"},
		{name: "not an object", text: "[1,2]\n", errLine: 1, errText: "cannot unmarshal array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf, err := Parse(strings.NewReader(tc.text), "trials.jsonl")
			if tc.errLine != 0 {
				var le *LineError
				if !errors.As(err, &le) || le.Path != "trials.jsonl" || le.Line != tc.errLine {
					t.Fatalf("error %v (%T), want a *LineError for line %d of trials.jsonl", err, err, tc.errLine)
				}
				if tc.errIs != nil && !errors.Is(err, tc.errIs) {
					t.Errorf("error %v is not %v", err, tc.errIs)
				}
				if !strings.Contains(err.Error(), tc.errText) || !strings.HasPrefix(err.Error(), "trials.jsonl: line ") {
					t.Errorf("error %q: want it to name the file and line and say %q", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(lf.Results) != len(tc.wantLines) || len(lf.Lines) != len(tc.wantLines) || lf.Torn != tc.wantTorn {
				t.Fatalf("%d results, torn %d; want %d, torn %d", len(lf.Results), lf.Torn, len(tc.wantLines), tc.wantTorn)
			}
			for i, n := range tc.wantLines {
				if lf.Lines[i] != n {
					t.Errorf("result %d from line %d, want %d", i, lf.Lines[i], n)
				}
			}
		})
	}
}

// TestPhaseTimes: a line with the trial's phase times (prepare_ms,
// verify_ms, bench_ms) reads them and encodes back to the same bytes; a
// line written before they were recorded reads as zeros and still encodes
// back without them.
func TestPhaseTimes(t *testing.T) {
	withPhases := strings.TrimSuffix(okLine, "}") + `,"prepare_ms":0.25,"verify_ms":0.5,"bench_ms":0.625}`
	for _, tc := range []struct {
		name                     string
		line                     string
		prepare, verify, benchMS float64
	}{
		{"new line", withPhases, 0.25, 0.5, 0.625},
		{"old line", okLine, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf, err := Parse(strings.NewReader(tc.line+"\n"), "trials.jsonl")
			if err != nil || len(lf.Results) != 1 {
				t.Fatalf("parse: %v, %d results", err, len(lf.Results))
			}
			r := lf.Results[0]
			if r.PrepareMS != tc.prepare || r.VerifyMS != tc.verify || r.BenchMS != tc.benchMS || r.ElapsedMS != 1.5 {
				t.Errorf("phases %v %v %v (elapsed %v), want %v %v %v (1.5)", r.PrepareMS, r.VerifyMS, r.BenchMS, r.ElapsedMS, tc.prepare, tc.verify, tc.benchMS)
			}
			if b, err := json.Marshal(r); err != nil || string(b) != tc.line {
				t.Errorf("encodes back as %s (%v), not %s", b, err, tc.line)
			}
		})
	}
}

func TestReadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.jsonl")
	if _, err := Read(path); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want one naming %s that is os.ErrNotExist", err, path)
	}
}

// TestRecordedLogsLoad: every trial log kept in the repository, plain or
// gzipped, loads, and the lines the tuner wrote (those with elapsed_ms)
// encode back to the same bytes: the on-disk format has not changed. No
// log is kept both plain and gzipped: tests would replay it twice.
func TestRecordedLogsLoad(t *testing.T) {
	skipLogsUnderRace(t)
	var files []string
	for _, pattern := range []string{"../../tuner/testdata/*.jsonl", "../../bench/results/*/*.jsonl"} {
		m, err := Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no recorded trial logs found")
	}
	seen := map[string]bool{}
	same := 0
	for _, path := range files {
		if plain := strings.TrimSuffix(path, GzipExt); seen[plain] {
			t.Errorf("%s is kept both plain and gzipped", plain)
		} else {
			seen[plain] = true
		}
		lf, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(lf.Results) == 0 || lf.Torn != 0 {
			t.Errorf("%s: %d trials, torn line %d", path, len(lf.Results), lf.Torn)
		}
		raw := readRaw(t, path)
		lines := bytes.Split(raw, []byte("\n"))
		for i, r := range lf.Results {
			line := bytes.TrimSpace(lines[lf.Lines[i]-1])
			if !bytes.Contains(line, []byte(`"elapsed_ms":`)) {
				continue
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, line) {
				t.Fatalf("%s line %d encodes back as\n%s\nnot\n%s", path, lf.Lines[i], b, line)
			}
			same++
		}
	}
	if same == 0 {
		t.Error("no line written by the tuner was compared")
	}
}

// readRaw is the bytes of the log at path, gunzipped when Read would.
func readRaw(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !Gzipped(path) {
		return raw
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	return raw
}

// FuzzParse: Parse never panics; what it refuses is a *LineError naming a
// line that exists and is not a torn last line; what it accepts holds only
// trials with a config and a known status, in line order, and reads back
// the same when written again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		okLine + "\n" + hangLine + "\n",
		okLine + "\n" + hangLine + "\n" + tornStart,
		okLine + "\r\n\n" + hangLine,
		okLine + "\nnot json\n" + hangLine + "\n",
		`{"config":{"a":"x","b":-3},"status":"invalid","refined":true,"rounds":3}` + "\n",
		`{"status":"ok"}` + "\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := Parse(bytes.NewReader(data), "fuzz.jsonl")
		lines := bytes.Count(data, []byte("\n")) + 1
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 || le.Line > lines {
				t.Fatalf("error %v (%T): want a *LineError for one of %d lines", err, err, lines)
			}
			if le.Line == lines && !bytes.HasSuffix(data, []byte("\n")) {
				t.Fatalf("the last line, without its newline, was refused instead of skipped: %v", err)
			}
			return
		}
		if lf.Torn != 0 && (lf.Torn != lines || bytes.HasSuffix(data, []byte("\n"))) {
			t.Fatalf("line %d of %d skipped as torn", lf.Torn, lines)
		}
		var again bytes.Buffer
		for i, r := range lf.Results {
			if len(r.Config) == 0 || r.Status == "" {
				t.Fatalf("line %d accepted without config or status: %+v", lf.Lines[i], r)
			}
			if i > 0 && lf.Lines[i] <= lf.Lines[i-1] {
				t.Fatalf("lines out of order: %v", lf.Lines)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("line %d does not encode: %v", lf.Lines[i], err)
			}
			again.Write(append(b, '\n'))
		}
		back, err := Parse(&again, "again.jsonl")
		if err != nil || len(back.Results) != len(lf.Results) || back.Torn != 0 {
			t.Fatalf("written again, %d trials read back as %v (err %v)", len(lf.Results), back, err)
		}
	})
}

package tuner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
)

const (
	okLine    = `{"config":{"a":1},"status":"ok","score_us":5,"kernel":"k","backend":"cpu","world":2,"dtype":"f32","shape":"n=8"}`
	hangLine  = `{"config":{"a":2},"status":"hang","score_us":null,"kernel":"k","backend":"cpu","world":2,"dtype":"f32","shape":"n=8"}`
	tornStart = `{"config":{"a":3},"sta`
)

func TestReadTrialLog(t *testing.T) {
	for _, tc := range []struct {
		name      string
		text      string
		wantLines []int
		wantTorn  int
		wantErr   string // substring of the error; "" for none
	}{
		{name: "complete", text: okLine + "\n" + hangLine + "\n", wantLines: []int{1, 2}},
		{name: "blank lines skipped", text: okLine + "\n\n" + hangLine + "\n", wantLines: []int{1, 3}},
		{name: "torn last line", text: okLine + "\n" + hangLine + "\n" + tornStart, wantLines: []int{1, 2}, wantTorn: 3},
		{name: "only a torn line", text: tornStart, wantTorn: 1},
		{name: "empty", text: ""},
		{name: "malformed last line with its newline", text: okLine + "\n" + tornStart + "\n", wantErr: "line 2: not a symmtune trial"},
		{name: "malformed middle line", text: okLine + "\nnot json\n" + hangLine + "\n", wantErr: "line 2: not a symmtune trial"},
		{name: "json but no config", text: `{"status":"ok"}` + "\n", wantErr: "line 1: not a symmtune trial: no config"},
		{name: "unknown status", text: `{"config":{"a":1},"status":"great"}` + "\n", wantErr: `line 1: not a symmtune trial: status "great"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trials.jsonl")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			lf, err := ReadTrialLog(path)
			if tc.wantErr != "" {
				var ie *InputError
				if err == nil || !strings.Contains(err.Error(), path+": "+tc.wantErr) || !errors.As(err, &ie) {
					t.Fatalf("error %v, want an *InputError naming %s and %q", err, path, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(lf.Results) != len(tc.wantLines) || lf.Torn != tc.wantTorn {
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

// TestReadTrialLogGzip: a gzipped log (name ending in .gz) reads as the
// plain one; damaged gzip data is an *InputError naming the file, as a
// malformed line is (the log is the user's input).
func TestReadTrialLogGzip(t *testing.T) {
	text := okLine + "\n" + hangLine + "\n" + tornStart
	zb := bytes.NewBuffer(triallog.Gzip([]byte(text)))
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"gzipped", zb.Bytes(), ""},
		{"cut short", zb.Bytes()[:zb.Len()/2], "corrupt gzip data: unexpected EOF"},
		{"not gzip", []byte(text), "corrupt gzip data: gzip: invalid header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trials.jsonl.gz")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			lf, err := ReadTrialLog(path)
			if tc.wantErr != "" {
				var ie *InputError
				if !errors.As(err, &ie) || err.Error() != path+": "+tc.wantErr {
					t.Fatalf("error %v (%T), want an *InputError %q", err, err, path+": "+tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(lf.Results) != 2 || lf.Lines[1] != 2 || lf.Torn != 3 || lf.Path != path {
				t.Errorf("read %d results (lines %v, torn %d) from %s; want 2 (lines 1, 2; torn 3) from %s", len(lf.Results), lf.Lines, lf.Torn, lf.Path, path)
			}
		})
	}
}

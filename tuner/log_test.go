package tuner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
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

// TestAppendAfterTornLine: a search resumed on a log whose host was killed
// mid-line appends after the last complete line, so the log reads back
// whole instead of holding a glued, malformed line in its middle.
func TestAppendAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trials.jsonl")
	if err := os.WriteFile(path, []byte(okLine+"\n"+tornStart), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenTrialLog(path)
	if err != nil {
		t.Fatal(err)
	}
	score := 7.0
	if err := l.Write(Result{Config: space.Config{"a": space.Int(3)}, Status: StatusOK, ScoreUS: &score, Kernel: "k"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	lf, err := ReadTrialLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lf.Results) != 2 || lf.Torn != 0 || lf.Results[1].Score() != 7 {
		t.Errorf("read back %+v; want the first trial and the appended one", lf)
	}
}

// TestAppendLeavesForeignTailAlone: a file that merely lacks a final
// newline but was not written by a trial log loses nothing.
func TestAppendLeavesForeignTailAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("my notes\nlast line"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenTrialLog(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if b, _ := os.ReadFile(path); string(b) != "my notes\nlast line" {
		t.Errorf("file became %q", b)
	}
}

// TestWrittenLinesStartAsTornTailExpects guards lineStart: if Result's
// first field changed, torn tails would no longer be recognized.
func TestWrittenLinesStartAsTornTailExpects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trials.jsonl")
	l := NewTrialLog(path)
	if err := l.Write(Result{Config: space.Config{"a": space.Int(1)}, Status: StatusHang}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), lineStart) {
		t.Errorf("line %q does not start with %q", b, lineStart)
	}
}

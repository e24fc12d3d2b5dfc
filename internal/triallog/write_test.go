package triallog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestAppendAfterTornLine: a search resumed on a log whose host was killed
// mid-line appends after the last complete line, so the log reads back
// whole instead of holding a glued, malformed line in its middle.
func TestAppendAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trials.jsonl")
	if err := os.WriteFile(path, []byte(okLine+"\n"+tornStart), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	score := 7.0
	if err := l.Write(Result{Config: space.Config{"a": space.Int(3)}, Status: StatusOK, ScoreUS: &score, Kernel: "k"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	lf, err := Read(path)
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
	l, err := Open(path)
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
	l := New(path)
	if err := l.Write(Result{Config: space.Config{"a": space.Int(1)}, Status: StatusHang}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), lineStart) {
		t.Errorf("line %q does not start with %q", b, lineStart)
	}
}

// TestNewCreatesNothingUntilWritten: a log from New leaves no file, nor
// directory, when no trial is written; the first trial creates both.
func TestNewCreatesNothingUntilWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	path := filepath.Join(dir, "trials.jsonl")
	l := New(path)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory exists after New and Close: %v", err)
	}
	l = New(path)
	for i := range 3 {
		if err := l.Write(Result{Config: space.Config{"a": space.Int(int64(i))}, Status: StatusInvalid}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	lf, err := Read(path)
	if err != nil || len(lf.Results) != 3 || l.Path() != path {
		t.Fatalf("read back %+v (%v), want 3 trials from %s", lf, err, l.Path())
	}
}

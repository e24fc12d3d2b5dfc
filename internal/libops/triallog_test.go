package libops

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTriallogRead: the trials of a log as triallog reads them, a torn
// last line skipped and numbered, and bad input for a missing path, a
// missing file and a malformed line.
func TestTriallogRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.jsonl", `{"config":{"impl":"pipeline"},"status":"ok","score_us":12.5,"kernel":"agmm"}`+"\n\n"+
		`{"config":{"impl":"fused"},"status":"wrong","rel_err":0.5,"refined":true}`+"\n"+`{"config":{"impl"`)
	out, err := Call("triallog.read", []byte(`{"path":`+quote(good)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []map[string]any `json:"results"`
		Lines   []int            `json:"lines"`
		Torn    int              `json:"torn"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 2 || got.Results[0]["score_us"] != 12.5 || got.Results[1]["rel_err"] != 0.5 ||
		got.Results[1]["refined"] != true || got.Results[0]["config"].(map[string]any)["impl"] != "pipeline" {
		t.Errorf("results %v", got.Results)
	}
	if len(got.Lines) != 2 || got.Lines[0] != 1 || got.Lines[1] != 3 || got.Torn != 4 {
		t.Errorf("lines %v, torn %d; want [1 3], 4", got.Lines, got.Torn)
	}
	for _, c := range []struct{ req, want string }{
		{`{}`, "path: missing"},
		{`{"path":` + quote(filepath.Join(dir, "none.jsonl")) + `}`, "no such file"},
		{`{"path":` + quote(write("bad.jsonl", `{"config":{"a":1},"status":"fine"}`+"\n")) + `}`, `bad.jsonl: line 1: not a symmtune trial: status "fine"`},
	} {
		_, err := Call("triallog.read", []byte(c.req))
		var b *BadInputError
		if !errors.As(err, &b) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want bad input with %q", c.req, err, c.want)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

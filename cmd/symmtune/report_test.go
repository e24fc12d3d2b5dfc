package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/report/reporttest"
)

// TestReportFromCPUSearch runs a real search (plugin processes, one per
// rank) of an exhaustive all-reduce job and a budgeted pattern search of
// matmul+reduce-scatter, then reports on its log: every plot must hold the
// log's data, the exhaustive job its optimum.
func TestReportFromCPUSearch(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.toml")
	if err := os.WriteFile(jobs, []byte(`backend = "cpu"
iters = 3
warmup = 1

[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=4096", "n=16384"]
strategy = "exhaustive"

[[job]]
kernel = "matmulrs"
worlds = [2]
dtypes = ["f32"]
shapes = ["m=64,n=64,k=64"]
strategy = "pattern"
budget_trials = 12
iters = 2
`), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath, cachePath := filepath.Join(dir, "trials.jsonl"), filepath.Join(dir, "c.toml")
	if code, out, errs := cli(t, "search", "--config", jobs, "--log", logPath, "--cache", cachePath); code != 0 {
		t.Fatalf("search exit %d\n%s\n%s", code, out, errs)
	}
	html := filepath.Join(dir, "report.html")
	code, out, errs := cli(t, "report", "--log", logPath, "-o", html)
	if code != 0 || errs != "" || !strings.Contains(out, "report: "+html) {
		t.Fatalf("report exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	reporttest.Check(t, page, reporttest.Expect{Logs: []string{logPath}})
	for _, want := range []string{"exhaustive optimum", "strategy: exhaustive", "strategy: pattern; 12 first-pass trials of"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report does not say %q", want)
		}
	}

	// Without --log the cache's winners are plotted: one point per entry.
	code, out, errs = cli(t, "report", "--cache", cachePath, "-o", "-")
	if code != 0 {
		t.Fatalf("report from the cache: exit %d\n%s", code, errs)
	}
	for _, want := range []string{`data-key="allreduce|2" data-points="2"`, `data-key="matmulrs|2" data-points="1"`} {
		if !strings.Contains(out, want) {
			t.Errorf("cache report lacks %s", want)
		}
	}
}

// TestReportBadInput: input that is not what report reads gets one line
// and exit code 2, and no report; a log whose last line was cut short is
// reported in one line and the rest of it is used.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return reporttest.WriteFile(t, dir, name, text) }
	line := `{"config":{"chunk":1},"status":"ok","score_us":3,"kernel":"allreduce","backend":"cpu","world":2,"dtype":"f32","shape":"n=8"}` + "\n"
	good := write("good.jsonl", line)
	emptyDir := filepath.Join(dir, "empty")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "report.html")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not a trial log", []string{"--log", write("notes.txt", "some\nnotes\n")}, "notes.txt: line 1: not a symmtune trial"},
		{"empty directory", []string{"--log", emptyDir}, "holds no trial logs"},
		{"empty log", []string{"--log", write("empty.jsonl", "")}, "not a symmtune trial log"},
		{"missing log", []string{"--log", filepath.Join(dir, "missing.jsonl")}, "missing.jsonl"},
		{"malformed middle line", []string{"--log", write("mid.jsonl", line+"{\"config\":\n"+line)}, "mid.jsonl: line 2"},
		{"bad peers file", []string{"--log", good, "--peers", write("peers-w2.csv", "kind,impl,shape,us\n")}, "not a peers CSV"},
		{"no directory for the output", []string{"--log", good, "-o", filepath.Join(dir, "nodir", "r.html")}, "no directory"},
		{"unknown flag", []string{"--log", good, "--bogus"}, "unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"report", "-o", out}, tc.args...)
			code, stdout, stderr := cli(t, args...)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line holding %q", code, stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if names := listDir(t, filepath.Dir(out)); len(names) != 0 {
				t.Errorf("files written: %v", names)
			}
		})
	}

	t.Run("torn last line", func(t *testing.T) {
		// The config logged twice (as a resumed search may) is one config.
		torn := write("torn.jsonl", line+line+`{"config":{"chunk":2},"sta`)
		code, stdout, stderr := cli(t, "report", "--log", torn, "-o", out)
		if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, torn+": line 3 is cut short") {
			t.Fatalf("exit %d, stderr %q; want exit 0 and one line naming line 3", code, stderr)
		}
		page, err := os.ReadFile(out)
		if err != nil || !strings.Contains(stdout, out) {
			t.Fatalf("no report written (%v); stdout %q", err, stdout)
		}
		if !strings.Contains(string(page), "line 3 is cut short") {
			t.Errorf("the report does not mention the skipped line")
		}
		reporttest.Check(t, page, reporttest.Expect{Logs: []string{torn}})
	})
}

func TestReportCounts(t *testing.T) {
	for _, tc := range []struct {
		runs, entries int
		cacheRead     bool
		want          string
	}{
		{1, 0, false, "1 search"},
		{3, 0, false, "3 searches"},
		{0, 6, true, "0 searches, 6 tuned configs"},
		{2, 1, true, "2 searches, 1 tuned config"},
	} {
		if got := reportCounts(tc.runs, tc.entries, tc.cacheRead); got != tc.want {
			t.Errorf("reportCounts(%d, %d, %v) = %q, want %q", tc.runs, tc.entries, tc.cacheRead, got, tc.want)
		}
	}
}

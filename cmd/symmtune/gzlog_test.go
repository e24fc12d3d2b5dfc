package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
)

// TestGzippedResumeLog: --resume reads a gzipped log (its configs are not
// measured again), but a search never appends to one: --log FILE.gz, or
// --resume FILE.gz without --log, is refused with exit 2 before anything
// is written.
func TestGzippedResumeLog(t *testing.T) {
	dir := t.TempDir()
	// Every valid config of a small part of the space: the resumed search
	// then has nothing left to measure, whatever order a strategy takes.
	job := []string{"search", "--kernel", "allreduce", "--world", "2", "--shape", "n=4096", "--backend", "cpu",
		"--iters", "2", "--budget-trials", "0", "--where", "algorithm=one_shot,threads=4", "--cache", filepath.Join(dir, "c.toml")}
	first := filepath.Join(dir, "first.jsonl")
	if code, out, errs := cli(t, append(job, "--log", first)...); code != 0 {
		t.Fatalf("search exit %d\n%s\n%s", code, out, errs)
	}
	raw, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	zb := bytes.NewBuffer(triallog.Gzip(raw))
	gz := first + ".gz"
	if err := os.WriteFile(gz, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(first)

	for _, tc := range []struct{ name, flag, path string }{
		{"resume without --log", "--resume", gz},
		{"log", "--log", filepath.Join(dir, "new.jsonl.gz")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := listDir(t, dir)
			code, _, errs := cli(t, append(job, tc.flag, tc.path)...)
			if want := tc.flag + " " + tc.path + ": trial logs are written plain"; code != exitUsage || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, errs, want)
			}
			if after := listDir(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("files before %v, after %v", before, after)
			}
			if b, _ := os.ReadFile(gz); !bytes.Equal(b, zb.Bytes()) {
				t.Error("the gzipped log changed")
			}
		})
	}

	next := filepath.Join(dir, "next.jsonl")
	if code, out, errs := cli(t, append(job, "--resume", gz, "--log", next)...); code != 0 {
		t.Fatalf("search --resume %s: exit %d\n%s\n%s", gz, code, out, errs)
	}
	for _, r := range readLog(t, next) {
		if !r.Refined {
			t.Errorf("config %s measured again: the gzipped resume log holds it", r.Config)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// An entry tuned by an older kernel: show marks it not current, and lookup,
// which skips it, says it exists and how to re-tune. The current entry is
// marked current.
func TestShowAndLookupTellAnOlderKernelVersion(t *testing.T) {
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "c.toml")
	if code, out, errs := cli(t, "search", "--kernel", "allreduce", "--world", "2", "--shape", "n=4096",
		"--backend", "cpu", "--iters", "2", "--cache", cachePath, "--log", filepath.Join(dir, "l.jsonl")); code != 0 {
		t.Fatalf("search exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := cli(t, "show", "--cache", cachePath)
	if code != 0 || !regexp.MustCompile(`\s[0-9a-f]{12}\s+yes\s`).MatchString(out) {
		t.Fatalf("show of a fresh entry: exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	old := regexp.MustCompile(`kernel_version = "[0-9a-f]+"`).ReplaceAll(b, []byte(`kernel_version = "0123456789ab"`))
	// A hand edit of a checksummed file: without its checksum lines and
	// the header line announcing them (docs/cache.md).
	old = regexp.MustCompile(`(?m)^# (crc32c=|every \[\[entry\]\] ).*
`).ReplaceAll(old, nil)
	if err := os.WriteFile(cachePath, old, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = cli(t, "show", "--cache", cachePath)
	if code != 0 || !strings.Contains(out, "0123456789ab  no (plugin: ") || !strings.Contains(out, "1 entries are for another kernel version") {
		t.Errorf("show of an old entry: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, _ = cli(t, "show", "--no-plugins", "--cache", cachePath); code != 0 || !strings.Contains(out, "0123456789ab  ?") {
		t.Errorf("show --no-plugins: exit %d\n%s", code, out)
	}
	code, out, errs = cli(t, "lookup", "--kernel", "allreduce", "--world", "2", "--shape", "n=4096", "--backend", "cpu", "--cache", cachePath)
	if code != exitNotFound || out != "" || strings.Count(errs, "\n") != 1 ||
		!strings.Contains(errs, "for kernel version 0123456789ab, but the installed allreduce plugin is version ") ||
		!strings.HasSuffix(errs, "re-tune with: symmtune search --kernel allreduce --world 2 --shape n=4096 --dtype f32 --backend cpu\n") {
		t.Errorf("lookup of an old entry: exit %d\n%s\n%s", code, out, errs)
	}
}

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/tuner"
)

// TestPluginTrustOnTheCLI: every command that runs a plugin (search,
// lookup, plugins) refuses one in a directory others can write, unless
// --allow-insecure-plugins, and checks a --pin before running it. Bad
// input exits 2 with one line.
func TestPluginTrustOnTheCLI(t *testing.T) {
	src := filepath.Join(pluginDir, "symmtune-plugin-allreduce")
	sum, err := tuner.FileSHA256(src)
	if err != nil {
		t.Fatal(err)
	}
	insecure := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(insecure, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExe(t, src, filepath.Join(insecure, "symmtune-plugin-allreduce"))
	if err := os.Chmod(insecure, 0o777); err != nil {
		t.Fatal(err)
	}
	lookup := []string{"lookup", "--kernel", "allreduce", "--world", "2", "--shape", "n=1024", "--backend", "cpu"}
	search := []string{"search", "--kernel", "allreduce", "--world", "2", "--shape", "n=1024", "--backend", "cpu", "--budget-trials", "1"}
	zeros := "allreduce=sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		name string
		dir  string
		args []string
		code int
		want string // in stderr, or in stdout when code is 0
	}{
		{"search, insecure dir", insecure, search, exitUsage, "is writable by others"},
		{"lookup, insecure dir", insecure, lookup, exitUsage, "is writable by others"},
		{"plugins, insecure dir", insecure, []string{"plugins"}, exitFailure, "is writable by others"},
		{"plugins, insecure dir allowed", insecure, []string{"--allow-insecure-plugins", "plugins"}, 0, "allreduce"},
		{"lookup, insecure dir allowed", insecure, append([]string{"--allow-insecure-plugins"}, lookup...), exitNotFound, "no tuned config"},
		{"lookup, pin mismatch", pluginDir, append([]string{"--pin", zeros}, lookup...), exitUsage, "does not match the pinned checksum"},
		{"search, pin mismatch", pluginDir, append([]string{"--pin", zeros}, search...), exitUsage, "does not match the pinned checksum"},
		{"plugins, pin mismatch", pluginDir, []string{"--pin", zeros, "plugins"}, exitFailure, "does not match the pinned checksum"},
		{"lookup, pin matches", pluginDir, append([]string{"--pin", "allreduce=sha256:" + sum}, lookup...), exitNotFound, "no tuned config"},
		{"pin malformed", pluginDir, append([]string{"--pin", "allreduce"}, lookup...), exitUsage, "want KERNEL=sha256:HEX"},
		{"pin bad digest", pluginDir, append([]string{"--pin", "allreduce=sha256:xyz"}, lookup...), exitUsage, "64 hex digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			args := append([]string{"--plugin-dir", tc.dir, "--cache", filepath.Join(tmp, "c.toml")}, tc.args...)
			if tc.args[len(tc.args)-1] == "1" { // search: its log
				args = append(args, "--log", filepath.Join(tmp, "trials.jsonl"))
			}
			var out, errb bytes.Buffer
			code := runIO(context.Background(), args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
			text := errb.String()
			if tc.code == 0 || strings.HasPrefix(tc.name, "plugins,") {
				text = out.String() + errb.String()
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("output %q does not say %q", text, tc.want)
			}
			if tc.code == exitUsage && strings.Count(errb.String(), "\n") != 1 {
				t.Errorf("stderr is not one line:\n%s", errb.String())
			}
			if _, err := os.Stat(filepath.Join(tmp, "trials.jsonl")); err == nil {
				t.Error("a refused search wrote a trial log")
			}
		})
	}
}

func copyExe(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

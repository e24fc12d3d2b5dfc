package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/internal/pyplugins"
)

// TestPluginsShowServedBackends: `symmtune plugins` asks each plugin which
// backends it serves and shows those, not the directory it was found in.
// A Python plugin that serves only cuda, installed at the top of the plugin
// directory (where the cpu builds live), as tritonallreduce was when the
// listing called it [cpu], is shown as [cuda] with a note that search
// looks for it in cuda/; the same plugin in cuda/ gets no note; the real
// CPU plugins stay [cpu]. --backend keeps the plugins that serve it.
func TestPluginsShowServedBackends(t *testing.T) {
	python := pyplugins.Need(t)
	dir := t.TempDir()
	for _, p := range []string{"allreduce", "matmulrs", "agmm"} {
		if err := os.Symlink(filepath.Join(pluginDir, "symmtune-plugin-"+p), filepath.Join(dir, "symmtune-plugin-"+p)); err != nil {
			t.Fatal(err)
		}
	}
	fake := "python/tests/plugins/symmtune-plugin-fakegpu"
	for _, d := range []string{dir, filepath.Join(dir, "cuda")} {
		if _, err := pyplugins.Install(fake, d, "symmtune-plugin-fakegpu", python); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pyplugins.Install("python/examples/allreduce_triton/symmtune-plugin-tritonallreduce", dir, "symmtune-plugin-tritonallreduce", python); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := runIO(context.Background(), append([]string{"--plugin-dir", dir, "plugins"}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	// entry is a plugin's block of the listing: its header line up to the
	// next header (a line that does not start with a space).
	entries := func(out string) map[string]string {
		m := map[string]string{}
		var key string
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, " ") {
				f := strings.Fields(l)
				key = f[0]
			}
			if key != "" {
				m[key] += l + "\n"
			}
		}
		return m
	}
	top := func(name string) string { return filepath.Join(dir, "symmtune-plugin-"+name) }
	cudaFake := filepath.Join(dir, "cuda", "symmtune-plugin-fakegpu")

	code, out, errs := run()
	if code != 0 {
		t.Fatalf("plugins: exit %d\n%s\n%s", code, out, errs)
	}
	// fakegpu appears twice; split its blocks by path.
	blocks := strings.Split(out, "\nfakegpu ")
	for _, tc := range []struct {
		name, header, path string
		note               bool
	}{
		{"allreduce", "allreduce  [cpu]", top("allreduce"), false},
		{"matmulrs", "matmulrs  [cpu]", top("matmulrs"), false},
		{"agmm", "agmm  [cpu]", top("agmm"), false},
		{"tritonallreduce", "tritonallreduce  [cuda]", top("tritonallreduce"), true},
	} {
		e := entries(out)[tc.name]
		if !strings.HasPrefix(e, tc.header) || !strings.Contains(e, tc.path) {
			t.Errorf("%s: entry %q, want it to start %q and name %s", tc.name, e, tc.header, tc.path)
		}
		if got := strings.Contains(e, "note: search does not run it from here"); got != tc.note {
			t.Errorf("%s: note %v, want %v:\n%s", tc.name, got, tc.note, e)
		}
	}
	var sawTop, sawCuda bool
	for _, b := range blocks[1:] {
		if !strings.HasPrefix(b, " [cuda]") {
			t.Errorf("fakegpu entry %q: want [cuda]", b)
		}
		note := strings.Contains(b, "search --backend cuda looks in "+filepath.Join(dir, "cuda"))
		switch {
		case strings.Contains(b, top("fakegpu")+"\n"):
			sawTop = true
			if !note {
				t.Errorf("fakegpu at the top of the plugin directory has no note saying where search looks:\n%s", b)
			}
		case strings.Contains(b, cudaFake+"\n"):
			sawCuda = true
			if note {
				t.Errorf("fakegpu in cuda/ has a note:\n%s", b)
			}
		}
	}
	if !sawTop || !sawCuda || strings.Contains(out, "[cpu]  version fake-1") {
		t.Errorf("want fakegpu listed from the top (%v) and from cuda/ (%v), never as [cpu]:\n%s", sawTop, sawCuda, out)
	}

	for _, tc := range []struct {
		backend     string
		want, never []string
	}{
		{"cpu", []string{"allreduce", "matmulrs", "agmm"}, []string{"fakegpu", "tritonallreduce"}},
		{"cuda", []string{"fakegpu", "tritonallreduce"}, []string{"allreduce", "matmulrs", "agmm"}},
	} {
		code, out, errs := run("--backend", tc.backend)
		if code != 0 {
			t.Fatalf("plugins --backend %s: exit %d\n%s\n%s", tc.backend, code, out, errs)
		}
		listed := entries(out)
		for _, w := range tc.want {
			if !strings.HasPrefix(listed[w], w+"  ["+tc.backend+"]") {
				t.Errorf("plugins --backend %s: no %s [%s] in\n%s", tc.backend, w, tc.backend, out)
			}
		}
		for _, n := range tc.never {
			if listed[n] != "" {
				t.Errorf("plugins --backend %s lists %s:\n%s", tc.backend, n, out)
			}
		}
	}

	code, out, errs = run("--backend", "gpu")
	if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 {
		t.Errorf("plugins --backend gpu: exit %d, stdout %q, stderr %q; want exit %d and one line", code, out, errs, exitUsage)
	}
}

// A plugin that fails to load fails `plugins` (exit 1) after the others are
// listed, and is shown on stderr with the end of its own stderr.
func TestPluginsFailsOnABrokenPlugin(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(pluginDir, "symmtune-plugin-allreduce"), filepath.Join(dir, "symmtune-plugin-allreduce")); err != nil {
		t.Fatal(err)
	}
	broken := "#!/bin/sh\necho 'symmtune.plugin: cannot import grpc' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "symmtune-plugin-broken"), []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runIO(context.Background(), []string{"--plugin-dir", dir, "plugins"}, &out, &errb)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if !strings.HasPrefix(out.String(), "allreduce  [cpu]") {
		t.Errorf("the plugin that loads is not listed:\n%s", out.String())
	}
	e := errb.String()
	if !strings.Contains(e, "broken (in "+dir+")") || !strings.Contains(e, "symmtune.plugin: cannot import grpc") ||
		!strings.HasSuffix(e, "symmtune: 1 plugin(s) failed to load: broken (-v shows their whole output)\n") {
		t.Errorf("stderr:\n%s", e)
	}
}

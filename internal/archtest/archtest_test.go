package archtest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/symmtune/symmtune"

// mayImport is the house's layering: each room (a path and the packages
// below it) and the other rooms its code may import. Within a room any
// import is allowed (Go itself refuses cycles). The host (tuner) loads
// kernels only as plugin processes, so it never links a kernel; sdk is
// what plugin authors import, so it sits below both; cache and symm sit
// below sdk; space, hardware, cuda and proto import nothing of ours. A new
// top-level package must be placed here before its test passes.
var mayImport = map[string][]string{
	"space":              {},
	"hardware":           {},
	"cuda":               {},
	"proto":              {},
	"internal/calltime":  {},
	"internal/golden":    {},
	"internal/redistest": {},
	"internal/pyplugins": {},
	"internal/archtest":  {},
	"internal/triallog":  {"space"},
	"symm":               {"hardware", "cuda"},
	"cache":              {"space", "hardware"},
	"sdk":                {"space", "hardware", "symm", "proto"},
	"kernels":            {"sdk", "symm", "space", "hardware", "cuda", "internal/calltime"},
	"tuner":              {"sdk", "cache", "symm", "space", "hardware", "proto", "internal/triallog"},
	"report":             {"tuner", "cache", "space", "internal/triallog"},
	// libsymmtune's Go side: the kernels' rules and runners in a
	// Python process, with the cache they look up.
	"internal/libops": {"kernels", "cache", "symm", "space", "hardware", "cuda", "internal/calltime", "internal/triallog"},
	// A plugin that misbehaves on purpose, for the host's tests.
	"internal/faultplugin": {"sdk", "symm", "space"},
	// The one-file guide kernel (allgather) describes its own space.
	"plugins":         {"kernels", "sdk", "symm", "space"},
	"cmd/libsymmtune": {"internal/libops"},
	"cmd/symmtune":    {"tuner", "report", "cache", "sdk", "space", "hardware", "internal/triallog"},
	"bench":           {"kernels", "cuda"},
}

// testHelpers may be imported by any package's tests: they start
// processes or read golden files, and no production code imports them.
var testHelpers = []string{"internal/golden", "internal/redistest", "internal/pyplugins"}

// testMayImport adds, per room, what its tests may import beyond
// mayImport: tests read trial logs and caches, or run a CPU team.
var testMayImport = map[string][]string{
	"kernels":      {"cache", "internal/triallog"},
	"cmd/symmtune": {"symm"},
}

// pkg is one package as `go list` reports it under one set of build tags.
type pkg struct {
	path, name, doc   string
	imports, tImports []string
}

// listed caches listPackages's answer per build tags, for this test
// process (the tree does not change while it runs).
var listed = struct {
	sync.Mutex
	by map[string][]pkg
}{by: map[string][]pkg{}}

// listPackages runs `go list` over the module under tags.
func listPackages(t *testing.T, tags string) []pkg {
	t.Helper()
	listed.Lock()
	defer listed.Unlock()
	if pkgs, ok := listed.by[tags]; ok {
		return pkgs
	}
	root := moduleRoot(t)
	cmd := exec.Command("go", "list", "-tags="+tags, "-f",
		"{{.ImportPath}}\t{{.Name}}\t{{.Doc}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags=%q: %v: %s", tags, err, stderr.String())
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		pkgs = append(pkgs, pkg{path: rel(f[0]), name: f[1], doc: f[2],
			imports: ours(strings.Fields(f[3])), tImports: ours(strings.Fields(f[4]))})
	}
	listed.by[tags] = pkgs
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// rel is a package path relative to the module ("" for others).
func rel(path string) string {
	if path == module {
		return "."
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return ""
}

// ours keeps the module's own packages, relative to it.
func ours(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r := rel(p); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// roomOf is the longest room of mayImport that holds path, or "".
func roomOf(path string) string {
	best := ""
	for room := range mayImport {
		if (path == room || strings.HasPrefix(path, room+"/")) && len(room) > len(best) {
			best = room
		}
	}
	return best
}

// allowed reports whether code of room from may import package to
// (test code when test).
func allowed(from, to string, test bool) bool {
	toRoom := roomOf(to)
	if toRoom == from || slices.Contains(mayImport[from], toRoom) {
		return true
	}
	return test && (slices.Contains(testHelpers, toRoom) || slices.Contains(testMayImport[from], toRoom))
}

// buildTags: the plain build (CI, the CPU plugins) and the GPU build.
var buildTags = []string{"", "cuda"}

func TestLayering(t *testing.T) {
	for _, tags := range buildTags {
		for _, p := range listPackages(t, tags) {
			from := roomOf(p.path)
			if from == "" {
				t.Errorf("tags %q: package %s is in no room of mayImport: place it in the layering", tags, p.path)
				continue
			}
			for _, imp := range p.imports {
				if !allowed(from, imp, false) {
					t.Errorf("tags %q: %s (room %s) imports %s (room %q), which its room may not", tags, p.path, from, imp, roomOf(imp))
				}
			}
			for _, imp := range p.tImports {
				if !allowed(from, imp, true) {
					t.Errorf("tags %q: tests of %s (room %s) import %s (room %q), which its room's tests may not", tags, p.path, from, imp, roomOf(imp))
				}
			}
		}
	}
}

// TestNoProductionImportOfTestHelpers: the helpers start processes and
// read testdata; a program that linked them would carry both.
func TestNoProductionImportOfTestHelpers(t *testing.T) {
	for _, tags := range buildTags {
		for _, p := range listPackages(t, tags) {
			for _, imp := range p.imports {
				if h := roomOf(imp); slices.Contains(testHelpers, h) && roomOf(p.path) != h {
					t.Errorf("tags %q: %s imports the test helper %s", tags, p.path, imp)
				}
			}
		}
	}
}

// TestEveryPackageSaysWhatItOwns: a doc comment on every package, in every
// build (a comment only in a cuda-tagged file is missing from the plain
// build's documentation).
func TestEveryPackageSaysWhatItOwns(t *testing.T) {
	for _, tags := range buildTags {
		for _, p := range listPackages(t, tags) {
			if strings.TrimSpace(p.doc) == "" {
				t.Errorf("tags %q: package %s has no doc comment", tags, p.path)
			}
		}
	}
}

// TestPluginsAreMains: plugins/<name> holds an executable's main and
// nothing else; a kernel's code lives in kernels/ (or, for the one-file
// guide kernel, in its main package), so nothing may import a plugin.
func TestPluginsAreMains(t *testing.T) {
	var importers []string
	for _, tags := range buildTags {
		for _, p := range listPackages(t, tags) {
			if roomOf(p.path) == "plugins" && p.name != "main" {
				t.Errorf("tags %q: %s is package %s, not main", tags, p.path, p.name)
			}
			for _, imp := range append(slices.Clone(p.imports), p.tImports...) {
				if roomOf(imp) == "plugins" && roomOf(p.path) != "plugins" {
					importers = append(importers, p.path+" -> "+imp)
				}
			}
		}
	}
	sort.Strings(importers)
	if len(importers) > 0 {
		t.Errorf("plugins imported: %v", slices.Compact(importers))
	}
}

// TestRoomOf pins the room lookup the tests above rest on.
func TestRoomOf(t *testing.T) {
	for _, c := range []struct{ path, room string }{
		{"tuner/strategy", "tuner"},
		{"internal/triallog", "internal/triallog"},
		{"internal/libops", "internal/libops"},
		{"kernels/gemm/hopper/internal/wgmmagen", "kernels"},
		{"cmd/symmtune", "cmd/symmtune"},
		{"cmd/other", ""},
		{"spaceship", ""},
	} {
		if got := roomOf(c.path); got != c.room {
			t.Errorf("roomOf(%q) = %q, want %q", c.path, got, c.room)
		}
	}
	for _, c := range []struct {
		from, to string
		test, ok bool
	}{
		{"tuner", "kernels/gemm", false, false},
		{"tuner", "tuner/strategy", false, true},
		{"sdk", "tuner", false, false},
		{"cache", "sdk", false, false},
		{"kernels", "internal/triallog", false, false},
		{"kernels", "internal/triallog", true, true},
		{"space", "internal/golden", true, true},
		{"space", "internal/golden", false, false},
	} {
		if got := allowed(c.from, c.to, c.test); got != c.ok {
			t.Errorf("allowed(%q, %q, test=%v) = %v, want %v", c.from, c.to, c.test, got, c.ok)
		}
	}
}

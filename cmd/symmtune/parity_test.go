package main

// The Go/Python lookup parity test: caches written by the Go code (a real
// search and cache.PutAll), a table of queries, and every answer of
// `symmtune lookup --json` compared with symmtune.lookup's in Python
// (python/tests/lookup_answers.py), including "not found" and "corrupt".

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/internal/pyplugins"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner"
)

// pythonPluginDir is a plugin directory with the Go plugins and, in cuda/,
// the Python test plugin that reports a made-up GPU ($SYMMTUNE_FAKEGPU).
func pythonPluginDir(t *testing.T) (dir, python string) {
	t.Helper()
	python = pyplugins.Need(t)
	dir = t.TempDir()
	for _, p := range []string{"allreduce", "matmulrs"} {
		if err := os.Symlink(filepath.Join(pluginDir, "symmtune-plugin-"+p), filepath.Join(dir, "symmtune-plugin-"+p)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pyplugins.Install("python/tests/plugins/symmtune-plugin-fakegpu", filepath.Join(dir, "cuda"), "symmtune-plugin-fakegpu", python); err != nil {
		t.Fatal(err)
	}
	return dir, python
}

// query is one lookup, asked of the CLI and of Python. Plugin mode (the
// CLI's default) takes the kernel version and hardware from the plugin;
// Python is given the version, and the fingerprint for the made-up GPU (it
// fingerprints a CPU itself). anyHW is --any-hardware.
type query struct {
	name, kernel, backend, dtype, shape string
	world                               int
	anyHW                               bool
	gpu                                 *hardware.Fingerprint
	cache                               string // default: the table's cache
}

func TestLookupParityWithPython(t *testing.T) {
	dir, python := pythonPluginDir(t)
	tmp := t.TempDir()
	cachePath := filepath.Join(tmp, "configs.toml")
	ctx := context.Background()

	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := runIO(ctx, append([]string{"--plugin-dir", dir}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	// A real search writes the first entry.
	if code, out, errs := run("search", "--kernel", "allreduce", "--world", "3", "--shape", "n=2048", "--backend", "cpu",
		"--iters", "2", "--cache", cachePath, "--log", filepath.Join(tmp, "trials.jsonl")); code != 0 {
		t.Fatalf("search exit %d\n%s\n%s", code, out, errs)
	}
	version := func(kernel string) string {
		info, err := tuner.Inspect(ctx, dir, kernel, "cpu", 0)
		if err != nil {
			t.Fatal(err)
		}
		return info.Desc.KernelVersion
	}
	cpu := hardware.CPU()
	otherCPU := hardware.Fingerprint{Kind: "cpu", Name: "Other CPU", Count: 1, Cores: 64, Interconnect: "shm"}
	h200 := func(driver string, mods ...func(*hardware.Fingerprint)) hardware.Fingerprint {
		f := hardware.Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 4, SMs: 132, MemoryMiB: 143771,
			Compute: "9.0", Driver: driver, Interconnect: "NVLink x18"}
		for _, m := range mods {
			m(&f)
		}
		return f
	}
	h100 := func(f *hardware.Fingerprint) { f.Name, f.MemoryMiB = "NVIDIA H100 80GB HBM3", 81559 }
	pcie := func(f *hardware.Fingerprint) { f.Interconnect = "PCIe" }
	two := func(f *hardware.Fingerprint) { f.Count = 2 }
	t0 := time.Date(2026, 11, 21, 18, 40, 0, 0, time.UTC)
	n := 0
	e := func(kernel, ver string, hw hardware.Fingerprint, world int, dtype string, shape space.Shape, at time.Duration) cache.Entry {
		n++
		backend := "cpu"
		if hw.Kind == "gpu" {
			backend = "cuda"
		}
		return cache.Entry{
			Key:          cache.Key{Kernel: kernel, KernelVersion: ver, Backend: backend, Hardware: hw.ID(), World: world, Dtype: dtype, Shape: shape},
			HardwareInfo: hw,
			Config:       space.Config{"tag": space.Int(int64(n)), "algo": space.Str(fmt.Sprintf("a%d", n))},
			MedianUS:     10.5 + float64(n)/7, MinUS: 9.25, P90US: 1e-7 * float64(n), DefaultMedianUS: 31.0 / 3,
			Trials: 10 + n, TunedAt: t0.Add(at),
		}
	}
	ar, mm, fake := version("allreduce"), version("matmulrs"), "fake-1"
	nn := func(v int64) space.Shape { return space.Shape{"n": v} }
	mnk := func(m, n, k int64) space.Shape { return space.Shape{"m": m, "n": n, "k": k} }
	entries := []cache.Entry{
		e("allreduce", ar, cpu, 4, "f32", nn(1024), 0),
		e("allreduce", ar, cpu, 4, "f32", nn(4096), 0),
		e("allreduce", ar, cpu, 4, "f32", nn(1<<20), time.Hour+250*time.Millisecond),
		e("allreduce", "old", cpu, 4, "f32", nn(4096), 5*time.Hour),
		e("allreduce", ar, otherCPU, 4, "f32", nn(4096), 6*time.Hour),
		e("allreduce", ar, cpu, 4, "bf16", nn(3000), 0),
		e("allreduce", ar, cpu, 2, "f32", nn(1024), 0),
		e("allreduce", ar, cpu, 2, "f32", nn(4096), 2*time.Hour),
		e("allreduce", ar, cpu, 8, "f32", nn(1024), 0),
		e("allreduce", ar, cpu, 8, "f32", nn(4096), 0),
		e("matmulrs", mm, cpu, 2, "f32", mnk(64, 64, 64), 0),
		e("matmulrs", mm, cpu, 2, "f32", mnk(256, 256, 256), 0),
		e("matmulrs", mm, cpu, 2, "f32", mnk(1024, 16, 64), 0),
		e("fakegpu", fake, h200("570.10.01"), 4, "bf16", nn(4096), 0),
		e("fakegpu", fake, h200("580.95.05"), 4, "bf16", nn(1<<20), time.Hour),
		e("fakegpu", fake, h200("590.01.02"), 4, "bf16", nn(65536), 0),
		e("fakegpu", fake, h200("570.10.01", h100), 4, "bf16", nn(4096), 0),
		e("fakegpu", fake, h200("570.10.01", pcie), 4, "bf16", nn(8192), 0),
		e("fakegpu", fake, h200("570.10.01", two), 2, "bf16", nn(4096), 0),
		e("fakegpu", fake, h200("570.10.01"), 4, "f16", nn(4096), 0),
	}
	entries[len(entries)-1].HardwareInfo = hardware.Fingerprint{} // as written by hand: nothing to compare
	if err := cache.PutAll(cachePath, entries); err != nil {
		t.Fatal(err)
	}

	gpu := func(f hardware.Fingerprint) *hardware.Fingerprint { return &f }
	q := func(name, kernel string, world int, dtype, shape string) query {
		return query{name: name, kernel: kernel, backend: "cpu", world: world, dtype: dtype, shape: shape}
	}
	anyHW := func(qq query) query { qq.anyHW = true; return qq }
	onGPU := func(qq query, f hardware.Fingerprint) query { qq.backend, qq.gpu = "cuda", gpu(f); return qq }
	queries := []query{
		q("exact", "allreduce", 4, "f32", "n=4096"),
		q("nearest below", "allreduce", 4, "f32", "n=2000"),
		q("nearest above", "allreduce", 4, "f32", "n=2100"),
		q("past the largest", "allreduce", 4, "f32", "n=1073741824"),
		q("below the smallest", "allreduce", 4, "f32", "n=1"),
		q("log not linear", "allreduce", 4, "f32", "n=200000"),
		anyHW(q("any: newest of every version and machine", "allreduce", 4, "f32", "n=4096")),
		anyHW(q("any: nearest", "allreduce", 4, "f32", "n=2048")),
		q("bf16 exact", "allreduce", 4, "bf16", "n=3000"),
		q("bf16 nearest", "allreduce", 4, "bf16", "n=4096"),
		q("tie: the newer", "allreduce", 2, "f32", "n=2048"),
		q("tie: the smaller key", "allreduce", 8, "f32", "n=2048"),
		q("from the real search", "allreduce", 3, "f32", "n=2048"),
		q("near the real search", "allreduce", 3, "f32", "n=8192"),
		q("no such world", "allreduce", 5, "f32", "n=4096"),
		q("no such dtype", "allreduce", 4, "f16", "n=4096"),
		q("3-d exact", "matmulrs", 2, "f32", "m=64,n=64,k=64"),
		q("3-d tie by key", "matmulrs", 2, "f32", "m=128,n=128,k=128"),
		q("3-d sum of dims", "matmulrs", 2, "f32", "m=2048,n=16,k=64"),
		anyHW(q("3-d any", "matmulrs", 2, "f32", "m=100,n=100,k=100")),
		onGPU(q("gpu: own driver first, even at a farther shape", "fakegpu", 4, "bf16", "n=4096"), h200("590.01.02")),
		onGPU(q("gpu: upgraded driver, exact shape", "fakegpu", 4, "bf16", "n=4096"), h200("600.00.01")),
		onGPU(q("gpu: upgraded driver, nearest shape", "fakegpu", 4, "bf16", "n=524288"), h200("600.00.01")),
		onGPU(q("gpu: H100 under another driver", "fakegpu", 4, "bf16", "n=4096"), h200("600.00.01", h100)),
		onGPU(q("gpu: PCIe under another driver", "fakegpu", 4, "bf16", "n=4096"), h200("600.00.01", pcie)),
		onGPU(q("gpu: two GPUs", "fakegpu", 2, "bf16", "n=4096"), h200("600.00.01", two)),
		onGPU(q("gpu: another topology never", "fakegpu", 4, "bf16", "n=4096"), h200("570.10.01", func(f *hardware.Fingerprint) { f.Interconnect = "NVLink x12" })),
		onGPU(q("gpu: another model never", "fakegpu", 4, "bf16", "n=4096"), h200("570.10.01", func(f *hardware.Fingerprint) { f.Name = "NVIDIA H20" })),
		onGPU(q("gpu: another dtype never", "fakegpu", 4, "f32", "n=4096"), h200("570.10.01")),
		onGPU(q("gpu: own ID without hardware_info", "fakegpu", 4, "f16", "n=4096"), h200("570.10.01")),
		onGPU(q("gpu: no hardware_info, no fallback", "fakegpu", 4, "f16", "n=4096"), h200("600.00.01")),
	}
	// Cache files Go accepts or refuses; each looked up with --any-hardware.
	for i, text := range corruptionCases {
		p := filepath.Join(tmp, fmt.Sprintf("edge%02d.toml", i))
		if err := os.WriteFile(p, []byte(text.body), 0o644); err != nil {
			t.Fatal(err)
		}
		qq := anyHW(q("file: "+text.name, "k", 2, "f32", "n=8"))
		qq.cache = p
		queries = append(queries, qq)
	}
	missing := anyHW(q("file: missing", "k", 2, "f32", "n=8"))
	missing.cache = filepath.Join(tmp, "nosuch.toml")
	queries = append(queries, missing)

	// The CLI's answers.
	goAnswers := make([]any, len(queries))
	var pyQueries []map[string]any
	for i, qq := range queries {
		path := qq.cache
		if path == "" {
			path = cachePath
		}
		args := []string{"lookup", "--json", "--kernel", qq.kernel, "--backend", qq.backend, "--world", fmt.Sprint(qq.world),
			"--dtype", qq.dtype, "--shape", qq.shape, "--cache", path}
		if qq.anyHW {
			args = append(args, "--any-hardware")
		}
		if qq.gpu != nil {
			b, _ := json.Marshal(qq.gpu)
			t.Setenv("SYMMTUNE_FAKEGPU", string(b))
		}
		code, out, errs := run(args...)
		switch code {
		case 0:
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("%s: lookup --json printed %q: %v", qq.name, out, err)
			}
			goAnswers[i] = v
		case exitNotFound:
			goAnswers[i] = map[string]any{"error": "not_found"}
		case exitUsage:
			goAnswers[i] = map[string]any{"error": "corrupt"}
		default:
			t.Fatalf("%s: lookup exit %d\n%s%s", qq.name, code, out, errs)
		}
		shape, err := space.ParseShape(qq.shape, nil)
		if err != nil {
			t.Fatal(err)
		}
		pq := map[string]any{"kernel": qq.kernel, "world": qq.world, "dtype": qq.dtype, "shape": shape, "cache": path,
			"backend": nil, "kernel_version": nil, "hardware": "any"}
		if !qq.anyHW {
			pq["backend"] = qq.backend
			pq["kernel_version"] = map[string]string{"allreduce": ar, "matmulrs": mm, "fakegpu": fake}[qq.kernel]
			pq["hardware"] = nil // Python fingerprints this machine's CPU itself
			if qq.gpu != nil {
				pq["hardware"] = qq.gpu
			}
		}
		pyQueries = append(pyQueries, pq)
	}

	// Python's answers, all from one process.
	in, _ := json.Marshal(pyQueries)
	root, _ := pyplugins.Root()
	cmd := exec.Command(python, filepath.Join(root, "python", "tests", "lookup_answers.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python lookup: %v\n%s", err, stderr.String())
	}
	var pyAnswers []any
	if err := json.Unmarshal(out, &pyAnswers); err != nil || len(pyAnswers) != len(queries) {
		t.Fatalf("python answered %d of %d queries (%v):\n%s", len(pyAnswers), len(queries), err, out)
	}
	kinds := map[string]int{}
	for i, qq := range queries {
		want, got := goAnswers[i], pyAnswers[i]
		if m, ok := got.(map[string]any); ok && m["error"] == "corrupt" {
			delete(m, "message") // the texts differ; that both refuse is what counts
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s (%s %s w%d %s):\n  symmtune lookup: %v\n  python:          %v", qq.name, qq.kernel, qq.dtype, qq.world, qq.shape, want, got)
		}
		kinds[answerKind(want)]++
	}
	// The table must exercise every kind of answer, or it tests less than it says.
	for _, k := range []string{"exact", "nearest", "other_driver", "not_found", "corrupt"} {
		if kinds[k] == 0 {
			t.Errorf("no query answered %s: %v", k, kinds)
		}
	}
	t.Logf("%d queries, answers by kind: %v", len(queries), kinds)
}

func answerKind(a any) string {
	m, _ := a.(map[string]any)
	switch {
	case m["error"] != nil:
		return fmt.Sprint(m["error"])
	case m["other_driver"] == true:
		return "other_driver"
	case m["exact"] == true:
		return "exact"
	}
	return "nearest"
}

// corruptionCases are cache files at the edges of what cache.Load accepts;
// the Python loader must accept and refuse the same ones.
var corruptionCases = func() []struct{ name, body string } {
	head := "version = 1\n[[entry]]\nkernel = \"k\"\nworld = 2\ndtype = \"f32\"\n"
	base := head + "shape = { n = 8 }\n"
	return []struct{ name, body string }{
		{"minimal entry", base},
		{"empty file", ""},
		{"no entries", "version = 1\nentry = []\n"},
		{"world as float", strings.Replace(base, "world = 2", "world = 2.0", 1)},
		{"integer figure", base + "median_us = 5\n"},
		{"string figure", base + "median_us = \"5\"\n"},
		{"NaN figure", base + "median_us = nan\n"},
		{"negative figure", base + "median_us = -1.0\n"},
		{"local date-time", base + "tuned_at = 2026-01-02T03:04:05\n"},
		{"local date", base + "tuned_at = 2026-01-02\n"},
		{"time of day only", base + "tuned_at = 03:04:05\n"},
		{"RFC 3339 string", base + "tuned_at = \"2026-01-02T03:04:05Z\"\n"},
		{"offset and fraction", base + "tuned_at = 2026-01-02T03:04:05.5+02:00\n"},
		{"hardware count as string", base + "hardware_info = { count = \"2\" }\n"},
		{"negative memory", base + "hardware_info = { memory_mib = -1 }\n"},
		{"unknown hardware key", base + "hardware_info = { foo = 1 }\n"},
		{"integral float config", base + "config = { a = 2.0 }\n"},
		{"fractional config", base + "config = { a = 2.5 }\n"},
		{"boolean config", base + "config = { a = true }\n"},
		{"float dimension", head + "shape = { n = 8.0 }\n"},
		{"zero dimension", head + "shape = { n = 0 }\n"},
		{"empty shape", head + "shape = {}\n"},
		{"comma in a name", head + "shape = { \"a,b\" = 8 }\n"},
		{"nested shape", head + "shape = { n = { a = 1 } }\n"},
		{"duplicate key", base + strings.TrimPrefix(base, "version = 1\n")},
		{"no version", strings.TrimPrefix(base, "version = 1\n")},
		{"version 2", strings.Replace(base, "version = 1", "version = 2", 1)},
		{"version as string", "version = \"1\"\n"},
		{"unknown key", base + "colour = \"red\"\n"},
		{"capitalised key", strings.Replace(base, "kernel =", "Kernel =", 1)},
		{"entry as a table", "version = 1\n[entry]\nkernel = \"k\"\n"},
		{"world too large", strings.Replace(base, "world = 2", "world = 2000000000", 1)},
		{"not TOML", "version = 1\n[[entry]\n"},
	}
}()

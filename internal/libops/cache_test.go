package libops

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/cache/storage"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/internal/redistest"
	"github.com/symmtune/symmtune/space"
)

var (
	t0      = time.Date(2026, 11, 21, 18, 40, 0, 0, time.UTC)
	testCPU = hardware.Fingerprint{Kind: "cpu", Name: "AMD EPYC 7B13", Count: 1, Cores: 2, Interconnect: "shm"}
	testGPU = hardware.Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 4, SMs: 132, MemoryMiB: 143771,
		Compute: "9.0", Driver: "580.95.05", Interconnect: "NVLink x18"}
)

func testEntry(n int64, tag string, hw hardware.Fingerprint, at time.Duration) cache.Entry {
	backend := "cpu"
	if hw.Kind == "gpu" {
		backend = "cuda"
	}
	return cache.Entry{
		Key:          cache.Key{Kernel: "allreduce", KernelVersion: "v1", Backend: backend, Hardware: hw.ID(), World: 4, Dtype: "f32", Shape: space.Shape{"n": n}},
		HardwareInfo: hw,
		Config:       space.Config{"tag": space.Str(tag)},
		MedianUS:     812.4, Trials: 36, TunedAt: t0.Add(at),
	}
}

func testEntries() []cache.Entry {
	older := testGPU
	older.Driver = "570.10.01"
	return []cache.Entry{
		testEntry(1024, "n1k", testCPU, 0),
		testEntry(4096, "n4k", testCPU, 0),
		testEntry(1<<20, "n1m", testCPU, time.Hour),
		testEntry(4096, "gpu-old", older, 0),
	}
}

// call runs op on req and decodes the answer; bad-input errors come back
// as the error.
func call(t *testing.T, op string, req any) (map[string]any, error) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Call(op, b)
	if err != nil {
		var bi *BadInputError
		if !errors.As(err, &bi) {
			t.Fatalf("%s: internal error %v", op, err)
		}
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: answer %s: %v", op, out, err)
	}
	return m, nil
}

// answers runs op on req: with bad, it wants bad input whose message
// holds want; else an answer whose sum starts with want, and returns it.
func answers(t *testing.T, op string, req any, want string, bad bool, sum func(map[string]any) string) map[string]any {
	t.Helper()
	m, err := call(t, op, req)
	if bad {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, %v; want bad input with %q", m, err, want)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := sum(m); !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
	return m
}

// summary is an answer in a few words: the match's tag, exact and
// other_driver, or the error's kind and message.
func summary(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return "error " + e["kind"].(string) + ": " + e["message"].(string)
	}
	match := m["match"].(map[string]any)
	return match["config"].(map[string]any)["tag"].(string) + " exact=" + jsonText(match["exact"]) + " other_driver=" + jsonText(match["other_driver"])
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestCacheLookup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	if err := cache.PutAll(path, testEntries()); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.toml")
	if err := os.WriteFile(damaged, []byte("version = 1\n[[entry]]\nkernel = \"k\"\nworld = \"two\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(corrupt, []byte("version = 1\n\n[entry\nkernel = \"k\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	upgraded := testGPU
	upgraded.Driver = "600.00.01"
	q := func(n int64, hw any) map[string]any {
		return map[string]any{"kernel": "allreduce", "world": 4, "dtype": "f32", "shape": map[string]int64{"n": n},
			"cache": path, "backend": "cpu", "kernel_version": "v1", "hardware": hw}
	}
	with := func(r map[string]any, k string, v any) map[string]any { r[k] = v; return r }
	for _, c := range []struct {
		name string
		req  map[string]any
		want string // a prefix of the summary, or of the bad-input message
		bad  bool
	}{
		{"exact", q(4096, testCPU), "n4k exact=true other_driver=false", false},
		{"nearest", q(2000, testCPU), "n1k exact=false", false},
		{"any hardware", with(q(1<<19, "any"), "backend", ""), "n1m exact=false", false},
		{"other driver", with(q(4096, upgraded), "backend", "cuda"), "gpu-old exact=true other_driver=true", false},
		{"this machine's CPU", q(4096, nil), "error not_found: no tuned config for allreduce world 4 f32 n=4096 in " + path, false},
		{"not found", q(4096, hardware.Fingerprint{Kind: "cpu", Name: "other"}), "error not_found: no tuned config", false},
		{"missing file", with(q(8, "any"), "cache", filepath.Join(dir, "none.toml")), "error not_found: no tuned configs: cache " + dir, false},
		{"corrupt file names file and line", with(q(8, "any"), "cache", corrupt), "error corrupt: cache " + corrupt + ": line 4", false},
		{"damaged entry is skipped", with(q(8, "any"), "cache", damaged), "error not_found: no tuned config for allreduce world 4 f32 n=8 in " + damaged + " (1 damaged entries were skipped; the first: cache " + damaged + ": line 4: entry.world", false},
		{"bad location", with(q(8, "any"), "cache", "redis://u:secret@h:99999/0"), "error corrupt: cache location redis://***@h:99999/0", false},
		{"unknown scheme", with(q(8, "any"), "cache", "s3://b/c"), "error corrupt: cache location s3://b/c: unknown scheme", false},
		{"default location from env", with(with(q(4096, testCPU), "cache", ""), "env", map[string]string{"SYMMTUNE_CACHE": path}), "n4k exact=true", false},
		{"world 0", with(q(8, "any"), "world", 0), "world size 0", true},
		{"zero dimension", q(0, "any"), `dimension "n" = 0`, true},
		{"no shape", with(q(8, "any"), "shape", map[string]int64{}), "shape:", true},
		{"string size", with(q(8, "any"), "shape", map[string]string{"n": "8"}), "shape: want an integer, got a string", true},
		{"this machine needs a backend", with(q(8, nil), "backend", ""), "hardware null fingerprints this machine", true},
		{"unknown backend", with(q(8, nil), "backend", "rocm"), `backend "rocm"`, true},
		{"hardware word", q(8, "all"), `hardware "all"`, true},
		{"fingerprint field", q(8, map[string]any{"colour": 1}), `unknown field "colour"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := answers(t, "cache.lookup", c.req, c.want, c.bad, summary)
			if strings.Contains(jsonText(m), "secret") {
				t.Errorf("the answer shows the password: %v", m)
			}
		})
	}
}

// TestCacheLookupAnswer: a match carries every field of the CLI's
// `lookup --json` and the entry's full fingerprint.
func TestCacheLookupAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := cache.PutAll(path, testEntries()); err != nil {
		t.Fatal(err)
	}
	m, err := call(t, "cache.lookup", map[string]any{"kernel": "allreduce", "world": 4, "dtype": "f32",
		"shape": map[string]int{"n": 1 << 20}, "cache": path, "hardware": "any"})
	if err != nil {
		t.Fatal(err)
	}
	match := m["match"].(map[string]any)
	want := `{"backend":"cpu","config":{"tag":"n1m"},"default_median_us":0,"dtype":"f32","exact":true,"hardware":"cpu/AMD EPYC 7B13/2c",` +
		`"hardware_info":{"cores":2,"count":1,"interconnect":"shm","kind":"cpu","name":"AMD EPYC 7B13"},"kernel":"allreduce","kernel_version":"v1",` +
		`"median_us":812.4,"min_us":0,"other_driver":false,"p90_us":0,"shape":{"n":1048576},"trials":36,"tuned_at":"2026-11-21T19:40:00Z","world":4}`
	if got := jsonText(match); got != want {
		t.Errorf("match\n got %s\nwant %s", got, want)
	}
	if m["location"] != path {
		t.Errorf("location %v, want %s", m["location"], path)
	}
}

// TestCacheFileReread: a file is read again once it changes, and not
// before.
func TestCacheFileReread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	es := testEntries()
	if err := cache.PutAll(path, es[:1]); err != nil {
		t.Fatal(err)
	}
	req := map[string]any{"kernel": "allreduce", "world": 4, "dtype": "f32", "shape": map[string]int{"n": 4096},
		"cache": path, "hardware": "any"}
	if m, _ := call(t, "cache.lookup", req); !strings.HasPrefix(summary(m), "n1k exact=false") {
		t.Fatalf("first: %s", summary(m))
	}
	first, _ := files.load(path)
	if again, _ := files.load(path); again != first {
		t.Errorf("an unchanged file was parsed again")
	}
	if err := cache.PutAll(path, es[1:2]); err != nil {
		t.Fatal(err)
	}
	if m, _ := call(t, "cache.lookup", req); !strings.HasPrefix(summary(m), "n4k exact=true") {
		t.Errorf("after the rewrite: %s", summary(m))
	}
}

func TestCacheLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := cache.PutAll(path, testEntries()); err != nil {
		t.Fatal(err)
	}
	m, err := call(t, "cache.load", map[string]any{"cache": path})
	if err != nil {
		t.Fatal(err)
	}
	es := m["entries"].([]any)
	var tags []string
	for _, e := range es {
		tags = append(tags, e.(map[string]any)["config"].(map[string]any)["tag"].(string))
	}
	// Sorted as the store sorts: kernel, backend, hardware, world, dtype,
	// shape text.
	if got := strings.Join(tags, " "); got != "n1k n1m n4k gpu-old" {
		t.Errorf("entries %s", got)
	}
	m, _ = call(t, "cache.default_path", map[string]any{"env": map[string]string{"HOME": "/h"}})
	if m["path"] != "/h/.cache/symmtune/configs.toml" {
		t.Errorf("default path %v", m["path"])
	}
}

// TestCacheRedis: a cache on a Redis server answers as the file it was
// filled from, credentials from the request's environment, and no answer
// shows them.
func TestCacheRedis(t *testing.T) {
	const user, pass = "lib-user", "lib-pass-7c1e"
	srv := redistest.Start(t, "--user", user, "on", ">"+pass, "~*", "&*", "+@all", "--user", "default", "off")
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := cache.PutAll(path, testEntries()); err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(srv.URL(3), "redis://", "redis://"+user+":"+pass+"@", 1)
	st, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Put(context.Background(), cache.Source{Name: path, Entries: testEntries()}); err != nil {
		t.Fatal(err)
	}
	fromFile, _ := call(t, "cache.load", map[string]any{"cache": path})
	fromRedis, _ := call(t, "cache.load", map[string]any{"cache": url})
	if jsonText(fromFile["entries"]) != jsonText(fromRedis["entries"]) {
		t.Errorf("redis entries\n%v\nfile entries\n%v", fromRedis["entries"], fromFile["entries"])
	}
	env := map[string]string{storage.EnvRedisUsername: user, storage.EnvRedisPassword: pass}
	for _, c := range []struct {
		name string
		loc  string
		env  map[string]string
		want string
	}{
		{"credentials in the URL", url, nil, "n1k exact=false"},
		{"credentials from env", srv.URL(3), env, "n1k exact=false"},
		{"no credentials", srv.URL(3), map[string]string{}, "error unavailable: cache " + srv.URL(3)},
		{"wrong password", strings.Replace(url, pass, "wrong-"+pass, 1), nil, "error unavailable:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := call(t, "cache.lookup", map[string]any{"kernel": "allreduce", "world": 4, "dtype": "f32",
				"shape": map[string]int{"n": 2000}, "cache": c.loc, "env": c.env, "backend": "cpu", "hardware": testCPU})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(m); !strings.HasPrefix(got, c.want) {
				t.Errorf("got %q, want %q...", got, c.want)
			}
			if s := jsonText(m); strings.Contains(s, pass) || strings.Contains(s, user) {
				t.Errorf("the answer shows credentials: %s", s)
			}
		})
	}
}

func TestHardwareOps(t *testing.T) {
	m, err := call(t, "hardware.id", map[string]any{"fingerprint": testGPU})
	if err != nil {
		t.Fatal(err)
	}
	if m["id"] != testGPU.ID() || m["id_without_driver"] != testGPU.WithoutDriver().ID() {
		t.Errorf("hardware.id: %v", m)
	}
	if _, err := call(t, "hardware.id", map[string]any{"fingerprint": map[string]any{"cores": "2"}}); err == nil {
		t.Errorf("a string core count was taken")
	}
	m, err = call(t, "hardware.fingerprint", map[string]any{"backend": "cpu", "world": 4})
	if err != nil {
		t.Fatal(err)
	}
	if m["id"] != hardware.CPU().ID() {
		t.Errorf("cpu fingerprint %v, want %s", m, hardware.CPU().ID())
	}
	if _, err := call(t, "hardware.fingerprint", map[string]any{"backend": "rocm", "world": 1}); err == nil || !strings.Contains(err.Error(), "rocm") {
		t.Errorf("backend rocm: %v", err)
	}
	// Without a GPU (or without CUDA in this build) the answer says why.
	if _, statErr := os.Stat("/dev/nvidiactl"); statErr != nil {
		m, err = call(t, "hardware.fingerprint", map[string]any{"backend": "cuda", "world": 2})
		if err != nil {
			t.Fatal(err)
		}
		if s := summary(m); !strings.HasPrefix(s, "error hardware: fingerprint 2 GPUs") && !strings.HasPrefix(s, "error hardware: fingerprint GPUs") {
			t.Errorf("cuda without a GPU: %s", s)
		}
	}
}

package cache

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

var t0 = time.Date(2026, 11, 21, 18, 40, 0, 0, time.UTC)

func cpuHW() hardware.Fingerprint {
	return hardware.Fingerprint{Kind: "cpu", Name: "AMD EPYC 7B13", Count: 1, Cores: 2, Interconnect: "shm"}
}

func gpuHW() hardware.Fingerprint {
	return hardware.Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 4, SMs: 132, MemoryMiB: 143771,
		Compute: "9.0", Driver: "580.95.05", Interconnect: "NVLink x18"}
}

// entry builds a valid allreduce entry on the cpu fingerprint; mods adjust it.
func entry(n int64, mods ...func(*Entry)) Entry {
	e := Entry{
		Key: Key{Kernel: "allreduce", KernelVersion: "3f2a9c1e", Backend: "cpu", Hardware: cpuHW().ID(),
			World: 4, Dtype: "f32", Shape: space.Shape{"n": n}},
		HardwareInfo: cpuHW(),
		Config:       space.Config{"algorithm": space.Str("two_shot"), "chunk": space.Int(4096), "threads": space.Int(2)},
		MedianUS:     812.4, MinUS: 790.1, P90US: 850, DefaultMedianUS: 1204.9,
		Trials: 36, TunedAt: t0,
	}
	for _, m := range mods {
		m(&e)
	}
	return e
}

// entriesEqual compares entries field by field, times by instant.
func entriesEqual(t *testing.T, got, want []Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d\ngot:  %v\nwant: %v", len(got), len(want), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.TunedAt.Equal(w.TunedAt) {
			t.Errorf("entry %d (%s): TunedAt = %v, want %v", i, w.Key, g.TunedAt, w.TunedAt)
		}
		g.TunedAt, w.TunedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("entry %d differs:\ngot:  %#v\nwant: %#v", i, g, w)
		}
	}
}

func mustLoad(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

func TestKeyString(t *testing.T) {
	tests := []struct {
		name string
		k    Key
		want string
	}{
		{"full", Key{Kernel: "allreduce", KernelVersion: "3f2a9c1e", Backend: "cpu", Hardware: "cpu/AMD EPYC 7B13/2c", World: 4, Dtype: "f32", Shape: space.Shape{"n": 1048576}},
			"allreduce@3f2a9c1e/cpu/cpu/AMD EPYC 7B13/2c/w4/f32/n=1048576"},
		{"no version", Key{Kernel: "gemm", Backend: "cuda", Hardware: "h", World: 8, Dtype: "bf16", Shape: space.Shape{"n": 256, "m": 512, "k": 128}},
			"gemm/cuda/h/w8/bf16/k=128,m=512,n=256"},
		{"zero", Key{}, "///w0//"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.k.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKeyEqual(t *testing.T) {
	base := entry(1024).Key
	tests := []struct {
		name string
		mod  func(*Key)
		want bool
	}{
		{"same", func(k *Key) {}, true},
		{"shape copy", func(k *Key) { k.Shape = space.Shape{"n": 1024} }, true},
		{"kernel", func(k *Key) { k.Kernel = "allgather" }, false},
		{"version", func(k *Key) { k.KernelVersion = "" }, false},
		{"backend", func(k *Key) { k.Backend = "cuda" }, false},
		{"hardware", func(k *Key) { k.Hardware = gpuHW().ID() }, false},
		{"world", func(k *Key) { k.World = 8 }, false},
		{"dtype", func(k *Key) { k.Dtype = "bf16" }, false},
		{"shape size", func(k *Key) { k.Shape = space.Shape{"n": 2048} }, false},
		{"shape dims", func(k *Key) { k.Shape = space.Shape{"m": 1024} }, false},
		{"shape extra dim", func(k *Key) { k.Shape = space.Shape{"n": 1024, "m": 1} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := base
			k.Shape = space.Shape{"n": 1024}
			tt.mod(&k)
			if got := base.Equal(k); got != tt.want {
				t.Errorf("Equal = %v, want %v", got, tt.want)
			}
			if got := k.Equal(base); got != tt.want {
				t.Errorf("Equal (reversed) = %v, want %v", got, tt.want)
			}
			if got := base.Slot().Ident() == k.Slot().Ident(); got != tt.want {
				t.Errorf("ident equality = %v, want %v", got, tt.want)
			}
			// Slots of any version: equal unless a field besides the version differs.
			if got, want := base.Slot().AnyVersion() == k.Slot().AnyVersion(), tt.want || tt.name == "version"; got != want {
				t.Errorf("AnyVersion equality = %v, want %v", got, want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	es := []Entry{
		entry(1048576),
		// Config ints and strings that look alike must stay apart.
		entry(4096, func(e *Entry) {
			e.Config = space.Config{"chunk": space.Str("4096"), "threads": space.Int(4096), "name": space.Str(`quo"te\ и ✓ tab	nl
`)}
		}),
		// Full GPU fingerprint, sub-second non-UTC time, no default measured.
		entry(1<<30, func(e *Entry) {
			e.Backend, e.HardwareInfo, e.Hardware = "cuda", gpuHW(), gpuHW().ID()
			e.World, e.Dtype = 8, "bf16"
			e.DefaultMedianUS = 0
			e.MedianUS, e.MinUS, e.P90US = 1e-7, 0, 1.5e20
			e.TunedAt = time.Date(2026, 1, 2, 3, 4, 5, 123456789, berlin)
		}),
		// Multi-dimensional shape, empty optional fields, empty config.
		{Key: Key{Kernel: "gemm_rs", World: 2, Dtype: "f16", Shape: space.Shape{"m": 512, "n": 256, "k": space.MaxDim}},
			Config: space.Config{}, Trials: 0, MedianUS: 3, TunedAt: t0},
	}
	path := filepath.Join(t.TempDir(), "sub", "dir", "configs.toml")
	if err := Put(path, es[0]); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if err := PutAll(path, es[1:]); err != nil {
		t.Fatalf("PutAll: %v", err)
	}
	s := mustLoad(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	want := make([]Entry, len(es))
	copy(want, es)
	sortEntries(want)
	for i := range want {
		want[i].TunedAt = want[i].TunedAt.UTC()
	}
	entriesEqual(t, s.Entries(), want)
	for _, e := range s.Entries() {
		if e.TunedAt.Location() != time.UTC {
			t.Errorf("%s: TunedAt location %v, want UTC", e.Key, e.TunedAt.Location())
		}
	}

	// The file is the documented format.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# symmtune tuned configs; written by `symmtune search`\n" + checksumMarker + "\nversion = 1\n",
		"interconnect = \"shm\"\n# crc32c=",
		"[[entry]]\nkernel = \"allreduce\"\nkernel_version = \"3f2a9c1e\"\nbackend = \"cpu\"\nhardware = \"cpu/AMD EPYC 7B13/2c\"\nworld = 4\ndtype = \"f32\"\nshape = { n = 1048576 }\nconfig = { algorithm = \"two_shot\", chunk = 4096, threads = 2 }\nmedian_us = 812.4\n",
		"config = { chunk = \"4096\",",
		"tuned_at = 2026-11-21T18:40:00Z\n[entry.hardware_info]\nkind = \"cpu\"\n",
		"tuned_at = 2026-01-02T02:04:05.123456789Z\n",
		"shape = { k = 1099511627776, m = 512, n = 256 }\nconfig = {}\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("file lacks %q:\n%s", want, b)
		}
	}

	// Rewriting the same entries gives the same bytes.
	path2 := filepath.Join(t.TempDir(), "configs.toml")
	if err := PutAll(path2, s.Entries()); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(path2)
	if string(b) != string(b2) {
		t.Errorf("rewrite changed the file:\n%s\n---\n%s", b, b2)
	}
}

func TestPutKeepsTheBetterEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configs.toml")
	a := entry(1024)
	b := entry(2048)
	if err := PutAll(path, []Entry{a, b}); err != nil {
		t.Fatal(err)
	}
	// A faster entry of the same kernel version replaces a's.
	a2 := entry(1024, func(e *Entry) {
		e.Config = space.Config{"algorithm": space.Str("one_shot"), "chunk": space.Int(1024), "threads": space.Int(1)}
		e.MedianUS = 1
		e.TunedAt = t0.Add(time.Hour)
	})
	if err := Put(path, a2); err != nil {
		t.Fatal(err)
	}
	entriesEqual(t, mustLoad(t, path).Entries(), []Entry{a2, b})

	// A slower one, newer or not, leaves it in place: a re-tuning that
	// measured worse must not undo a better result another node found.
	slower := entry(1024, func(e *Entry) { e.MedianUS = 3; e.TunedAt = t0.Add(2 * time.Hour) })
	before, _ := os.ReadFile(path)
	if err := PutAll(path, []Entry{a, slower}); err != nil {
		t.Fatal(err)
	}
	entriesEqual(t, mustLoad(t, path).Entries(), []Entry{a2, b})
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("a Put that changed no entry rewrote the file")
	}

	// An entry of a newer kernel version replaces the slot's entry of the
	// older one, even when slower.
	v2 := entry(1024, func(e *Entry) { e.KernelVersion = "v2"; e.MedianUS = 900; e.TunedAt = t0.Add(3 * time.Hour) })
	if err := Put(path, v2); err != nil {
		t.Fatal(err)
	}
	entriesEqual(t, mustLoad(t, path).Entries(), []Entry{v2, b})

	// Empty PutAll writes nothing.
	empty := filepath.Join(t.TempDir(), "none.toml")
	if err := PutAll(empty, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("empty PutAll created the file (stat err %v)", err)
	}
}

func TestEntriesSorted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configs.toml")
	in := []Entry{
		entry(64, func(e *Entry) { e.Kernel = "b" }),
		entry(64, func(e *Entry) { e.Kernel = "a"; e.Backend = "cuda" }),
		entry(128, func(e *Entry) { e.Kernel = "a" }),
		entry(64, func(e *Entry) { e.Kernel = "a"; e.World = 8 }),
		entry(64, func(e *Entry) { e.Kernel = "a"; e.Dtype = "bf16" }),
		entry(64, func(e *Entry) { e.Kernel = "a"; e.Hardware = "zzz" }),
		entry(64, func(e *Entry) { e.Kernel = "a" }),
	}
	for _, e := range in {
		if err := Put(path, e); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, e := range mustLoad(t, path).Entries() {
		got = append(got, e.Key.String())
	}
	want := []string{
		"a@3f2a9c1e/cpu/cpu/AMD EPYC 7B13/2c/w4/bf16/n=64",
		"a@3f2a9c1e/cpu/cpu/AMD EPYC 7B13/2c/w4/f32/n=128",
		"a@3f2a9c1e/cpu/cpu/AMD EPYC 7B13/2c/w4/f32/n=64",
		"a@3f2a9c1e/cpu/cpu/AMD EPYC 7B13/2c/w8/f32/n=64",
		"a@3f2a9c1e/cpu/zzz/w4/f32/n=64",
		"a@3f2a9c1e/cuda/cpu/AMD EPYC 7B13/2c/w4/f32/n=64",
		"b@3f2a9c1e/cpu/cpu/AMD EPYC 7B13/2c/w4/f32/n=64",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order:\ngot  %q\nwant %q", got, want)
	}
}

func TestEntriesIsACopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configs.toml")
	if err := Put(path, entry(64)); err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, path)
	es := s.Entries()
	es[0].Shape["n"] = 1
	es[0].Config["chunk"] = space.Int(1)
	if got := s.Entries()[0]; got.Shape["n"] != 64 || got.Config["chunk"] != space.Int(4096) {
		t.Errorf("mutating Entries() changed the store: %v %v", got.Shape, got.Config)
	}
}

func TestPutRejectsBadEntries(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Entry)
		want string
	}{
		{"no kernel", func(e *Entry) { e.Kernel = "" }, "kernel is missing"},
		{"world 0", func(e *Entry) { e.World = 0 }, "world 0"},
		{"world huge", func(e *Entry) { e.World = 1 << 31 }, "world 2147483648"},
		{"no dtype", func(e *Entry) { e.Dtype = "" }, "dtype is missing"},
		{"no shape", func(e *Entry) { e.Shape = nil }, "shape is missing"},
		{"zero dim", func(e *Entry) { e.Shape = space.Shape{"n": 0} }, `dimension "n" = 0`},
		{"huge dim", func(e *Entry) { e.Shape = space.Shape{"n": space.MaxDim + 1} }, `dimension "n"`},
		{"bad dim name", func(e *Entry) { e.Shape = space.Shape{"a,b": 1} }, "contains ','"},
		{"empty param name", func(e *Entry) { e.Config = space.Config{"": space.Int(1)} }, "empty name"},
		{"NaN median", func(e *Entry) { e.MedianUS = nanF() }, "median_us"},
		{"negative p90", func(e *Entry) { e.P90US = -1 }, "p90_us"},
		{"negative trials", func(e *Entry) { e.Trials = -1 }, "trials"},
		{"negative cores", func(e *Entry) { e.HardwareInfo.Cores = -2 }, "hardware_info"},
		{"bad utf8", func(e *Entry) { e.Kernel = "a\xffb" }, "UTF-8"},
		{"bad utf8 value", func(e *Entry) { e.Config = space.Config{"x": space.Str("\xff")} }, "UTF-8"},
		{"year 10000", func(e *Entry) { e.TunedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "tuned_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "configs.toml")
			err := Put(path, entry(64, tt.mod))
			if err == nil {
				t.Fatal("Put succeeded, want error")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q lacks %q or the path", err, tt.want)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("rejected Put created the file")
			}
		})
	}
}

func nanF() float64 { z := 0.0; return z / z }

func TestDefaultPath(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	tests := []struct {
		name, cache, xdg, want string
	}{
		{"explicit", "/tmp/x.toml", "/xdg", "/tmp/x.toml"},
		{"xdg", "", "/xdg", "/xdg/symmtune/configs.toml"},
		{"relative xdg ignored", "", "rel", filepath.Join(home, ".cache", "symmtune", "configs.toml")},
		{"home", "", "", filepath.Join(home, ".cache", "symmtune", "configs.toml")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SYMMTUNE_CACHE", tt.cache)
			t.Setenv("XDG_CACHE_HOME", tt.xdg)
			if got := DefaultPath(); got != tt.want {
				t.Errorf("DefaultPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDefaultPathEnv: the environment a caller passes, not this
// process's, decides (libsymmtune reads a Python process's this way).
func TestDefaultPathEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"explicit", map[string]string{"SYMMTUNE_CACHE": "redis://h:1/0", "HOME": "/h"}, "redis://h:1/0"},
		{"xdg", map[string]string{"XDG_CACHE_HOME": "/xdg", "HOME": "/h"}, "/xdg/symmtune/configs.toml"},
		{"relative xdg ignored", map[string]string{"XDG_CACHE_HOME": "rel", "HOME": "/h"}, "/h/.cache/symmtune/configs.toml"},
		{"no home: TMPDIR", map[string]string{"TMPDIR": "/t"}, "/t/symmtune/configs.toml"},
		{"nothing", map[string]string{}, "/tmp/symmtune/configs.toml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SYMMTUNE_CACHE", "/process/env/is/not/read.toml")
			if got := DefaultPathEnv(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("DefaultPathEnv() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPutThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.toml")
	link := filepath.Join(dir, "link.toml")
	if err := Put(real, entry(64)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	if err := Put(link, entry(128)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced (err %v)", err)
	}
	if n := len(mustLoad(t, real).Entries()); n != 2 {
		t.Errorf("target has %d entries, want 2", n)
	}
}

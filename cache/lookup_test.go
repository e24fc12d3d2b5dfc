package cache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

// storeOf writes es to a fresh file and loads it, so lookups run on what
// the file really holds. It writes them as they are, not through PutAll,
// which keeps one kernel version per slot: Lookup must also choose well in
// files that hold several (written by hand, or by older symmtunes).
func storeOf(t *testing.T, es ...Entry) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "configs.toml")
	for i := range es {
		es[i], _ = check(es[i])
	}
	sortEntries(es)
	data, err := encode(es)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return mustLoad(t, path)
}

func TestLookup(t *testing.T) {
	tag := func(name string) func(*Entry) {
		return func(e *Entry) { e.Config = space.Config{"tag": space.Str(name)} }
	}
	at := func(h int) func(*Entry) { return func(e *Entry) { e.TunedAt = t0.Add(time.Duration(h) * time.Hour) } }
	s := storeOf(t,
		entry(1024, tag("n1k")),
		entry(4096, tag("n4k")),
		entry(1<<20, tag("n1m")),
		// Same shape as n4k on other hardware/backend/version, newer.
		entry(4096, tag("n4k-gpu"), at(5), func(e *Entry) { e.Backend = "cuda"; e.Hardware = gpuHW().ID(); e.HardwareInfo = gpuHW() }),
		entry(4096, tag("n4k-v2"), at(3), func(e *Entry) { e.KernelVersion = "v2" }),
		// Other world and dtype.
		entry(3000, tag("w8"), func(e *Entry) { e.World = 8 }),
		entry(3000, tag("bf16"), func(e *Entry) { e.Dtype = "bf16" }),
		// Two-dimensional shapes for a second kernel.
		entry(0, tag("g-64x64"), func(e *Entry) { e.Kernel = "gemm"; e.Shape = space.Shape{"m": 64, "n": 64} }),
		entry(0, tag("g-1024x16"), func(e *Entry) { e.Kernel = "gemm"; e.Shape = space.Shape{"m": 1024, "n": 16} }),
		entry(0, tag("g-256x256"), func(e *Entry) { e.Kernel = "gemm"; e.Shape = space.Shape{"m": 256, "n": 256} }),
		// Equidistant from n=2048 (both one doubling away): the newer wins.
		entry(0, tag("t-old"), at(0), func(e *Entry) { e.Kernel = "tie"; e.Shape = space.Shape{"n": 1024} }),
		entry(0, tag("t-new"), at(1), func(e *Entry) { e.Kernel = "tie"; e.Shape = space.Shape{"n": 4096} }),
		// Equidistant and equally new: the smaller canonical key wins.
		entry(0, tag("s-a"), func(e *Entry) { e.Kernel = "same"; e.Shape = space.Shape{"n": 1024} }),
		entry(0, tag("s-b"), func(e *Entry) { e.Kernel = "same"; e.Shape = space.Shape{"n": 4096} }),
	)
	q := func(n int64, mods ...func(*Query)) Query {
		qq := Query{Kernel: "allreduce", World: 4, Dtype: "f32", Shape: space.Shape{"n": n},
			KernelVersion: "3f2a9c1e", Backend: "cpu", Hardware: cpuHW().ID()}
		for _, m := range mods {
			m(&qq)
		}
		return qq
	}
	anyOptional := func(qq *Query) { qq.KernelVersion, qq.Backend, qq.Hardware = "", "", "" }
	tests := []struct {
		name      string
		q         Query
		wantTag   string // "" = no match
		wantExact bool
	}{
		{"exact", q(4096), "n4k", true},
		{"exact other end", q(1 << 20), "n1m", true},
		{"optional omitted: newest exact", q(4096, anyOptional), "n4k-gpu", true},
		{"backend only", q(4096, anyOptional, func(qq *Query) { qq.Backend = "cpu" }), "n4k-v2", true},
		{"hardware only", q(4096, anyOptional, func(qq *Query) { qq.Hardware = cpuHW().ID() }), "n4k-v2", true},
		{"version only", q(4096, anyOptional, func(qq *Query) { qq.KernelVersion = "3f2a9c1e" }), "n4k-gpu", true},
		{"gpu hardware", q(4096, func(qq *Query) { qq.Backend = "cuda"; qq.Hardware = gpuHW().ID() }), "n4k-gpu", true},
		{"nearest below", q(2000), "n1k", false},            // |log2(2000/1024)|=0.97 < |log2(4096/2000)|=1.03
		{"nearest above", q(2100), "n4k", false},            // 1.04 vs 0.96
		{"nearest far", q(1 << 30), "n1m", false},           // past the largest
		{"nearest tiny", q(1), "n1k", false},                // below the smallest
		{"nearest log not linear", q(200000), "n1m", false}, // linear distance would pick n4k
		{"unknown version", q(4096, func(qq *Query) { qq.KernelVersion = "zzz" }), "", false},
		{"unknown hardware", q(4096, func(qq *Query) { qq.Hardware = "cpu/other/2c" }), "", false},
		{"unknown backend", q(4096, func(qq *Query) { qq.Backend = "rocm" }), "", false},
		{"other dims never", q(4096, func(qq *Query) { qq.Shape = space.Shape{"m": 4096} }), "", false},
		{"extra dim never", q(4096, func(qq *Query) { qq.Shape = space.Shape{"n": 4096, "m": 1} }), "", false},
		{"world 8 exact", q(3000, func(qq *Query) { qq.World = 8 }), "w8", true},
		{"world 2 never", q(3000, func(qq *Query) { qq.World = 2 }), "", false},
		{"dtype f16 never", q(3000, func(qq *Query) { qq.Dtype = "f16" }), "", false},
		{"dtype bf16 only itself", q(4096, func(qq *Query) { qq.Dtype = "bf16" }), "bf16", false},
		{"unknown kernel", q(4096, func(qq *Query) { qq.Kernel = "nope" }), "", false},
		{"2d exact", q(0, anyOptional, func(qq *Query) { qq.Kernel = "gemm"; qq.Shape = space.Shape{"m": 64, "n": 64} }), "g-64x64", true},
		// (128,128): 64x64 is 2 away, 256x256 is 2 away, 1024x16 is 3+3; tie on
		// distance and time, so the smaller key string (m=256 < m=64) wins.
		{"2d tie by key", q(0, anyOptional, func(qq *Query) { qq.Kernel = "gemm"; qq.Shape = space.Shape{"m": 128, "n": 128} }), "g-256x256", false},
		{"2d sum of dims", q(0, anyOptional, func(qq *Query) { qq.Kernel = "gemm"; qq.Shape = space.Shape{"m": 2048, "n": 16} }), "g-1024x16", false},
		{"2d needs both dims", q(0, anyOptional, func(qq *Query) { qq.Kernel = "gemm"; qq.Shape = space.Shape{"m": 64} }), "", false},
		{"tie newest wins", q(2048, anyOptional, func(qq *Query) { qq.Kernel = "tie" }), "t-new", false},
		{"tie key wins", q(2048, anyOptional, func(qq *Query) { qq.Kernel = "same" }), "s-a", false},
		{"bad query: zero dim", q(0), "", false},
		{"bad query: no shape", q(0, func(qq *Query) { qq.Shape = nil }), "", false},
		{"bad query: world 0", q(4096, func(qq *Query) { qq.World = 0 }), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkLookup(t, s, tt.q, tt.wantTag, tt.wantExact, false) })
	}
}

// checkLookup asserts that s answers q with the entry tagged wantTag ("":
// no match), exact and otherDriver as given.
func checkLookup(t *testing.T, s *Store, q Query, wantTag string, exact, otherDriver bool) {
	t.Helper()
	m, ok := s.Lookup(q)
	if wantTag == "" {
		if ok {
			t.Fatalf("Lookup = %s (%v), want no match", m.Entry.Key, m.Entry.Config)
		}
		return
	}
	if !ok {
		t.Fatalf("Lookup found nothing, want %s", wantTag)
	}
	if got := m.Entry.Config["tag"].Str; got != wantTag || m.Exact != exact || m.OtherDriver != otherDriver {
		t.Errorf("Lookup = %s exact=%v other_driver=%v, want %s exact=%v other_driver=%v",
			got, m.Exact, m.OtherDriver, wantTag, exact, otherDriver)
	}
}

func TestLookupEmpty(t *testing.T) {
	q := Query{Kernel: "allreduce", World: 4, Dtype: "f32", Shape: space.Shape{"n": 1}}
	var nilStore *Store
	if _, ok := nilStore.Lookup(q); ok {
		t.Error("nil store matched")
	}
	s := mustLoad(t, filepath.Join(t.TempDir(), "missing.toml"))
	if _, ok := s.Lookup(q); ok {
		t.Error("empty store matched")
	}
	if n := len(s.Entries()); n != 0 {
		t.Errorf("missing file has %d entries", n)
	}
}

func TestShapeDistance(t *testing.T) {
	tests := []struct {
		a, b space.Shape
		want float64
		ok   bool
	}{
		{space.Shape{"n": 8}, space.Shape{"n": 8}, 0, true},
		{space.Shape{"n": 8}, space.Shape{"n": 2}, 2, true},
		{space.Shape{"n": 2}, space.Shape{"n": 8}, 2, true},
		{space.Shape{"m": 2, "n": 8}, space.Shape{"m": 8, "n": 2}, 4, true},
		{space.Shape{"n": 8}, space.Shape{"m": 8}, 0, false},
		{space.Shape{"n": 8}, space.Shape{"n": 8, "m": 1}, 0, false},
	}
	for _, tt := range tests {
		got, ok := shapeDistance(tt.a, tt.b)
		if ok != tt.ok || (ok && (got-tt.want > 1e-12 || tt.want-got > 1e-12)) {
			t.Errorf("shapeDistance(%v, %v) = %v, %v; want %v, %v", tt.a, tt.b, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLookupOtherDriver: a machine with no entry of its own fingerprint uses
// one from the same hardware under another driver, and says so; its own
// entries, even of a farther shape, always come first; a different GPU,
// count, memory or link never matches.
func TestLookupOtherDriver(t *testing.T) {
	on := func(hw hardware.Fingerprint, tag string, n int64, mods ...func(*Entry)) Entry {
		return entry(n, append([]func(*Entry){func(e *Entry) {
			e.Backend, e.Hardware, e.HardwareInfo = "cuda", hw.ID(), hw
			e.Config = space.Config{"tag": space.Str(tag)}
		}}, mods...)...)
	}
	drv := func(d string) hardware.Fingerprint { f := gpuHW(); f.Driver = d; return f }
	with := func(mod func(*hardware.Fingerprint)) hardware.Fingerprint { f := gpuHW(); mod(&f); return f }
	older := drv("570.10.01")
	newer := drv("590.01.02")
	s := storeOf(t,
		on(older, "old-4k", 4096),
		on(newer, "new-4k", 4096, func(e *Entry) { e.TunedAt = t0.Add(time.Hour) }),
		on(older, "old-1m", 1<<20),
		on(gpuHW(), "own-64k", 65536),
		// Never candidates for an H200 x4 on NVLink x18, whatever the driver.
		on(with(func(f *hardware.Fingerprint) { f.Name = "NVIDIA H100 80GB HBM3"; f.MemoryMiB = 81559 }), "h100", 8192, func(e *Entry) { e.Dtype = "bf16" }),
		on(with(func(f *hardware.Fingerprint) { f.Interconnect = "PCIe" }), "pcie", 8192, func(e *Entry) { e.Dtype = "bf16" }),
		on(with(func(f *hardware.Fingerprint) { f.SMs = 114 }), "sms", 8192, func(e *Entry) { e.Dtype = "bf16" }),
		on(with(func(f *hardware.Fingerprint) { f.MemoryMiB = 97871 }), "mem", 8192, func(e *Entry) { e.Dtype = "bf16" }),
		// No hardware_info table (written by hand): nothing to compare.
		on(older, "bare", 8192, func(e *Entry) { e.Dtype = "f16"; e.HardwareInfo = hardware.Fingerprint{} }),
	)
	q := func(n int64, hw hardware.Fingerprint, mods ...func(*Query)) Query {
		qq := Query{Kernel: "allreduce", World: 4, Dtype: "f32", Shape: space.Shape{"n": n},
			KernelVersion: "3f2a9c1e", Backend: "cuda", Machine: &hw}
		for _, m := range mods {
			m(&qq)
		}
		return qq
	}
	bf16 := func(qq *Query) { qq.Dtype = "bf16" }
	tests := []struct {
		name          string
		q             Query
		wantTag       string // "" = no match
		exact, driver bool
	}{
		{"own fingerprint first, even at a farther shape", q(4096, gpuHW()), "own-64k", false, false},
		{"own exact", q(65536, gpuHW()), "own-64k", true, false},
		{"other driver: newest of the equally near", q(4096, drv("600.00.00")), "new-4k", true, true},
		{"other driver: nearest shape", q(1<<19, drv("600.00.00")), "old-1m", false, true},
		{"own again after an upgrade to a tuned driver", q(4096, older), "old-4k", true, false},
		{"another GPU never", q(8192, with(func(f *hardware.Fingerprint) { f.Name = "NVIDIA H20" }), bf16), "", false, false},
		{"another topology never", q(8192, with(func(f *hardware.Fingerprint) { f.Interconnect = "NVLink x12" }), bf16), "", false, false},
		{"another count never", q(4096, with(func(f *hardware.Fingerprint) { f.Count = 8 })), "", false, false},
		{"no fingerprint in the entry never", q(8192, drv("600.00.00"), func(qq *Query) { qq.Dtype = "f16" }), "", false, false},
		{"another kernel version never", q(4096, drv("600.00.00"), func(qq *Query) { qq.KernelVersion = "v2" }), "", false, false},
		{"exact Hardware ID filter has no fallback", q(4096, drv("600.00.00"), func(qq *Query) {
			qq.Machine = nil
			qq.Hardware = drv("600.00.00").ID()
		}), "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkLookup(t, s, tt.q, tt.wantTag, tt.exact, tt.driver) })
	}
}

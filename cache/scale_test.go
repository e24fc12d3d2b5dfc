package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/symmtune/symmtune/space"
)

// scaleEntries are n distinct entries of the shapes a large fleet cache
// holds: several kernels, worlds, dtypes and GPU fingerprints.
func scaleEntries(n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		hw := gpuHW()
		hw.Count = 1 << (i % 4)
		es[i] = Entry{
			Key: Key{Kernel: []string{"allreduce", "agmm", "matmulrs"}[i%3], KernelVersion: "3f2a9c1e", Backend: "cuda",
				Hardware: hw.ID(), World: hw.Count, Dtype: []string{"bf16", "f16", "e4m3"}[i%3/1],
				Shape: space.Shape{"m": int64(128 * (1 + i/64)), "n": int64(1024 << (i % 8)), "k": int64(4096 + i%64)}},
			HardwareInfo: hw,
			Config: space.Config{"algorithm": space.Str("two_shot"), "chunk": space.Int(int64(4096 << (i % 5))),
				"threads": space.Int(int64(1 + i%8)), "swizzle": space.Str("row")},
			MedianUS: 100 + float64(i%997)/7, MinUS: 99.5, P90US: 120.25, DefaultMedianUS: 150.125,
			Trials: 40 + i%50, TunedAt: t0.Add(time.Duration(i) * time.Second),
		}
	}
	return es
}

// BenchmarkLoad100k: issue 55's scale target, a cache of 100k entries
// loads in under 2 s using less than 10x its size in memory. It reports
// the file size, the bytes allocated per load over the file size
// (alloc/file, an upper bound on the peak), and the heap the loaded store
// keeps (live/file). Run: go test ./cache -run '^$' -bench Load100k -benchtime 3x
func BenchmarkLoad100k(b *testing.B) {
	n := scaleN()
	path := filepath.Join(b.TempDir(), "configs.toml")
	if err := PutAll(path, scaleEntries(n)); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size := float64(fi.Size())
	if keep := os.Getenv("SYMMTUNE_BENCH_KEEP"); keep != "" {
		// For measuring the CLI on it: symmtune show --cache $keep.
		if data, err := os.ReadFile(path); err != nil || os.WriteFile(keep, data, 0o644) != nil {
			b.Fatalf("keep %s: %v", keep, err)
		}
	}
	var s *Store
	var ms0, ms1 runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if s, err = Load(path); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(s.Entries()) != n || len(s.Damaged()) != 0 {
		b.Fatalf("%d entries, %d damaged", len(s.Entries()), len(s.Damaged()))
	}
	s = nil
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	runtime.ReadMemStats(&ms0)
	s, _ = Load(path)
	runtime.ReadMemStats(&ms1)
	total := ms1.TotalAlloc - ms0.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	runtime.KeepAlive(s)
	b.ReportMetric(size/1e6, "file-MB")
	b.ReportMetric(float64(total)/size, "alloc/file")
	b.ReportMetric(float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc))/size, "live/file")
}

// scaleN is 100k, or $SYMMTUNE_BENCH_ENTRIES for a quick profile.
func scaleN() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("SYMMTUNE_BENCH_ENTRIES"), &n); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// BenchmarkPut100k: storing one winner in a cache of 100k entries, which
// a search does under the file's lock (load, merge, write, fsync).
// Run: go test ./cache -run '^$' -bench Put100k -benchtime 3x
func BenchmarkPut100k(b *testing.B) {
	n := scaleN()
	path := filepath.Join(b.TempDir(), "configs.toml")
	if err := PutAll(path, scaleEntries(n)); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if err := Put(path, entry(int64(1<<30+i))); err != nil {
			b.Fatal(err)
		}
	}
}

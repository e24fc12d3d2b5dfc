package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

func mergeEntry(n int64, median float64, tag string, at time.Time, version string) cache.Entry {
	hw := hardware.Fingerprint{Kind: "cpu", Name: "Node CPU", Count: 1, Cores: 8, Interconnect: "shm"}
	return cache.Entry{
		Key: cache.Key{Kernel: "allreduce", KernelVersion: version, Backend: "cpu", Hardware: hw.ID(), World: 4,
			Dtype: "f32", Shape: space.Shape{"n": n}},
		HardwareInfo: hw, Config: space.Config{"tag": space.Str(tag)},
		MedianUS: median, Trials: 10, TunedAt: at,
	}
}

func TestCacheMerge(t *testing.T) {
	dir := t.TempDir()
	t1 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	write := func(name string, es ...cache.Entry) string {
		p := filepath.Join(dir, name)
		if err := cache.PutAll(p, es); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.toml",
		mergeEntry(1024, 10, "a-fast", t1, "v1"),
		mergeEntry(4096, 50, "a-old-version", t1, "v1"),
		mergeEntry(8192, 7, "only-a", t1, "v1"))
	b := write("b.toml",
		mergeEntry(1024, 12, "b-slow", t1.Add(time.Hour), "v1"),
		mergeEntry(4096, 60, "b-new-version", t1.Add(time.Hour), "v2"),
		mergeEntry(8192, 7, "only-a", t1, "v1"))

	out1, out2 := filepath.Join(dir, "ab.toml"), filepath.Join(dir, "ba.toml")
	code, stdout, stderr := cli(t, "cache", "merge", out1, a, b)
	if code != 0 {
		t.Fatalf("merge exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"merged 6 entries from 2 caches into " + out1 + ", which holds 3 entries",
		"1 conflicts, 1 superseded kernel versions, 0 re-measurements, 1 duplicates",
		"conflict: allreduce/cpu/cpu/Node CPU/8c/w4/f32/n=1024: kept tag=a-fast @v1 10.0 µs",
		"from " + a + ") over tag=b-slow @v1 12.0 µs",
		"superseded: allreduce/cpu/cpu/Node CPU/8c/w4/f32/n=4096: kept tag=b-new-version @v2 60.0 µs",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("merge output lacks %q:\n%s", want, stdout)
		}
	}
	if code, stdout, stderr := cli(t, "cache", "merge", out2, b, a); code != 0 {
		t.Fatalf("merge exit %d\n%s\n%s", code, stdout, stderr)
	}
	if mustRead(t, out1) != mustRead(t, out2) {
		t.Errorf("merging in the other order gave another file")
	}
	// Again, with the result among the inputs: nothing changes, and the
	// file is not even rewritten.
	before, _ := os.Stat(out1)
	time.Sleep(10 * time.Millisecond)
	if code, stdout, stderr := cli(t, "cache", "merge", out1, a, out1, b); code != 0 {
		t.Fatalf("merge exit %d\n%s\n%s", code, stdout, stderr)
	}
	after, _ := os.Stat(out1)
	if mustRead(t, out1) != mustRead(t, out2) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("merging the result again changed or rewrote it")
	}
}

func TestCacheMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	if err := cache.PutAll(good, []cache.Entry{mergeEntry(64, 1, "x", time.Now().UTC(), "v1")}); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.toml")
	if err := os.WriteFile(corrupt, []byte("version = 1\n[entry\nworld = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.toml")
	for _, args := range [][]string{
		{"cache", "merge", out},
		{"cache", "merge", out, good, filepath.Join(dir, "missing.toml")},
		{"cache", "merge", out, good, corrupt},
		{"cache", "merge", out, "ftp://host/x"},
		{"cache", "merge", "redis://h:0/0", good},
		{"cache", "merge", dir, good},
		{"cache", "merge", "/dev/null", good},
		{"cache"},                 // no command (this printed the help and exited 0)
		{"cache", "export", good}, // no such command (the same)
	} {
		code, stdout, stderr := cli(t, args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, want %d with one line\nstdout:\n%s\nstderr:\n%s", args, code, exitUsage, stdout, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: wrote %s", args, out)
		}
	}
}

package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/symmtune/symmtune/space"
)

// FuzzLoad: Load never panics, errors name the file, and whatever loads
// survives Put into a fresh file and Load again unchanged, byte-stable on
// a second rewrite.
func FuzzLoad(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.toml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files in testdata (%v)", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// A checksummed file as encode writes it, for mutations of its records.
	written, err := encode([]Entry{entry(64), entry(1<<20, func(e *Entry) {
		e.Backend, e.HardwareInfo, e.Hardware = "cuda", gpuHW(), gpuHW().ID()
	})})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(written)
	for _, s := range []string{
		"",
		"version = 1\n",
		"version = 1\n[[entry]]\n",
		"version = 1\n[[entry]]\nkernel = \"k\"\nworld = 1\ndtype = \"f32\"\nshape = { \"a b\" = 1 }\nconfig = { \"\" = 1 }\n",
		"version = 1\n[[entry]]\nkernel = \"k\\u0000\\t\"\nworld = 1\ndtype = \"f32\"\nshape = { n = 1 }\nconfig = { x = \"\\u007f\\\"\" }\ntuned_at = 2026-01-01\n",
		"version = 1\n[[entry]]\nkernel = \"k\"\nworld = 1\ndtype = \"f32\"\nshape = { n = 1 }\ntuned_at = 1979-05-27T00:32:00.999999\nmedian_us = 1e300\n",
		"version = 1\n[[entry]]\nkernel = \"k\"\nworld = 1\ndtype = \"f32\"\nshape = { n = 1 }\nconfig = { c = 4096.0 }\n",
		"version = 1\nentry = [{kernel = \"k\", world = 2, dtype = \"f16\", shape = {m = 3, n = 5}}]\n",
		"version = 1\n[[entry]]\nkernel = 'k'\nworld = 0x10\ndtype = \"\"\"f32\"\"\"\nshape = { n = 1_000 }\n",
		"[[entry]\n",
		"version = 1\nversion = 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.toml")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "cache "+in+": ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		es := s.Entries()
		out := filepath.Join(dir, "out.toml")
		if err := PutAll(out, es); err != nil {
			t.Fatalf("PutAll of loaded entries: %v", err)
		}
		s2, err := Load(out)
		if err != nil {
			b, _ := os.ReadFile(out)
			t.Fatalf("reload: %v\n%s", err, b)
		}
		entriesEqual(t, s2.Entries(), es)

		// A second rewrite is byte-identical.
		first, _ := os.ReadFile(out)
		out2 := filepath.Join(dir, "out2.toml")
		if err := PutAll(out2, s2.Entries()); err != nil {
			t.Fatal(err)
		}
		if second, _ := os.ReadFile(out2); string(first) != string(second) {
			t.Fatalf("rewrite not stable:\n%s\n---\n%s", first, second)
		}
	})
}

// FuzzFastRecord: whatever the fast record reader accepts, the TOML decoder
// reads the same way (same entry, same keys, same verdict of check), so
// the fast path never changes what a file means.
func FuzzFastRecord(f *testing.F) {
	for _, e := range []Entry{entry(64), entry(1<<20, func(e *Entry) {
		e.Backend, e.HardwareInfo, e.Hardware = "cuda", gpuHW(), gpuHW().ID()
		e.Config["s"] = space.Str("x y")
		e.TunedAt = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 5400))
		e.MedianUS, e.MinUS = 1e-7, 95
	})} {
		b, err := encode([]Entry{e})
		if err != nil {
			f.Fatal(err)
		}
		_, recs := splitRecords(b)
		f.Add(recs[0].body)
	}
	f.Add([]byte("[[entry]]\nkernel = \"k\"\nworld = 1\nmedian_us = 95\nshape = { n = 1 }\nconfig = {}\n"))
	f.Add([]byte("[[entry]]\nworld = 01\nmedian_us = 1_0\ntuned_at = 2026-01-01T00:00:00z\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, defined, ok := fastRecord(body, &interner{m: map[string]string{}})
		if !ok {
			return
		}
		var doc fileDoc
		md, err := toml.NewDecoder(bytes.NewReader(body)).Decode(&doc)
		if err != nil {
			t.Fatalf("fast path read what the decoder refuses (%v):\n%s", err, body)
		}
		if len(doc.Entry) != 1 || len(md.Undecoded()) > 0 {
			t.Fatalf("fast path read one entry; the decoder %d entries, undecoded %v", len(doc.Entry), md.Undecoded())
		}
		var keys keySet
		for _, k := range md.Keys() {
			if err := checkKey(k); err != nil {
				t.Fatalf("fast path read a key the format refuses: %v", err)
			}
			if len(k) == 2 {
				keys = keys.add(k[1])
			}
		}
		if keys != defined {
			t.Fatalf("keys %b, the decoder's %b", defined, keys)
		}
		a, errA := checkOwned(fast)
		b, errB := fromFile(doc.Entry[0])
		if errB == nil {
			b, errB = checkOwned(b)
		}
		if (errA == nil) != (errB == nil) {
			t.Fatalf("check: fast %v, decoder %v", errA, errB)
		}
		if errA == nil {
			entriesEqual(t, []Entry{a}, []Entry{b})
		}
	})
}

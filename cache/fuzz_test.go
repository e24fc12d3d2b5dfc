package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

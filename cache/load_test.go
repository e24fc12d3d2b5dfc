package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/space"
)

func TestLoadValidTestdata(t *testing.T) {
	s := mustLoad(t, filepath.Join("testdata", "valid.toml"))
	es := s.Entries()
	if len(es) != 2 {
		t.Fatalf("%d entries, want 2", len(es))
	}
	a, g := es[0], es[1]
	if a.Kernel != "allreduce" || a.World != 4 || !a.Shape.Equal(space.Shape{"n": 1048576}) ||
		a.Config.String() != "algorithm=two_shot,chunk=4096,threads=2" || a.MedianUS != 812.4 ||
		a.HardwareInfo.ID() != a.Hardware || !a.TunedAt.Equal(t0) {
		t.Errorf("allreduce entry wrong: %#v", a)
	}
	if g.Kernel != "gemm_rs" || g.KernelVersion != "" || g.MedianUS != 95 || g.DefaultMedianUS != 0 ||
		g.HardwareInfo.ID() != g.Hardware || g.Config["block_m"] != space.Int(128) ||
		!g.TunedAt.Equal(time.Date(2026, 11, 22, 7, 0, 0, 5e8, time.UTC)) || g.TunedAt.Location() != time.UTC {
		t.Errorf("gemm_rs entry wrong: %#v", g)
	}
}

func TestLoadErrors(t *testing.T) {
	const head = "version = 1\n[[entry]]\nkernel = \"allreduce\"\nworld = 4\ndtype = \"f32\"\nshape = { n = 64 }\n"
	const headOK = head + "median_us = 3.5\ntuned_at = 2026-11-21T18:40:00Z\n"
	tests := []struct {
		name string
		file string // testdata file, or
		text string // contents
		want []string
		// whole: the file cannot be read at all (its header); otherwise
		// one entry is damaged and entries others load.
		whole   bool
		entries int
	}{
		{name: "syntax", file: "broken_syntax.toml", want: []string{"line 7:"}},
		{name: "type mismatch", file: "broken_world_type.toml", want: []string{"line 7:", "entry.world"}},
		{name: "missing kernel", file: "broken_missing_kernel.toml", want: []string{"[[entry]] #2", "kernel is missing"}, entries: 1},
		{name: "non-integer shape", file: "broken_shape.toml", want: []string{"[[entry]] #1", `dimension "n"`, "not an integer"}},
		{name: "unknown version", file: "broken_version.toml", want: []string{"format version 2 is not supported"}, whole: true},
		{name: "unterminated string", text: "version = 1\n\n[[entry]]\nkernel = \"allreduce\n", want: []string{"line 4:"}},
		{name: "no version", text: "[[entry]]\nkernel = \"a\"\nworld = 1\ndtype = \"f32\"\nshape = { n = 1 }\n", want: []string{"no format version"}, whole: true},
		{name: "version string", text: "version = \"1\"\n", want: []string{"line 1:", "version"}, whole: true},
		{name: "unknown top key", text: "version = 1\ncolour = \"red\"\n", want: []string{`unknown key "colour"`}, whole: true},
		{name: "unknown entry key", text: head + "colour = \"red\"\n", want: []string{`unknown key "entry.colour"`}},
		{name: "miscased key", text: head + "Trials = 3\n", want: []string{`unknown key "entry.Trials"`}},
		{name: "unknown hardware key", text: head + "[entry.hardware_info]\nflavour = 1\n", want: []string{`unknown key "entry.hardware_info.flavour"`}},
		{name: "nested shape", text: head + "[entry.config]\nx = { y = 1 }\n", want: []string{`unknown key "entry.config.x.y"`}},
		{name: "entry not array", text: "version = 1\n[entry]\nkernel = \"a\"\n", want: []string{"line"}, whole: true},
		{name: "world 0", text: strings.Replace(head, "world = 4", "world = 0", 1), want: []string{"[[entry]] #1", "world 0"}},
		{name: "world negative", text: strings.Replace(head, "world = 4", "world = -3", 1), want: []string{"world -3"}},
		{name: "no dtype", text: strings.Replace(head, "dtype = \"f32\"\n", "", 1), want: []string{"dtype is missing"}},
		{name: "no shape", text: strings.Replace(head, "shape = { n = 64 }\n", "", 1), want: []string{"shape is missing"}},
		{name: "zero dim", text: strings.Replace(head, "n = 64", "n = 0", 1), want: []string{`dimension "n" = 0`}},
		{name: "string dim", text: strings.Replace(head, "n = 64", `n = "64"`, 1), want: []string{`dimension "n"`, "string", "not an integer"}},
		{name: "config bool", text: head + "config = { fast = true }\n", want: []string{`parameter "fast"`, "boolean", "neither an integer nor a string"}},
		{name: "config float", text: head + "config = { chunk = 1.5 }\n", want: []string{`parameter "chunk"`, "neither an integer nor a string"}},
		{name: "config array", text: head + "config = { chunk = [1] }\n", want: []string{`parameter "chunk"`, "array"}},
		{name: "nan time", text: head + "median_us = nan\n", want: []string{"median_us"}},
		{name: "negative time", text: head + "min_us = -1.0\n", want: []string{"min_us"}},
		{name: "time only", text: head + "tuned_at = 18:40:00\n", want: []string{"tuned_at", "no date"}},
		{name: "negative cores", text: head + "[entry.hardware_info]\ncores = -1\n", want: []string{"hardware_info", "cores"}},
		{name: "duplicate key", text: headOK + strings.TrimPrefix(headOK, "version = 1\n"), want: []string{"line 9:", "[[entry]] #2", "same key as [[entry]] #1"}, entries: 1},
		{name: "binary", text: "\x00\x01\x02", want: []string{"line 1"}, whole: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			if tt.file == "" {
				path = filepath.Join(t.TempDir(), "configs.toml")
				if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Load(path)
			var msg string
			switch {
			case tt.whole && err == nil:
				t.Fatalf("Load succeeded with %d entries, want an error", len(s.Entries()))
			case !tt.whole && err != nil:
				t.Fatalf("Load: %v, want the entry reported damaged and skipped", err)
			case tt.whole:
				msg = err.Error()
			default:
				d := s.Damaged()
				if len(d) != 1 {
					t.Fatalf("%d damaged, want 1: %v", len(d), d)
				}
				msg = d[0].Error()
				if n := len(s.Entries()); n != tt.entries {
					t.Errorf("%d entries loaded, want %d", n, tt.entries)
				}
			}
			if !strings.HasPrefix(msg, "cache "+path+": ") {
				t.Errorf("error %q does not start with %q", msg, "cache "+path+": ")
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestLoadEmptyish(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n", "version = 1\n", "\ufeffversion = 1\n"} {
		path := filepath.Join(t.TempDir(), "configs.toml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path)
		if err != nil {
			t.Errorf("Load(%q): %v", text, err)
			continue
		}
		if n := len(s.Entries()); n != 0 {
			t.Errorf("Load(%q): %d entries", text, n)
		}
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Load(directory) = %v, want an error naming it", err)
	}
}

// Put must refuse to touch a file whose header it cannot read, byte for
// byte: nothing in it can be trusted.
func TestPutOnCorruptFile(t *testing.T) {
	for _, name := range []string{"broken_version.toml"} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "configs.toml")
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			_, loadErr := Load(path)
			err = Put(path, entry(64))
			if err == nil {
				t.Fatal("Put on a corrupt file succeeded")
			}
			if loadErr == nil || err.Error() != loadErr.Error() {
				t.Errorf("Put error %q, want the Load error %v", err, loadErr)
			}
			after, _ := os.ReadFile(path)
			if string(after) != string(orig) {
				t.Errorf("Put changed the corrupt file:\n%s", after)
			}
			assertNoTemps(t, dir)
		})
	}
}

// assertNoTemps fails if dir holds anything but cache files and lock files.
func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestPutFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "configs.toml")
	if err := Put(path, entry(64)); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	sawTemp := false
	beforeRename = func(tmp string) error {
		_, err := os.Stat(tmp)
		sawTemp = err == nil
		return os.ErrDeadlineExceeded
	}
	defer func() { beforeRename = nil }()
	err := Put(path, entry(128))
	if err == nil || !strings.Contains(err.Error(), "write cache "+path) {
		t.Fatalf("Put error = %v, want a wrapped write error", err)
	}
	if !sawTemp {
		t.Error("the hook did not see the temp file")
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(orig) {
		t.Error("failed Put changed the file")
	}
	assertNoTemps(t, dir)
}

func TestPutParentIsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(file, "configs.toml")
	if err := Put(path, entry(64)); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Put under a file = %v, want an error naming %s", err, path)
	}
}

// A damaged entry never blocks a new winner: Put stores it, keeps the whole
// entries, and moves the damaged text to path.damaged, so nothing is lost.
func TestPutSetsDamageAside(t *testing.T) {
	for _, tt := range []struct {
		name    string
		keep    int // whole entries of the file
		damaged []string
	}{
		{"broken_syntax.toml", 0, []string{"world = 4 4"}},
		{"broken_missing_kernel.toml", 1, []string{"[[entry]]\nworld = 4"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("testdata", tt.name))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "configs.toml")
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			before := mustLoad(t, path)
			if len(before.Damaged()) == 0 {
				t.Fatal("no damage reported")
			}
			m, err := putSources(path, []Source{{Name: "new", Entries: []Entry{entry(1 << 20)}}})
			if err != nil {
				t.Fatalf("Put on a file with a damaged entry: %v", err)
			}
			if m.SetAsideTo != path+DamagedSuffix || len(m.SetAside) != len(before.Damaged()) {
				t.Errorf("set aside %d to %q, want %d to %q", len(m.SetAside), m.SetAsideTo, len(before.Damaged()), path+DamagedSuffix)
			}
			after := mustLoad(t, path)
			if n := len(after.Entries()); n != tt.keep+1 {
				t.Errorf("%d entries after Put, want %d", n, tt.keep+1)
			}
			if d := after.Damaged(); len(d) != 0 {
				t.Errorf("still damaged after Put: %v", d)
			}
			aside, err := os.ReadFile(path + DamagedSuffix)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.damaged {
				if !strings.Contains(string(aside), w) {
					t.Errorf("%s lacks %q:\n%s", path+DamagedSuffix, w, aside)
				}
			}
			assertNoTemps(t, dir)
		})
	}
}

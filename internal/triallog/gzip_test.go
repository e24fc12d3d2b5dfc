package triallog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gzipped is text compressed as `gzip -9n` would store it.
func gzipped(t testing.TB, text []byte) []byte {
	t.Helper()
	return Gzip(text)
}

// writeBoth writes text as dir/name.jsonl and, gzipped, dir/name.jsonl.gz.
func writeBoth(t *testing.T, name, text string) (plain, gz string) {
	t.Helper()
	dir := t.TempDir()
	plain, gz = filepath.Join(dir, name+".jsonl"), filepath.Join(dir, name+".jsonl.gz")
	if err := os.WriteFile(plain, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gz, gzipped(t, []byte(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return plain, gz
}

// TestReadGzipSameAsPlain: a gzipped log reads as the plain one does:
// the same trials, line numbers and torn line, or the same line error.
func TestReadGzipSameAsPlain(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"complete", okLine + "\n" + hangLine + "\n"},
		{"no final newline", okLine + "\n" + hangLine},
		{"blank lines and crlf", okLine + "\r\n\n  \n" + hangLine + "\r\n"},
		{"torn last line", okLine + "\n" + hangLine + "\n" + tornStart},
		{"empty", ""},
		{"malformed middle line", okLine + "\nnot json\n" + hangLine + "\n"},
		{"unknown status", `{"config":{"a":1},"status":"great"}` + "\n"},
		{"many lines", strings.Repeat(okLine+"\n"+hangLine+"\n", 5000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, gz := writeBoth(t, "trials", tc.text)
			want, wantErr := Read(plain)
			got, gotErr := Read(gz)
			if wantErr != nil {
				var le *LineError
				if !errors.As(gotErr, &le) || le.Path != gz || gotErr.Error() != strings.Replace(wantErr.Error(), plain, gz, 1) {
					t.Fatalf("error %v, want the plain log's %v naming %s", gotErr, wantErr, gz)
				}
				return
			}
			if gotErr != nil {
				t.Fatal(gotErr)
			}
			if got.Path != gz {
				t.Errorf("path %q, want %q", got.Path, gz)
			}
			got.Path = want.Path
			if !reflect.DeepEqual(got, want) {
				t.Errorf("gzipped log reads as %+v, plain as %+v", got, want)
			}
		})
	}
}

// TestReadCorruptGzip: gzip data that cannot be read is one
// *CorruptError naming the file, whatever the damage.
func TestReadCorruptGzip(t *testing.T) {
	text := []byte(strings.Repeat(okLine+"\n"+hangLine+"\n", 200))
	good := gzipped(t, text)
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x5a
		return b
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		errIs error // what the error wraps, when it is certain
	}{
		{"plain text named .gz", text, gzip.ErrHeader},
		{"empty file", nil, io.ErrUnexpectedEOF},
		{"cut short", good[:len(good)/2], nil},
		{"cut before the trailer", good[:len(good)-4], nil},
		{"damaged body", flip(len(good) / 2), nil},
		{"damaged early", flip(20), nil},
		{"wrong checksum", flip(len(good) - 6), gzip.ErrChecksum},
		{"trailing garbage", append(bytes.Clone(good), "this is not gzip data\n"...), gzip.ErrHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trials.jsonl.gz")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			lf, err := Read(path)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != path {
				t.Fatalf("read %v, error %v (%T): want a *CorruptError for %s", lf, err, err, path)
			}
			if tc.errIs != nil && !errors.Is(err, tc.errIs) {
				t.Errorf("error %v is not %v", err, tc.errIs)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, path+": corrupt gzip data: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s as corrupt gzip data", msg, path)
			}
		})
	}
}

// TestGlob: plain and gzipped logs both, in name order as if none were
// gzipped; other files are left out.
func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.jsonl.gz", "a.jsonl", "a-x.jsonl", "c.jsonl", "c.txt", "d.jsonl.xz", "ab.jsonl.gz"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	if want := []string{"a-x.jsonl", "a.jsonl", "ab.jsonl.gz", "b.jsonl.gz", "c.jsonl"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Glob: %v, want %v", got, want)
	}
	if _, err := Glob("[bad"); err == nil {
		t.Error("a bad pattern gave no error")
	}
}

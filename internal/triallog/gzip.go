package triallog

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// A trial log may be stored gzipped: recorded GPU landscapes are megabytes
// of JSON that compress about tenfold, and the tree is copied to GPU
// machines under a size limit. Every reader goes through Read or
// ParseFile, so a .gz log reads like a plain one. Writers still write
// plain JSONL: a killed search leaves a plain log whole up to its last
// trial, and appending to a gzip stream would not.

// GzipExt ends the name of a gzipped trial log.
const GzipExt = ".gz"

// Gzipped reports whether Read decompresses the log at path: its name
// ends in GzipExt. The name decides, not the bytes, so a plain log is
// never taken for a damaged gzip one.
func Gzipped(path string) bool { return strings.HasSuffix(path, GzipExt) }

// CorruptError is a gzipped log whose compressed bytes cannot be read:
// not gzip at all, damaged, or cut short. Err is gzip's or flate's error.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: corrupt gzip data: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ParseFile parses the bytes of the file at path, read from r: gunzipped
// first when path ends in .gz, then as Parse. Damaged gzip data is one
// *CorruptError naming the file, even where the damage would first show
// as a line that is not a trial.
func ParseFile(r io.Reader, path string) (*File, error) {
	if !Gzipped(path) {
		return Parse(r, path)
	}
	zr, err := gzip.NewReader(r)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // an empty file: say it is cut short, not "EOF"
	}
	if err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	defer zr.Close()
	src := &errReader{r: zr}
	lf, err := Parse(src, path)
	var le *LineError
	if errors.As(err, &le) {
		// Parse stops at the first bad line. Read on: if the stream is
		// damaged, that line is likely garbage from the damage, and the
		// gzip error is the one that says what is wrong.
		_, _ = io.Copy(io.Discard, src)
	}
	if src.err != nil {
		return nil, &CorruptError{Path: path, Err: src.err}
	}
	return lf, err
}

// errReader keeps the first error its reader returned other than io.EOF:
// Parse wraps read errors, and ParseFile needs to know a gzip one for what
// it is.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}

// Glob returns the trial logs that pattern (a filepath.Glob pattern of
// plain logs, such as "dir/*.jsonl") names, plain or gzipped: the matches
// of pattern and of pattern+".gz". They are sorted by name as if none were
// gzipped, so compressing a log does not move it in the list.
func Glob(pattern string) ([]string, error) {
	plain, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	gz, err := filepath.Glob(pattern + GzipExt)
	if err != nil {
		return nil, err
	}
	files := append(plain, gz...)
	slices.SortFunc(files, func(a, b string) int {
		return cmp.Or(strings.Compare(strings.TrimSuffix(a, GzipExt), strings.TrimSuffix(b, GzipExt)), strings.Compare(a, b))
	})
	return files, nil
}

// Gzip compresses a log's text for a .gz log: gzip's best level, no name
// or time in the header (as `gzip -9n`), so its bytes depend on the text
// and the Go version alone. Writers of landscapes and the tests use it;
// searches still write plain logs.
func Gzip(text []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // a valid level: no error
	zw.Write(text)                                         // a bytes.Buffer takes every write
	zw.Close()
	return b.Bytes()
}

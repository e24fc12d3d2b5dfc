package triallog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Writer appends one JSON line per trial. Each line is written with a
// single write to an O_APPEND file and synced, so an interrupted or killed
// search leaves the log complete up to its last finished trial.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Open opens (creating or appending to) a trial log.
func Open(path string) (*Writer, error) {
	w := &Writer{path: path}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// New returns a trial log that creates path, and its directory, only when
// the first trial is written: a search refused for bad input (known only
// once a plugin has described its kernel) leaves no empty log behind.
func New(path string) *Writer { return &Writer{path: path} }

func (w *Writer) open() error {
	if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
		return fmt.Errorf("create trial log directory: %w", err)
	}
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open trial log %s: %w", w.path, err)
	}
	if err := dropTornTail(f); err != nil {
		f.Close()
		return fmt.Errorf("trial log %s: %w", w.path, err)
	}
	w.f = f
	return nil
}

// dropTornTail cuts a log back to its last complete line. A host killed
// while writing leaves a torn last line; appending after it (--resume)
// would glue the next trial to it, making one malformed line in the middle
// of the log that no reader may skip. The torn bytes hold no trial.
func dropTornTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	end := st.Size()
	buf := make([]byte, 4096)
	for pos := end; pos > 0; {
		n := min(int64(len(buf)), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return truncateTorn(f, pos+int64(i)+1, end)
		}
	}
	return truncateTorn(f, 0, end)
}

// truncateTorn cuts f at keep if the bytes from keep to end are the start
// of a line this package wrote (a file that only ends without a newline,
// not being a trial log, is left alone).
func truncateTorn(f *os.File, keep, end int64) error {
	if keep == end {
		return nil
	}
	head := make([]byte, min(end-keep, int64(len(lineStart))))
	if _, err := f.ReadAt(head, keep); err != nil {
		return err
	}
	if !bytes.HasPrefix([]byte(lineStart), head) {
		return nil
	}
	return f.Truncate(keep)
}

// lineStart is how every line Write writes begins (Config is Result's
// first field).
const lineStart = `{"config":`

// Path is where the log is.
func (w *Writer) Path() string { return w.path }

// Write appends one result.
func (w *Writer) Write(r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode trial: %w", err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("write trial log %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync trial log %s: %w", w.path, err)
	}
	return nil
}

// Close closes the log (if it was ever opened).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}

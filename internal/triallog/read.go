package triallog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// File is a trial log read back: its trials in the order they were
// written, with their line numbers.
type File struct {
	Path    string
	Results []Result
	Lines   []int // Lines[i] is the line number of Results[i]
	// Torn is the number of a last line that was cut short (the host was
	// killed while writing it) and skipped; 0 when there is none.
	Torn int
}

// LineError is a line that is not a trial: Err says why (a JSON error,
// ErrNoConfig, ErrNoStatus or a *StatusError).
type LineError struct {
	Path string
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s: line %d: not a symmtune trial: %v", e.Path, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Why a line that is valid JSON is not a trial.
var (
	ErrNoConfig = errors.New("no config")
	ErrNoStatus = errors.New("no status")
)

// StatusError is a line whose status is none of Statuses.
type StatusError struct{ Status Status }

func (e *StatusError) Error() string {
	return fmt.Sprintf("status %q is unknown (want %s)", e.Status, StatusList())
}

// StatusList is the known statuses in words: "ok, wrong, …, crash or
// invalid".
func StatusList() string {
	names := make([]string, len(Statuses))
	for i, s := range Statuses {
		names[i] = string(s)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Read reads the trial log at path, gunzipping it when the name ends in
// .gz; see ParseFile and Parse.
func Read(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseFile(f, path)
}

// Parse reads a trial log from r; path is the name errors give it. Every
// non-blank line must be a JSON object with a config and a known status.
// A last line without its newline that is not such an object was cut
// short by a killed host: it is skipped and its number kept in Torn. Any
// other malformed line is a *LineError. An empty log is no error.
func Parse(r io.Reader, path string) (*File, error) {
	lf := &File{Path: path}
	rd := bufio.NewReader(r)
	for n := 1; ; n++ {
		b, err := rd.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		last := err != nil
		if text := bytes.TrimSpace(b); len(text) > 0 {
			res, perr := parseLine(text)
			switch {
			case perr == nil:
				lf.Results = append(lf.Results, res)
				lf.Lines = append(lf.Lines, n)
			case last && b[len(b)-1] != '\n':
				lf.Torn = n
			default:
				return nil, &LineError{Path: path, Line: n, Err: perr}
			}
		}
		if last {
			return lf, nil
		}
	}
}

func parseLine(text []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(text, &r); err != nil {
		return r, err
	}
	if len(r.Config) == 0 {
		return r, ErrNoConfig
	}
	if r.Status == "" {
		return r, ErrNoStatus
	}
	if !slices.Contains(Statuses, r.Status) {
		return r, &StatusError{r.Status}
	}
	return r, nil
}

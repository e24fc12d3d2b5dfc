package tuner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/symmtune/symmtune/space"
)

// TrialLog appends one JSON line per trial. Each line is written with a
// single write to an O_APPEND file and synced, so an interrupted or killed
// search leaves the log complete up to its last finished trial.
type TrialLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenTrialLog opens (creating or appending to) a trial log.
func OpenTrialLog(path string) (*TrialLog, error) {
	l := &TrialLog{path: path}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// NewTrialLog returns a trial log that creates path, and its directory,
// only when the first trial is written: a search refused for bad input
// (known only once a plugin has described its kernel) leaves no empty log
// behind.
func NewTrialLog(path string) *TrialLog { return &TrialLog{path: path} }

func (l *TrialLog) open() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("create trial log directory: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open trial log %s: %w", l.path, err)
	}
	if err := dropTornTail(f); err != nil {
		f.Close()
		return fmt.Errorf("trial log %s: %w", l.path, err)
	}
	l.f = f
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
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
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
func (l *TrialLog) Path() string { return l.path }

// Write appends one result.
func (l *TrialLog) Write(r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode trial: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("write trial log %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync trial log %s: %w", l.path, err)
	}
	return nil
}

// Close closes the log (if it was ever opened).
func (l *TrialLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// Resume holds the trials an earlier run logged, so a resumed search skips
// configs it already measured (whatever their status: a config that hung
// is not tried again either).
type Resume struct {
	mu   sync.Mutex
	done map[string]Result
}

func resumeKey(kernel, backend string, world int, dtype, shape string) string {
	return kernel + "|" + backend + "|" + strconv.Itoa(world) + "|" + dtype + "|" + shape
}

// LogFile is a trial log read back: its trials in the order they were
// written, with their line numbers.
type LogFile struct {
	Path    string
	Results []Result
	Lines   []int // Lines[i] is the line number of Results[i]
	// Torn is the number of a last line that was cut short (the host was
	// killed while writing it) and skipped; 0 when there is none.
	Torn int
}

// ReadTrialLog reads a trial log. A line must be a JSON object with a
// config and a known status. A last line without its newline that is not
// such an object was cut short by a killed host: it is skipped and its
// number kept in Torn. Any other malformed line is an *InputError naming
// the file and line. An empty file is an empty log.
func ReadTrialLog(path string) (*LogFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &InputError{err}
	}
	defer f.Close()
	lf := &LogFile{Path: path}
	rd := bufio.NewReader(f)
	for n := 1; ; n++ {
		b, err := rd.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		last := err != nil
		if text := bytes.TrimSpace(b); len(text) > 0 {
			r, perr := parseTrialLine(text)
			switch {
			case perr == nil:
				lf.Results = append(lf.Results, r)
				lf.Lines = append(lf.Lines, n)
			case last && b[len(b)-1] != '\n':
				lf.Torn = n
			default:
				return nil, inputErrorf("%s: line %d: not a symmtune trial: %v", path, n, perr)
			}
		}
		if last {
			break
		}
	}
	return lf, nil
}

func parseTrialLine(text []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(text, &r); err != nil {
		return r, err
	}
	if len(r.Config) == 0 {
		return r, errors.New("no config")
	}
	if !slices.Contains(Statuses, r.Status) {
		return r, fmt.Errorf("status %q is none of %v", r.Status, Statuses)
	}
	return r, nil
}

// LoadResume reads a trial log for --resume. A torn last line (the host
// was killed while writing it) is skipped; any other malformed line is an
// error naming the file and line.
func LoadResume(path string) (*Resume, error) {
	lf, err := ReadTrialLog(path)
	if err != nil {
		return nil, fmt.Errorf("resume log: %w", err)
	}
	res := &Resume{done: map[string]Result{}}
	for _, r := range lf.Results {
		if !r.Refined {
			res.done[resumeKey(r.Kernel, r.Backend, r.World, r.Dtype, r.Shape)+"#"+r.Config.String()] = r
		}
	}
	return res, nil
}

// Len is the number of logged trials not yet taken.
func (r *Resume) Len() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.done)
}

// take returns and forgets the logged result of c in the given job.
func (r *Resume) take(job string, c space.Config) (Result, bool) {
	if r == nil {
		return Result{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := job + "#" + c.String()
	res, ok := r.done[k]
	delete(r.done, k)
	return res, ok
}

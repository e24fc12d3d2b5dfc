package tuner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open trial log %s: %w", l.path, err)
	}
	l.f = f
	return nil
}

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

// LoadResume reads a trial log. A torn last line (the host was killed while
// writing it) is skipped; any other malformed line is an error naming the
// file and line.
func LoadResume(path string) (*Resume, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open resume log %s: %w", path, err)
	}
	defer f.Close()
	res := &Resume{done: map[string]Result{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var pendingErr error
	line := 0
	for sc.Scan() {
		line++
		if pendingErr != nil {
			return nil, pendingErr
		}
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Config == nil || r.Status == "" {
			if err == nil {
				err = errors.New("missing config or status")
			}
			pendingErr = &InputError{fmt.Errorf("resume log %s: line %d: %v", path, line, err)}
			continue
		}
		if r.Refined {
			continue
		}
		res.done[resumeKey(r.Kernel, r.Backend, r.World, r.Dtype, r.Shape)+"#"+r.Config.String()] = r
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read resume log %s: %w", path, err)
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

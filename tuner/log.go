package tuner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
)

// TrialLog is the trial log a search writes (internal/triallog owns it).
type TrialLog = triallog.Writer

// OpenTrialLog opens (creating or appending to) a trial log.
func OpenTrialLog(path string) (*TrialLog, error) { return triallog.Open(path) }

// NewTrialLog returns a trial log that creates path, and its directory,
// only when the first trial is written: a search refused for bad input
// (known only once a plugin has described its kernel) leaves no empty log
// behind.
func NewTrialLog(path string) *TrialLog { return triallog.New(path) }

// Resume holds the trials an earlier run logged, so a resumed search skips
// configs it already measured (whatever their status: a config that hung
// is not tried again either).
type Resume struct {
	mu   sync.Mutex
	done map[trialID]Result
}

// trialID names one logged trial: its job (resumeKey) and its config.
type trialID struct {
	job    string
	config space.ConfigKey
}

func resumeKey(kernel, backend string, world int, dtype, shape string) string {
	return kernel + "|" + backend + "|" + strconv.Itoa(world) + "|" + dtype + "|" + shape
}

// LogFile is a trial log read back: its trials in the order they were
// written, with their line numbers, and the number of a torn last line.
type LogFile = triallog.File

// ReadTrialLog reads a trial log as triallog.Read does (gunzipped when
// the name ends in .gz): a torn last line (the host was killed while
// writing it) is skipped and its number kept in Torn. A file that cannot
// be opened, damaged gzip data and any other malformed line are an
// *InputError naming the file (and the line). An empty file is an empty
// log.
func ReadTrialLog(path string) (*LogFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &InputError{err}
	}
	defer f.Close()
	lf, err := triallog.ParseFile(f, path)
	var le *triallog.LineError
	var ce *triallog.CorruptError
	if errors.As(err, &le) || errors.As(err, &ce) {
		return nil, &InputError{err}
	}
	return lf, err
}

// LoadResume reads a trial log for --resume. A torn last line (the host
// was killed while writing it) is skipped; any other malformed line is an
// error naming the file and line.
func LoadResume(path string) (*Resume, error) {
	lf, err := ReadTrialLog(path)
	if err != nil {
		return nil, fmt.Errorf("resume log: %w", err)
	}
	res := &Resume{done: map[trialID]Result{}}
	for _, r := range lf.Results {
		if !r.Refined {
			res.done[trialID{resumeKey(r.Kernel, r.Backend, r.World, r.Dtype, r.Shape), r.Config.Key()}] = r
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
	k := trialID{job, c.Key()}
	res, ok := r.done[k]
	delete(r.done, k)
	return res, ok
}

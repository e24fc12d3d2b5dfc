package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner"
)

// Input says what a report is made from.
type Input struct {
	// Logs are trial logs or directories of them (their *.jsonl and
	// *.jsonl.gz files).
	Logs []string
	// CachePath, when set, adds the cache's tuned winners to the latency
	// plots (as their own series). Cache does the same for any storage (a
	// Redis server) and wins over CachePath.
	CachePath string
	Cache     cache.Storage
	// Peers are CSV files of peer timings (kind,impl,shape,us), as
	// shared/bench/peer_baselines.py prints them.
	Peers []PeerFile
}

// Data is everything a report shows, read and checked.
type Data struct {
	Runs    []*Run
	Entries []cache.Entry
	Peers   []Peer
	// Notes are things the reader should know that did not stop the
	// report: torn last lines that were skipped, peers left out.
	Notes []string
	// Sources names what was read, for the report's header.
	Sources []string
}

// Run is one search as its log holds it: the trials of one job (kernel,
// backend, world, dtype, shape) in one log file.
type Run struct {
	Log                           string // the file
	Origin                        string // the directory it came from: series of several machines stay apart
	Kernel, Backend, Dtype, Shape string
	World                         int
	// From the log lines; empty or 0 in logs written before they were
	// recorded.
	Strategy     string
	ValidConfigs int
	Hardware     string
	// Trials is the first pass in log order; Remeasured the finalists'
	// re-measurements after it.
	Trials     []triallog.Result
	Remeasured []triallog.Result
	// Default is the kernel's default config: marked in newer logs, else
	// the run's first trial (the search measures the default first).
	Default space.Config
}

// key names the job a run searched.
func (r *Run) key() string {
	return fmt.Sprintf("%s|%s|%d|%s|%s", r.Kernel, r.Backend, r.World, r.Dtype, r.Shape)
}

// Title is the run's job in words.
func (r *Run) Title() string {
	return fmt.Sprintf("%s · %s · %d ranks · %s · %s", r.Kernel, r.Backend, r.World, r.Dtype, r.Shape)
}

// Winner is the search's winner, chosen from the re-measurements as the
// search chose it (tuner.Winner).
func (r *Run) Winner() (triallog.Result, bool) {
	return tuner.Winner(r.Remeasured, r.Default)
}

// DefaultRemeasured is the default config's re-measurement, the baseline
// the winner's speedup is taken against.
func (r *Run) DefaultRemeasured() (triallog.Result, bool) {
	for _, m := range r.Remeasured {
		if m.Status == triallog.StatusOK && m.Config.Equal(r.Default) {
			return m, true
		}
	}
	return triallog.Result{}, false
}

// FirstPass returns the first-pass trial of c.
func (r *Run) FirstPass(c space.Config) (triallog.Result, bool) {
	for _, t := range r.Trials {
		if t.Config.Equal(c) {
			return t, true
		}
	}
	return triallog.Result{}, false
}

// Exhaustive says whether the first pass measured every valid config; only
// logs that record the number of valid configs can tell.
func (r *Run) Exhaustive() bool {
	if r.ValidConfigs == 0 {
		return false
	}
	seen := map[space.ConfigKey]bool{}
	for _, t := range r.Trials {
		seen[t.Config.Key()] = true
	}
	return len(seen) >= r.ValidConfigs
}

// Counts is the number of first-pass trials per status.
func (r *Run) Counts() map[triallog.Status]int {
	n := map[triallog.Status]int{}
	for _, t := range r.Trials {
		n[t.Status]++
	}
	return n
}

// Load reads and checks everything in. Bad input (a file that is not a
// symmtune trial log, a directory without logs, a malformed peers file,
// nothing to report) is a *tuner.InputError naming the file.
func Load(in Input) (*Data, error) {
	d := &Data{}
	for _, arg := range in.Logs {
		files, origin, err := logFiles(arg)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := d.readLog(f, origin); err != nil {
				return nil, err
			}
		}
	}
	st := in.Cache
	if st == nil && in.CachePath != "" {
		st = cache.File{Path: in.CachePath}
	}
	if st != nil {
		store, err := st.Load(context.Background())
		if err != nil {
			return nil, err
		}
		d.Entries = store.Entries()
		d.Sources = append(d.Sources, fmt.Sprintf("cache %s (%d entries)", st.Location(), len(d.Entries)))
	}
	if len(d.Runs) == 0 && len(d.Entries) == 0 {
		what := "no trial log was given"
		if st != nil {
			what += " and the cache " + st.Location() + " holds no tuned configs"
		}
		return nil, inputErrorf("nothing to report: %s", what)
	}
	if err := d.readPeers(in.Peers); err != nil {
		return nil, err
	}
	return d, nil
}

// logFiles expands a --log argument: a file, or a directory's *.jsonl
// and *.jsonl.gz (gzipped logs read as plain ones; see triallog.Glob).
func logFiles(arg string) (files []string, origin string, err error) {
	st, err := os.Stat(arg)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, "", inputErrorf("trial log %s: %v", arg, err)
	}
	if !st.IsDir() {
		return []string{arg}, filepath.Dir(arg), nil
	}
	files, err = triallog.Glob(filepath.Join(arg, "*.jsonl"))
	if err != nil {
		return nil, "", err
	}
	if len(files) == 0 {
		return nil, "", inputErrorf("directory %s holds no trial logs (*.jsonl or *.jsonl.gz)", arg)
	}
	return files, filepath.Clean(arg), nil
}

// readLog adds the runs of one log file.
func (d *Data) readLog(path, origin string) error {
	lf, err := tuner.ReadTrialLog(path)
	if err != nil {
		return err
	}
	if lf.Torn > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%s: line %d is cut short (the search was killed while writing it); skipped", path, lf.Torn))
	}
	if len(lf.Results) == 0 {
		return inputErrorf("%s: not a symmtune trial log: it holds no complete trial", path)
	}
	byKey := map[string]*Run{}
	var runs []*Run
	for i, res := range lf.Results {
		if res.Kernel == "" || res.World < 1 || res.Shape == "" {
			return inputErrorf("%s: line %d: not a symmtune trial: no kernel, world size or shape", path, lf.Lines[i])
		}
		if _, err := problemSize(res.Shape, res.Dtype); err != nil {
			return inputErrorf("%s: line %d: %v", path, lf.Lines[i], err)
		}
		run := &Run{Log: path, Origin: origin, Kernel: res.Kernel, Backend: res.Backend, Dtype: res.Dtype, Shape: res.Shape, World: res.World}
		if r, ok := byKey[run.key()]; ok {
			run = r
		} else {
			byKey[run.key()] = run
			runs = append(runs, run)
		}
		if res.Refined {
			run.Remeasured = append(run.Remeasured, res)
		} else {
			run.Trials = append(run.Trials, res)
		}
		if res.Strategy != "" {
			run.Strategy = res.Strategy
		}
		run.ValidConfigs = max(run.ValidConfigs, res.ValidConfigs)
		if res.Hardware != "" {
			run.Hardware = res.Hardware
		}
		if res.Default {
			run.Default = res.Config
		}
	}
	for _, r := range runs {
		if r.Default == nil && len(r.Trials) > 0 {
			r.Default = r.Trials[0].Config
		}
	}
	d.Runs = append(d.Runs, runs...)
	d.Sources = append(d.Sources, fmt.Sprintf("%s (%d trials)", path, len(lf.Results)))
	return nil
}

// problemSize is where a job sits on the latency plots' x axis: the message
// in bytes for one-dimensional shapes (n elements of dtype), else the
// product of the dimensions.
func problemSize(shape, dtype string) (float64, error) {
	dims, err := parseShape(shape)
	if err != nil {
		return 0, err
	}
	if len(dims) == 1 {
		size, err := space.DtypeSize(dtype)
		if err != nil {
			return 0, err
		}
		return float64(dims[0].n) * float64(size), nil
	}
	p := 1.0
	for _, d := range dims {
		p *= float64(d.n)
	}
	return p, nil
}

type dim struct {
	name string
	n    int64
}

// parseShape reads a shape as logged ("n=2048", "m=512,n=256,k=128"),
// keeping the order of its dimensions.
func parseShape(text string) ([]dim, error) {
	var dims []dim
	for _, part := range strings.Split(text, ",") {
		name, val, ok := strings.Cut(part, "=")
		n, err := strconv.ParseInt(val, 10, 64)
		if !ok || name == "" || err != nil || n < 1 {
			return nil, fmt.Errorf("shape %q: want name=positive integer pairs separated by commas", text)
		}
		dims = append(dims, dim{name, n})
	}
	return dims, nil
}

// sizeAxis names the x axis of a kernel's latency plot from one of its
// shapes.
func sizeAxis(shape string) string {
	dims, _ := parseShape(shape)
	if len(dims) == 1 {
		return "message size"
	}
	names := make([]string, len(dims))
	for i, d := range dims {
		names[i] = d.name
	}
	return "problem size (" + strings.Join(names, "·") + ")"
}

func inputErrorf(format string, args ...any) error {
	return &tuner.InputError{Err: fmt.Errorf(format, args...)}
}

// finite reports whether x is a plottable, positive number.
func finite(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

var errNoWorld = errors.New("cannot tell its world size")

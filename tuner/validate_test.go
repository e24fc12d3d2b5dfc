package tuner

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symmtune/symmtune/space"
)

// syncBuffer is a log sink the plugin's and the host's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// describeOnce starts rank 0 of job's plugin and runs describe (which
// validates the space), as Preflight does, returning the valid configs and
// the host's debug log.
func describeOnce(t *testing.T, pluginDir string, job Job) ([]space.Config, string, error) {
	t.Helper()
	logs := &syncBuffer{}
	s := &Searcher{PluginDir: pluginDir, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	s.defaults()
	job = job.withDefaults()
	backend, spec, err := s.resolve(job)
	if err != nil {
		t.Fatal(err)
	}
	first, err := launch(spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer first.stop(context.Background())
	ss := &session{s: s, job: job, spec: spec, backend: backend, out: &Outcome{}}
	valid, err := ss.describe(context.Background(), first)
	return valid, logs.String(), err
}

// TestSpaceOfMillions: a space past the host's old bound (2^20 configs,
// which refused the CUDA GEMM plugins once they searched 47 impls), of
// which few configs can run, loads and is gone through a batch at a time:
// the faulty plugin with 17 two-valued parameters that run at 0 only, 9 x
// 2^17 = 1,179,648 configs. --where mode=medium leaves 131,072 of them to
// ask the plugin about (four batches), one of them valid: the default.
// Skipped under -race, which makes the plugin's 131,072 answers ten times
// slower to read and finds nothing TestValidateInBatches does not; make
// test runs it without (NORACE_TESTS in the Makefile).
func TestSpaceOfMillions(t *testing.T) {
	if raceDetector {
		t.Skip("asks about 131,072 configs; run without -race (make test does)")
	}
	dir, _ := faultyPluginDir(t)
	t.Setenv("SYMMTUNE_FAULTY_EXTRA_PARAMS", "17")
	t.Setenv("SYMMTUNE_FAULTY_SPARSE", "1")
	job := faultyJob(2)
	job.Where = "mode=medium"
	valid, _, err := describeOnce(t, dir, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(valid) != 1 || valid[0]["mode"] != space.Str("medium") || len(valid[0]) != 18 ||
		valid[0]["x0"] != space.Int(0) || valid[0]["x16"] != space.Int(0) {
		t.Fatalf("valid configs %v, want the default alone (mode=medium, x0..x16 at 0)", valid)
	}
}

// fallbackLog is what the host logs when a plugin has no ValidateBatch.
const fallbackLog = "plugin has no ValidateBatch"

// TestValidateInBatches: the host validates a real plugin's space in
// batches, falls back to one call per config for a plugin without the
// batch call, and finds out a plugin that hangs in Validate either way.
func TestValidateInBatches(t *testing.T) {
	type knobs struct{ noBatch, hang bool }
	cases := []struct {
		name     string
		lang     string // "go" or "python"
		knobs    knobs
		world    int
		wantErr  string // "" for success
		valid    int
		fallback bool
	}{
		{name: "every config valid", lang: "go", world: 2, valid: len(faultyWant)},
		{name: "every config valid", lang: "python", world: 2, valid: len(faultyWant)},
		{name: "every config rejected with its reason", lang: "go", world: 3, wantErr: "n=1024 is not divisible by the world size 3"},
		{name: "without ValidateBatch", lang: "python", knobs: knobs{noBatch: true}, world: 2, valid: len(faultyWant), fallback: true},
		{name: "without ValidateBatch, every config rejected", lang: "python", knobs: knobs{noBatch: true}, world: 3,
			wantErr: "n=1024 is not divisible by the world size 3", fallback: true},
		{name: "hangs in validate", lang: "go", knobs: knobs{hang: true}, world: 2, wantErr: "DeadlineExceeded"},
		{name: "hangs in validate", lang: "python", knobs: knobs{hang: true}, world: 2, wantErr: "DeadlineExceeded"},
		{name: "without ValidateBatch, hangs in validate", lang: "python", knobs: knobs{noBatch: true, hang: true}, world: 2,
			wantErr: "DeadlineExceeded", fallback: true},
	}
	for _, c := range cases {
		t.Run(c.lang+"/"+c.name, func(t *testing.T) {
			var dir string
			if c.lang == "go" {
				dir, _ = faultyPluginDir(t)
			} else {
				dir, _ = pythonFaultyPluginDir(t)
			}
			if c.knobs.noBatch {
				t.Setenv("SYMMTUNE_FAULTY_NO_BATCH", "1")
			}
			if c.knobs.hang {
				// internal/faultplugin's EnvHangValidate.
				t.Setenv("SYMMTUNE_FAULTY_HANG_VALIDATE", "1")
			}
			job := faultyJob(c.world)
			if c.knobs.hang {
				// Long enough for a plugin to start under -race on a busy machine.
				job.Timeouts.Setup = 10 * time.Second
			}
			valid, logs, err := describeOnce(t, dir, job)
			if c.wantErr == "" && err != nil {
				t.Fatalf("describe: %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("describe: error %v, want one with %q", err, c.wantErr)
			}
			if err == nil && len(valid) != c.valid {
				t.Errorf("%d valid configs, want %d", len(valid), c.valid)
			}
			if got := strings.Contains(logs, fallbackLog); got != c.fallback {
				t.Errorf("fell back to one call per config: %v, want %v\n%s", got, c.fallback, logs)
			}
		})
	}
}

// TestValidateBatchesAgreeWithOneCallEach: over a space many batches long
// (the CPU agmm plugin's), validating in batches keeps exactly the configs
// one Validate call each keeps, with the same reasons, in order.
func TestValidateBatchesAgreeWithOneCallEach(t *testing.T) {
	exe := buildBinary(t, "agmm-plugins", PluginPrefix+"agmm", "github.com/symmtune/symmtune/plugins/agmm", "")
	s := &Searcher{PluginDir: filepath.Dir(exe), Logger: quietLogger()}
	s.defaults()
	job := Job{Kernel: "agmm", Backend: "cpu", World: 2, Dtype: "f32", ShapeText: "m=512,n=512,k=128"}.withDefaults()
	backend, spec, err := s.resolve(job)
	if err != nil {
		t.Fatal(err)
	}
	first, err := launch(spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer first.stop(context.Background())
	ss := &session{s: s, job: job, spec: spec, backend: backend, out: &Outcome{}}
	if _, err := ss.describe(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	all := ss.out.Desc.Space.Enumerate()
	if len(all) <= 2*validateBatchSize {
		t.Fatalf("the agmm space holds %d configs: too few to span several batches", len(all))
	}
	batched, err := ss.validate(context.Background(), first, all)
	if err != nil {
		t.Fatal(err)
	}
	each := make([]string, len(all))
	if err := ss.validateEach(context.Background(), first, all, each); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(batched, each) {
		t.Error("batched and one-call-each reasons differ")
	}
	if !slices.Contains(each, "") || !slices.ContainsFunc(each, func(r string) bool { return r != "" }) {
		t.Error("want both valid and rejected configs in the space, or the comparison checks little")
	}
}

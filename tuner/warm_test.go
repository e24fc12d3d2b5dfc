package tuner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
)

func TestWarmIters(t *testing.T) {
	for _, tc := range []struct {
		name   string
		warm   time.Duration
		callUS float64
		least  int
		want   int
	}{
		{"no warm: the plain warm-up", 0, 700, 3, 3},
		{"no call time yet: the plain warm-up", time.Second, 0, 3, 3},
		{"a second of 700 µs calls", time.Second, 700, 3, 1429},
		{"exact multiple", 100 * time.Millisecond, 20_000, 1, 5},
		{"never fewer than --warmup", time.Millisecond, 1000, 10, 10},
		{"bounded for implausibly short calls", time.Hour, 0.001, 3, maxWarmIters},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := warmIters(tc.warm, tc.callUS, tc.least); got != tc.want {
				t.Errorf("warmIters(%v, %v, %d) = %d, want %d", tc.warm, tc.callUS, tc.least, got, tc.want)
			}
		})
	}
}

// With Job.Warm, the first config measured runs once unlogged to time a
// call, and every trial after it warms up for about Warm in calls of that
// length: the faulty plugin's default (medium) sleeps 20 ms a call, so
// 100 ms is 5 calls (4 if a call takes over 25 ms on a loaded machine).
func TestWarmCountsCallsOfTheFirstConfig(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	tmp := t.TempDir()
	log, err := OpenTrialLog(filepath.Join(tmp, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Log: log, Logger: quietLogger()}
	job := faultyJob(2)
	job.Where = "mode=fast"
	job.Warm = 100 * time.Millisecond
	o, err := s.Search(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if o.Best == nil || o.Best.Config["mode"].Str != "fast" {
		t.Fatalf("winner %v, want mode=fast", o.Best)
	}
	rs := readLog(t, log.Path())
	first := firstPass(rs)
	if len(first["medium"]) != 1 || len(first["fast"]) != 1 {
		t.Errorf("first pass logged %d medium and %d fast trials, want one each (the calibration run is not a result)",
			len(first["medium"]), len(first["fast"]))
	}
	for _, r := range rs {
		if r.Status != StatusOK {
			t.Errorf("%s ended %s: %s", r.Config, r.Status, r.Error)
			continue
		}
		if r.Warmup != 4 && r.Warmup != 5 {
			t.Errorf("%s (refined %v) warmed up %d calls, want 5 (or 4): 100 ms of the 20 ms default's",
				r.Config, r.Refined, r.Warmup)
		}
	}
}

// With Job.TrialTiming the host asks the ranks to time every trial that
// way (BenchRequest.timing), and with Job.RefineTiming the finalists'
// re-measurements (else as the trials): the Go and the Python SDK take the
// field, and every logged result says how it was asked to be timed. A
// timing the host does not know is the caller's error, before any plugin
// starts.
func TestTrialAndRefineTiming(t *testing.T) {
	faultyPlugins(t, func(t *testing.T, p faultyPlugin) {
		for _, tc := range []struct {
			trial, refine       string
			wantFirst, wantBest string
		}{
			{"", "loaded", "", "loaded"},
			{"loaded", "", "loaded", "loaded"},
			{"", "", "", ""},
		} {
			tmp := t.TempDir()
			log, err := OpenTrialLog(filepath.Join(tmp, "trials.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			s := &Searcher{PluginDir: p.dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Log: log, Logger: quietLogger()}
			job := faultyJob(2)
			job.Where = "mode=fast"
			job.TrialTiming, job.RefineTiming = tc.trial, tc.refine
			o, err := s.Search(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if o.Best == nil || o.Best.Config["mode"].Str != "fast" || o.Best.Timing != tc.wantBest {
				t.Fatalf("trial %q refine %q: winner %+v, want mode=fast timed %q", tc.trial, tc.refine, o.Best, tc.wantBest)
			}
			refined := 0
			for _, r := range readLog(t, log.Path()) {
				if r.Status != StatusOK {
					t.Errorf("%s ended %s: %s", r.Config, r.Status, r.Error)
				}
				want := tc.wantFirst
				if r.Refined {
					want, refined = tc.wantBest, refined+1
				}
				if r.Timing != want {
					t.Errorf("trial %q refine %q: %s (refined %v) logged timing %q, want %q", tc.trial, tc.refine, r.Config, r.Refined, r.Timing, want)
				}
			}
			if refined == 0 {
				t.Error("no re-measurement logged")
			}
			log.Close()
		}
		s := &Searcher{PluginDir: p.dir, Cache: cache.File{Path: filepath.Join(t.TempDir(), "configs.toml")}, Logger: quietLogger()}
		for _, job := range []Job{{TrialTiming: "busy"}, {RefineTiming: "busy"}} {
			j := faultyJob(2)
			j.TrialTiming, j.RefineTiming = job.TrialTiming, job.RefineTiming
			_, err := s.Search(context.Background(), j)
			var ie *InputError
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), `timing "busy"`) {
				t.Errorf("trial %q refine %q: error %v, want an input error naming it", j.TrialTiming, j.RefineTiming, err)
			}
		}
	})
}

// A search resumed from a log of trials timed otherwise than it asks
// measures them again: scores of two timings are never compared.
func TestResumeMeasuresAnotherTimingAgain(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	tmp := t.TempDir()
	logPath := filepath.Join(tmp, "trials.jsonl")
	run := func(timing string, done *Resume) []Result {
		t.Helper()
		log, err := OpenTrialLog(logPath)
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Log: log, Done: done, Logger: quietLogger()}
		job := faultyJob(2)
		job.Where, job.TrialTiming = "mode=fast", timing
		if _, err := s.Search(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		return readLog(t, logPath)
	}
	first := len(firstPass(run("loaded", nil))["fast"])
	for _, tc := range []struct {
		timing string
		more   int // first-pass trials of mode=fast the resumed search logs
	}{{"loaded", 0}, {"", 1}} {
		done, err := LoadResume(logPath)
		if err != nil {
			t.Fatal(err)
		}
		before := len(firstPass(readLog(t, logPath))["fast"])
		got := len(firstPass(run(tc.timing, done))["fast"]) - before
		if got != tc.more {
			t.Errorf("resumed with timing %q over a loaded log: %d new first-pass trials of mode=fast, want %d", tc.timing, got, tc.more)
		}
	}
	if first != 1 {
		t.Errorf("the first search logged %d first-pass trials of mode=fast, want 1", first)
	}
}

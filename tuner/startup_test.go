package tuner

import (
	"context"
	"github.com/symmtune/symmtune/cache"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStartDeadline(t *testing.T) {
	for _, tc := range []struct {
		setup, measured, want time.Duration
	}{
		{time.Minute, 0, time.Minute},                         // nothing measured yet: the job's timeout
		{time.Minute, 5 * time.Second, time.Minute},           // fast start-up: the job's timeout
		{10 * time.Second, 5 * time.Second, 15 * time.Second}, // slow start-up: three times it
		{2 * time.Second, 1200 * time.Millisecond, 3600 * time.Millisecond},
	} {
		if got := startDeadline(tc.setup, tc.measured); got != tc.want {
			t.Errorf("startDeadline(%s, %s) = %s, want %s", tc.setup, tc.measured, got, tc.want)
		}
	}
}

// TestRestartAfterHangCoversSlowStartup: every plugin process of the
// faulty plugin sleeps 1.2 s before it serves, under a 2 s setup timeout,
// and after the deadlock config's hang the restarted ranks sleep twice as
// long, longer than the timeout, as GPU ranks can while the killed ones are
// torn down. The restart is given three times the measured start-up, so
// the search goes on instead of failing the job.
func TestRestartAfterHangCoversSlowStartup(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	marker := filepath.Join(t.TempDir(), "slow-restart")
	// internal/faultplugin's EnvStartSleep and EnvSlowRestart.
	t.Setenv("SYMMTUNE_FAULTY_START_SLEEP", "1200ms")
	t.Setenv("SYMMTUNE_FAULTY_SLOW_RESTART", marker)
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(t.TempDir(), "configs.toml")}, Logger: quietLogger()}
	job := faultyJob(2)
	job.Timeouts.Setup = 2 * time.Second
	// Exhaustive order: medium, deadlock, fast; then the finalists.
	job.BudgetTrials = 3
	o, err := s.Search(context.Background(), job)
	if err != nil {
		t.Fatalf("search with slow restarts: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("no deadlock ran, so no restart was slow: %v", err)
	}
	if o.Counts[StatusHang] != 1 || o.Best == nil || o.Best.Config["mode"].Str != "fast" || !o.Best.Refined {
		t.Errorf("counts %v, best %+v; want one hang and a refined mode=fast winner", o.Counts, o.Best)
	}
	if len(o.Startup.Ranks) != 2 {
		t.Fatalf("start-up of %d ranks recorded, want 2", len(o.Startup.Ranks))
	}
	for r, d := range o.Startup.Ranks {
		if d < 1200*time.Millisecond {
			t.Errorf("rank %d started in %s, less than the plugin sleeps before serving", r, d)
		}
	}
}

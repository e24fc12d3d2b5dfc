package libops

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// TestWatchdogAborts: the watchdog's report ends the process (AbortCode)
// after writing the workspace's error to stderr; with the watchdog off
// it returns and the process goes on. The abort runs in a child process:
// this test binary again, told by an environment variable to report.
func TestWatchdogAborts(t *testing.T) {
	poison := cudamem.PoisonError(uint32(cudamem.MakePoison(cudamem.KindBarrier, 1, 0)), 0, "watchdog", 0)
	if os.Getenv("SYMMTUNE_WATCHDOG_CHILD") == "1" {
		onPoison(poison)
		os.Exit(0) // the watchdog was off
	}
	for _, c := range []struct {
		env      string
		aborted  bool
		wantText string
	}{
		{"", true, "ending this process"},
		{"abort", true, "ending this process"},
		{"off", false, ""},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestWatchdogAborts$")
		cmd.Env = append(os.Environ(), "SYMMTUNE_WATCHDOG_CHILD=1", WatchdogEnv+"="+c.env)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		ended := errors.As(err, &ee) && ee.ExitCode() == AbortCode
		if ended != c.aborted || (!c.aborted && err != nil) {
			t.Errorf("%s=%q: exit %v, want aborted %v\n%s", WatchdogEnv, c.env, err, c.aborted, out)
		}
		if c.aborted && (!strings.Contains(string(out), poison.Error()) || !strings.Contains(string(out), c.wantText)) {
			t.Errorf("%s=%q: stderr %q lacks the error and %q", WatchdogEnv, c.env, out, c.wantText)
		}
	}
}

// TestWatchdogEnv: a value other than abort or off is refused, naming it.
func TestWatchdogEnv(t *testing.T) {
	for v, ok := range map[string]bool{"": true, "abort": true, "off": true, "on": false, "OFF": false} {
		t.Setenv(WatchdogEnv, v)
		err := checkWatchdogEnv()
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), `SYMMTUNE_WATCHDOG="`+v+`"`)) {
			t.Errorf("%q: %v", v, err)
		}
	}
}

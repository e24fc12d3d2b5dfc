package libops

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// WatchdogEnv chooses what the runtime's watchdog does when a workspace
// is poisoned (a kernel's wait timed out, barrier.cuh): "abort" (the
// default) prints the error and ends the process, as NCCL's watchdog
// does with a collective that timed out, so that a program replaying CUDA
// graphs (whose kernels then skip their work) cannot go on silently
// wrong; "off" leaves it to the calls, every eager one raising.
const WatchdogEnv = "SYMMTUNE_WATCHDOG"

// watchInterval is how often the watchdog reads the host words (plain
// loads of pinned memory).
const watchInterval = 100 * time.Millisecond

var watchdogOnce sync.Once

// startWatchdog starts the watchdog once, at the runtime's first
// workspace. What it does on a poison is read then ($SYMMTUNE_WATCHDOG),
// so a program (or a test) may turn it off at any time before.
func startWatchdog() {
	watchdogOnce.Do(func() {
		go cudamem.WatchLoop(nil, watchInterval, cudamem.WatchedWords, onPoison)
	})
}

// AbortCode is the exit status of a process the watchdog ends (128 +
// SIGABRT, as a shell shows an abort).
const AbortCode = 134

// onPoison is the watchdog's report: with the watchdog on, the error on
// stderr, then the process ends at once with AbortCode (no exit
// handlers: a GPU whose peers are gone may never drain), and torchrun
// sees the rank fail.
func onPoison(err error) {
	if watchdogOff() {
		return
	}
	fmt.Fprintf(os.Stderr, "%v\nsymmtune: watchdog: ending this process (exit %d), as NCCL's watchdog does (%s=off leaves it running; its calls on the workspace then raise)\n", err, AbortCode, WatchdogEnv)
	os.Exit(AbortCode)
}

func watchdogOff() bool { return os.Getenv(WatchdogEnv) == "off" }

// checkWatchdogEnv refuses a $SYMMTUNE_WATCHDOG other than abort or off
// (at a workspace's open, where the error can be given).
func checkWatchdogEnv() error {
	switch v := os.Getenv(WatchdogEnv); v {
	case "", "abort", "off":
		return nil
	default:
		return bad("%s=%q: want abort (the default) or off", WatchdogEnv, v)
	}
}

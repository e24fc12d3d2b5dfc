package tuner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-plugin"
)

// socketDirPrefix names the folder each plugin process gets for its
// go-plugin unix socket: <temp>/symmtune-sock-<host pid>-<random>. A
// plugin removes its socket when it exits cleanly; one that is killed (a
// hang, a crash, an interrupted search) cannot, so the host removes the
// whole folder when the rank stops, and the folders of hosts that were
// themselves killed before the next search starts.
const socketDirPrefix = "symmtune-sock-"

// socketBase is where socket folders go: the temp folder, unless its path
// is so long that a socket inside a folder inside it would pass the 107
// bytes a unix socket path may have; then /tmp.
func socketBase() string {
	if b := os.TempDir(); len(b) <= 56 {
		return b
	}
	return "/tmp"
}

// newSocketDir makes a plugin process's socket folder, first sweeping the
// folders of hosts that no longer run.
func newSocketDir() (string, error) {
	base := socketBase()
	sweepDeadSocketDirs(base)
	d, err := os.MkdirTemp(base, fmt.Sprintf("%s%d-", socketDirPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("plugin socket folder: %w", err)
	}
	return d, nil
}

// sweepDeadSocketDirs removes the socket folders in tmp of hosts that are
// gone.
func sweepDeadSocketDirs(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, socketDirPrefix+"*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), socketDirPrefix), "-")
		if pid, err := strconv.Atoi(pidText); err == nil && hostGone(pid) {
			_ = os.RemoveAll(d)
		}
	}
}

// hostGone reports whether no process pid exists: the host that named a
// leftover file or folder after itself has died.
func hostGone(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH
}

// socketEnv points a plugin at its socket folder (go-plugin's servers, and
// symmtune's Python SDK, create their socket there).
func socketEnv(dir string) string { return plugin.EnvUnixSocketDir + "=" + dir }

package tuner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/symmtune/symmtune/symm/shm"
)

func TestSweepRemovesOnlyDeadHostsFiles(t *testing.T) {
	// A PID that surely belongs to no running process: a child that exited.
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(shm.Dir(), shm.FilePrefix+strconv.Itoa(child.Process.Pid)+"-abc123-r0")
	live := filepath.Join(shm.Dir(), shm.FilePrefix+strconv.Itoa(os.Getpid())+"-abc123-r1")
	other := filepath.Join(shm.Dir(), shm.FilePrefix+"notapid-r0")
	for _, f := range []string{dead, live, other} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(f) })
	}
	sweepDeadHostsSHM()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("file of a dead host survived: %v", err)
	}
	for _, f := range []string{live, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
	}
}

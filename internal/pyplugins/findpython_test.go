package pyplugins

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// findPython runs scripts/find-python.sh with modules, the given PATH and
// extra environment, never letting it install anything; it returns stdout,
// stderr and whether it succeeded.
func findPython(t *testing.T, path string, env []string, modules ...string) (string, string, bool) {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", append([]string{filepath.Join(root, "scripts", "find-python.sh")}, modules...)...)
	cmd.Env = append([]string{"PATH=" + path, "SYMMTUNE_INSTALL=0", "HOME=" + t.TempDir()}, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), err == nil
}

// fakePython writes dir/python3, a stand-in that "imports" everything when
// ok and nothing otherwise, and returns dir.
func fakePython(t *testing.T, ok bool) string {
	t.Helper()
	dir := t.TempDir()
	code := "1"
	if ok {
		code = "0"
	}
	if err := os.WriteFile(filepath.Join(dir, "python3"), []byte("#!/bin/sh\nexit "+code+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The first python3 along PATH that imports the modules wins; one that
// cannot (a pyenv shim without the packages, say) is passed over.
func TestFindPythonSkipsAPythonWithoutThePackages(t *testing.T) {
	bad, good := fakePython(t, false), fakePython(t, true)
	out, errOut, ok := findPython(t, bad+":"+good+":/usr/bin:/bin", nil, "grpc", "numpy")
	if want := filepath.Join(good, "python3") + "\n"; !ok || out != want {
		t.Fatalf("got %q (ok %v, stderr %q), want %q", out, ok, errOut, want)
	}
}

// Past PATH's python3s it tries the system's /usr/bin/python3.
func TestFindPythonFallsBackToTheSystemPython(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 here")
	}
	bad := fakePython(t, false)
	out, errOut, ok := findPython(t, bad, nil, "json")
	if !ok || out != "/usr/bin/python3\n" {
		t.Fatalf("got %q (ok %v, stderr %q), want /usr/bin/python3", out, ok, errOut)
	}
}

// With no Python that can and no installing, it fails with one line that
// names the Debian and pip packages to install.
func TestFindPythonSaysWhatToInstall(t *testing.T) {
	bad := fakePython(t, false)
	out, errOut, ok := findPython(t, bad+":/usr/bin:/bin", nil, "grpc", "no_such_module_st")
	if ok || out != "" {
		t.Fatalf("found %q, want a failure", out)
	}
	line := strings.TrimSuffix(errOut, "\n")
	if strings.Contains(line, "\n") {
		t.Fatalf("want one line, got %q", errOut)
	}
	for _, want := range []string{"apt-get install python3-grpcio python3-no_such_module_st", "pip install grpcio no_such_module_st"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
}

// A PYTHON that is set is the only one tried: it is not replaced by
// another behind the user's back.
func TestFindPythonKeepsToPYTHON(t *testing.T) {
	bad, good := fakePython(t, false), fakePython(t, true)
	out, errOut, ok := findPython(t, good+":/usr/bin:/bin", []string{"PYTHON=" + filepath.Join(bad, "python3")}, "grpc")
	if ok || out != "" || !strings.Contains(errOut, "PYTHON="+filepath.Join(bad, "python3")+" cannot import grpc") {
		t.Fatalf("got %q (ok %v, stderr %q), want a failure naming PYTHON", out, ok, errOut)
	}
	out, _, ok = findPython(t, "/usr/bin:/bin", []string{"PYTHON=" + filepath.Join(good, "python3")}, "grpc")
	if want := filepath.Join(good, "python3") + "\n"; !ok || out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// Package pyplugins lets Go tests run symmtune's Python plugins (python/ in
// this repository) through the real host: it finds a Python interpreter
// that can import the plugin SDK's dependencies and installs a plugin
// script into a plugin directory the way `make python-plugins` does, with
// its #! line naming that interpreter. Test-only support, like
// internal/faultplugin.
package pyplugins

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// EnvPython names the interpreter to use; EnvRequire makes a missing or
// unusable one a test failure instead of a skip (CI sets it: its Python
// tests must not silently vanish).
const (
	EnvPython  = "SYMMTUNE_PYTHON"
	EnvRequire = "SYMMTUNE_REQUIRE_PYTHON"
)

// Root is the repository's root: the closest directory above the working
// directory (a package directory under go test) that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

var (
	once   sync.Once
	python string
	found  error
)

// Interpreter returns a Python that imports grpc, google.protobuf and numpy
// with the repository's python/ on its path. scripts/find-python.sh picks it,
// as it does for make: $SYMMTUNE_PYTHON if set, else the first python3 on
// PATH, or /usr/bin/python3, that can. From here it never installs anything.
// Interpreter also puts python/ on PYTHONPATH for the plugin processes the
// host starts.
func Interpreter() (string, error) {
	once.Do(func() {
		root, err := Root()
		if err != nil {
			found = err
			return
		}
		pkg := filepath.Join(root, "python")
		find := exec.Command("/bin/sh", filepath.Join(root, "scripts", "find-python.sh"), "grpc", "google.protobuf", "numpy")
		find.Env = append(os.Environ(), "SYMMTUNE_INSTALL=0", "PYTHON="+os.Getenv(EnvPython))
		var stderr bytes.Buffer
		find.Stderr = &stderr
		out, err := find.Output()
		if err != nil {
			found = fmt.Errorf("no Python that can run the plugin SDK (`make test` finds or installs one; or set %s): %v: %s",
				EnvPython, err, bytes.TrimSpace(stderr.Bytes()))
			return
		}
		path := string(bytes.TrimSpace(out))
		check := exec.Command(path, "-c", "import symmtune.plugin")
		check.Env = append(os.Environ(), "PYTHONPATH="+pkg)
		if out, err := check.CombinedOutput(); err != nil {
			found = fmt.Errorf("%s cannot import symmtune.plugin from %s: %v: %s", path, pkg, err, bytes.TrimSpace(out))
			return
		}
		python = path
		found = os.Setenv("PYTHONPATH", pkg)
	})
	return python, found
}

// Install copies the plugin script src (relative to the repository root)
// into dir as name, executable, with its #! line replaced by python's path,
// and returns the installed path.
func Install(src, dir, name, python string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, src))
	if err != nil {
		return "", err
	}
	if !bytes.HasPrefix(b, []byte("#!")) {
		return "", fmt.Errorf("%s has no #! line", src)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = append([]byte("#!"+python), b[i:]...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		return "", err
	}
	return dst, nil
}

// Need returns the Python that runs the plugins (see Interpreter), and
// without one skips the test, or fails it where $SYMMTUNE_REQUIRE_PYTHON
// says the Python tests must run.
func Need(t testing.TB) string {
	t.Helper()
	py, err := Interpreter()
	if err != nil {
		if os.Getenv(EnvRequire) != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return py
}

// EnvLib names libsymmtune for the Python bindings (python/symmtune/_native.py).
const EnvLib = "SYMMTUNE_LIB"

// Library returns the libsymmtune the Python bindings under test should
// load: $SYMMTUNE_LIB when set (make test builds it first), else one built
// from this checkout into the test's temporary directory, so a test never
// runs against a library of other sources.
func Library(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvLib); p != "" {
		return p
	}
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(t.TempDir(), "libsymmtune.so")
	cmd := exec.Command("go", "build", "-tags", "cuda", "-buildmode=c-shared", "-o", so, "./cmd/libsymmtune")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building libsymmtune: %v\n%s", err, out)
	}
	return so
}

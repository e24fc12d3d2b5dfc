package tuner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// PluginPrefix starts every plugin executable's name.
const PluginPrefix = "symmtune-plugin-"

// EnvPluginDir overrides the default plugin directory.
const EnvPluginDir = "SYMMTUNE_PLUGIN_DIR"

// DefaultPluginDir is $SYMMTUNE_PLUGIN_DIR, else the directory holding the
// running symmtune binary (where `make build` puts the plugins).
func DefaultPluginDir() string {
	if d := os.Getenv(EnvPluginDir); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}

// backendDir is where a backend's plugin binaries live under a plugin
// directory: CPU plugins at the top, CUDA builds in cuda/ (they import the
// CUDA driver and cannot start on a machine without one).
func backendDir(dir, backend string) string {
	if backend == "cuda" {
		return filepath.Join(dir, "cuda")
	}
	return dir
}

// BackendDir is the directory under the plugin directory dir where search
// looks for backend's plugins: dir itself for cpu, dir/cuda for cuda.
func BackendDir(dir, backend string) string { return backendDir(dir, backend) }

// PluginPath returns the executable of kernel for backend in dir. Kernel
// names are plain words: a name with a path separator could escape the
// plugin directory, so it is refused.
func PluginPath(dir, kernel, backend string) (string, error) {
	if kernel == "" || strings.ContainsAny(kernel, `/\.`) {
		return "", &InputError{fmt.Errorf("kernel name %q: want a plain name such as allreduce", kernel)}
	}
	p := filepath.Join(backendDir(dir, backend), PluginPrefix+kernel)
	st, err := os.Stat(p)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		known, _ := ListPlugins(dir, backend)
		return "", &InputError{fmt.Errorf("unknown kernel %q for backend %s: no executable %s (plugins there: %s)",
			kernel, backend, p, orNone(known))}
	}
	return p, nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// ListPlugins names the kernels whose plugin executables dir holds for backend.
func ListPlugins(dir, backend string) ([]string, error) {
	entries, err := os.ReadDir(backendDir(dir, backend))
	if err != nil {
		return nil, fmt.Errorf("read plugin dir %s: %w", backendDir(dir, backend), err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), PluginPrefix) || e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode()&0o111 != 0 {
			names = append(names, strings.TrimPrefix(e.Name(), PluginPrefix))
		}
	}
	sort.Strings(names)
	return names, nil
}

// FileSHA256 returns the hex SHA-256 of a file, the form job files pin
// plugin binaries with.
func FileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// CheckPin says whether pin is a well-formed pinned checksum.
func CheckPin(pin string) error {
	_, err := parsePin(pin)
	return err
}

// parsePin reads a pinned checksum: 64 hex digits, optionally "sha256:"-prefixed.
func parsePin(pin string) ([]byte, error) {
	h := strings.TrimPrefix(strings.TrimSpace(pin), "sha256:")
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != sha256.Size {
		return nil, errors.New("want 64 hex digits of SHA-256")
	}
	return b, nil
}

// GPUPresent reports whether the NVIDIA driver sees at least one GPU,
// without loading the driver library (the host must run anywhere).
func GPUPresent() bool {
	if m, _ := filepath.Glob("/proc/driver/nvidia/gpus/*"); len(m) > 0 {
		return true
	}
	_, err := os.Stat("/dev/nvidia0")
	return err == nil
}

// ResolveBackend turns "auto" into cuda when the CUDA build of kernel's
// plugin exists and a GPU is present, else cpu.
func ResolveBackend(backend, dir, kernel string) (string, error) {
	switch backend {
	case "cpu", "cuda":
		return backend, nil
	case "", "auto":
		if _, err := os.Stat(filepath.Join(backendDir(dir, "cuda"), PluginPrefix+kernel)); err == nil && GPUPresent() {
			return "cuda", nil
		}
		return "cpu", nil
	}
	return "", &InputError{fmt.Errorf("backend %q: want auto, cpu or cuda", backend)}
}

// InputError marks a problem with what the user asked for (as opposed to
// a failure while doing it); the CLI exits with code 2 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputErrorf makes an InputError.
func inputErrorf(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// CheckDtype is the InputError for a dtype the kernel's plugin does not
// take on backend (dtypes: what its description lists), or nil. Search and
// lookup both ask it, so a typo reads the same in each.
func CheckDtype(kernel, backend string, dtypes []string, dtype string) error {
	if slices.Contains(dtypes, dtype) {
		return nil
	}
	return inputErrorf("kernel %s (%s) does not take dtype %q (it takes %s)", kernel, backend, dtype, strings.Join(dtypes, ", "))
}

package tuner

// Trust (issue 55, items 14-16): a pinned plugin runs exactly the bytes
// hashed, plugins see only the allow-listed environment, and binaries that
// others could change are refused. Real plugin processes throughout.

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
)

// copyFile copies src to dst with mode perm (exactly: no umask).
func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, perm); err != nil {
		t.Fatal(err)
	}
}

// startAndDescribe starts one process of the plugin at path under spec's
// settings and returns what it says it is, and what the process runs
// (its /proc/PID/exe).
func startAndDescribe(t *testing.T, spec launchSpec) (*pb.Description, string, error) {
	t.Helper()
	if spec.Logger == nil {
		spec.Logger = hclog.NewNullLogger()
	}
	if spec.Start == 0 {
		spec.Start = fastTimeouts.Setup
	}
	r, err := launch(spec, 0)
	if err != nil {
		return nil, "", err
	}
	defer r.kill()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := r.kernel.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, "", err
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(r.pid) + "/exe")
	return d, exe, err
}

// TestPinnedExecRunsHashedBytes: the binary is replaced right after the
// host opened (and, when pinned, hashed) it, and before the process starts:
// renamed over, as an attacker racing the pin did, or rewritten in place.
// The process must still be the binary that was opened, and for a pin the
// bytes that were hashed. A hook makes the race deterministic.
func TestPinnedExecRunsHashedBytes(t *testing.T) {
	_, exe := faultyPluginDir(t)
	sum, err := FileSHA256(exe)
	if err != nil {
		t.Fatal(err)
	}
	pin, err := parsePin(sum)
	if err != nil {
		t.Fatal(err)
	}
	const impostor = "#!/bin/sh\necho impostor >&2\nexit 7\n"
	for _, tc := range []struct {
		name    string
		pinned  bool
		inPlace bool
	}{
		{"pinned, renamed over", true, false},
		{"pinned, rewritten in place", true, true},
		{"not pinned, renamed over", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, PluginPrefix+"faulty")
			copyFile(t, exe, path, 0o755)
			afterOpen = func() {
				if tc.inPlace {
					if err := os.WriteFile(path, []byte(impostor), 0o755); err != nil {
						t.Error(err)
					}
					return
				}
				tmp := path + ".new"
				if err := os.WriteFile(tmp, []byte(impostor), 0o755); err != nil {
					t.Error(err)
				}
				if err := os.Rename(tmp, path); err != nil {
					t.Error(err)
				}
			}
			defer func() { afterOpen = nil }()
			spec := launchSpec{Path: path}
			if tc.pinned {
				spec.Checksum = pin
			}
			d, link, err := startAndDescribe(t, spec)
			if err != nil {
				t.Fatalf("the opened binary did not run: %v", err)
			}
			if d.GetName() != "faulty" {
				t.Errorf("the process says it is %q, want the faulty plugin", d.GetName())
			}
			if b, _ := os.ReadFile(path); string(b) != impostor {
				t.Fatal("the binary was not replaced: the test proves nothing")
			}
			if tc.pinned && link != "/memfd:"+path+" (deleted)" {
				t.Errorf("a pinned plugin runs %s, want the sealed copy of the hashed bytes (a memfd)", link)
			}
		})
	}
}

// TestPluginEnvironment: a plugin process sees the allow-listed variables
// and those $SYMMTUNE_PLUGIN_ENV names, never a secret.
func TestPluginEnvironment(t *testing.T) {
	_, exe := faultyPluginDir(t)
	for _, tc := range []struct {
		name       string
		env        map[string]string
		want, deny []string
	}{
		{name: "secrets stay in the host",
			env: map[string]string{"SYMMTUNE_REDIS_PASSWORD": "hunter2", "SYMMTUNE_REDIS_USERNAME": "tuner",
				"SYMMTUNE_CACHE": "redis://:hunter2@db:6379/0", "AWS_SECRET_ACCESS_KEY": "x", "GITHUB_TOKEN": "x", "MY_API_KEY": "x"},
			want: []string{"PATH", "SYMMTUNE_HOST_PID", "SYMMTUNE_RANK"},
			deny: []string{"SYMMTUNE_REDIS_PASSWORD", "SYMMTUNE_REDIS_USERNAME", "SYMMTUNE_CACHE", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_API_KEY"}},
		{name: "allow-list passes, the rest stays",
			env:  map[string]string{"SYMMTUNE_TRIAL_TIMING": "stream", "NCCL_DEBUG": "INFO", "CUDA_VISIBLE_DEVICES": "0", "LC_ALL": "C", "SOME_TOOL_HOME": "/x"},
			want: []string{"SYMMTUNE_TRIAL_TIMING", "NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "LC_ALL"},
			deny: []string{"SOME_TOOL_HOME"}},
		{name: "named extras pass, secrets still not",
			env:  map[string]string{EnvPluginEnv: "SOME_TOOL_HOME, MY_API_KEY", "SOME_TOOL_HOME": "/x", "MY_API_KEY": "x"},
			want: []string{"SOME_TOOL_HOME"},
			deny: []string{"MY_API_KEY"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SYMMTUNE_FAULTY_LIST_ENV", "1")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			d, _, err := startAndDescribe(t, launchSpec{Path: exe})
			if err != nil {
				t.Fatal(err)
			}
			names := strings.Split(d.GetSummary(), ",")
			for _, w := range tc.want {
				if !slices.Contains(names, w) {
					t.Errorf("the plugin lacks %s (it has %v)", w, names)
				}
			}
			for _, w := range tc.deny {
				if slices.Contains(names, w) {
					t.Errorf("the plugin was handed %s", w)
				}
			}
		})
	}
}

// TestInsecurePluginsRefused: a binary, or a directory above it, that
// someone other than root or this user could change is refused with the
// reason, unless AllowInsecure; a sticky world-writable directory (/tmp)
// is not such a directory.
func TestInsecurePluginsRefused(t *testing.T) {
	_, exe := faultyPluginDir(t)
	for _, tc := range []struct {
		name string
		// setup lays out root and returns the plugin path to run.
		setup func(t *testing.T, root string) string
		want  string // in the refusal; "" when it must run
	}{
		{"secure", func(t *testing.T, root string) string { return copyPlugin(t, exe, root, 0o755) }, ""},
		{"binary writable by others", func(t *testing.T, root string) string { return copyPlugin(t, exe, root, 0o757) }, "it is writable by others"},
		{"binary writable by its group", func(t *testing.T, root string) string { return copyPlugin(t, exe, root, 0o775) }, "writable by its group"},
		{"directory writable by others", func(t *testing.T, root string) string {
			chmod(t, root, 0o777)
			return copyPlugin(t, exe, root, 0o755)
		}, "its directory " + "%ROOT%" + ": it is writable by others"},
		{"sticky directory writable by others", func(t *testing.T, root string) string {
			chmod(t, root, os.ModeSticky|0o777)
			return copyPlugin(t, exe, root, 0o755)
		}, ""},
		{"a directory further up writable by others", func(t *testing.T, root string) string {
			sub := filepath.Join(root, "bin")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			chmod(t, root, 0o777)
			return copyPlugin(t, exe, sub, 0o755)
		}, "its directory " + "%ROOT%" + ": it is writable by others"},
		{"symlink in a directory writable by others", func(t *testing.T, root string) string {
			safe := filepath.Join(root, "safe")
			open := filepath.Join(root, "open")
			for _, d := range []string{safe, open} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			chmod(t, open, 0o777)
			target := copyPlugin(t, exe, safe, 0o755)
			link := filepath.Join(open, PluginPrefix+"faulty")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "/open: it is writable by others"},
		{"binary owned by another user", func(t *testing.T, root string) string {
			p := copyPlugin(t, exe, root, 0o755)
			if err := os.Chown(p, 4242, 4242); err != nil {
				t.Skipf("chown needs root: %v", err)
			}
			return p
		}, "owned by uid 4242"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := tc.setup(t, root)
			want := strings.ReplaceAll(tc.want, "%ROOT%", root)
			_, _, err := startAndDescribe(t, launchSpec{Path: path})
			switch {
			case want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case want != "":
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--allow-insecure-plugins") {
					t.Fatalf("got %v; want an InputError saying %q and naming --allow-insecure-plugins", err, want)
				}
				if _, _, err := startAndDescribe(t, launchSpec{Path: path, AllowInsecure: true}); err != nil {
					t.Errorf("refused with AllowInsecure: %v", err)
				}
			}
		})
	}
}

// copyPlugin copies the faulty plugin into dir with mode perm.
func copyPlugin(t *testing.T, exe, dir string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, PluginPrefix+"faulty")
	copyFile(t, exe, p, perm)
	return p
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestPluginEnvFilter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
	}{
		{"empty", nil, nil},
		{"allow-list", []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "EDITOR=vi", "NCCL_P2P_LEVEL=NVL"}, []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "NCCL_P2P_LEVEL=NVL"}},
		{"secrets", []string{"SYMMTUNE_REDIS_PASSWORD=x", "SYMMTUNE_CACHE=redis://:x@h/0", "SYMMTUNE_TOKEN=x", "DB_PASSWD=x", "SYMMTUNE_NVRTC=/lib"}, []string{"SYMMTUNE_NVRTC=/lib"}},
		{"go-plugin's own", []string{"PLUGIN_CLIENT_CERT=x", "PLUGIN_PROTOCOL_VERSIONS=1"}, nil},
		{"extras", []string{EnvPluginEnv + "=EDITOR,VAULT_TOKEN", "EDITOR=vi", "VAULT_TOKEN=x"}, []string{EnvPluginEnv + "=EDITOR,VAULT_TOKEN", "EDITOR=vi"}},
		{"malformed", []string{"=x", "NOEQUALS"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pluginEnv(tc.environ); !slices.Equal(got, tc.want) {
				t.Errorf("pluginEnv(%q) = %q, want %q", tc.environ, got, tc.want)
			}
		})
	}
}

// TestPinnedCopyRehashedAfterChange: the ranks share one sealed copy of a
// pinned binary, but a binary changed on disk after that copy is hashed
// again, and refused when it no longer matches.
func TestPinnedCopyRehashedAfterChange(t *testing.T) {
	_, exe := faultyPluginDir(t)
	sum, err := FileSHA256(exe)
	if err != nil {
		t.Fatal(err)
	}
	pin, _ := parsePin(sum)
	path := filepath.Join(t.TempDir(), PluginPrefix+"faulty")
	copyFile(t, exe, path, 0o755)
	for i, step := range []struct {
		change func()
		want   string // "" runs
	}{
		{nil, ""},
		{nil, ""}, // the same copy again
		{func() { // same size, same inode, other bytes
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-1] ^= 0xff
			if err := os.WriteFile(path, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "does not match the pinned checksum"},
	} {
		if step.change != nil {
			step.change()
		}
		_, _, err := startAndDescribe(t, launchSpec{Path: path, Checksum: pin})
		switch {
		case step.want == "" && err != nil:
			t.Fatalf("step %d: %v", i, err)
		case step.want != "" && (err == nil || !strings.Contains(err.Error(), step.want)):
			t.Fatalf("step %d: got %v, want %q", i, err, step.want)
		}
	}
}

// TestPinnedWithoutMemfd: where memfds cannot be executable
// (vm.memfd_noexec = 2), a pinned binary is hashed through the opened file
// and that file runs; a mismatch is still refused.
func TestPinnedWithoutMemfd(t *testing.T) {
	_, exe := faultyPluginDir(t)
	sum, err := FileSHA256(exe)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := parsePin(sum)
	bad, _ := parsePin(strings.Repeat("0", 64))
	memfdCreate = func(string, int) (int, error) { return -1, unix.EACCES }
	defer func() { memfdCreate = unix.MemfdCreate }()
	for _, tc := range []struct {
		name string
		pin  []byte
		want string // "" runs
	}{
		{"matching", good, ""},
		{"not matching", bad, "does not match the pinned checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), PluginPrefix+"faulty")
			copyFile(t, exe, path, 0o755)
			d, link, err := startAndDescribe(t, launchSpec{Path: path, Checksum: tc.pin})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil || d.GetName() != "faulty" || link != path {
				t.Fatalf("got %v running %s (%v), want the faulty plugin from %s", d.GetName(), link, err, path)
			}
		})
	}
}

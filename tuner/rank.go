package tuner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
)

// noMulticastEnv keeps NVLink multicast off in every plugin process: it is
// forbidden on the shared GPU machines symmtune is tuned on, and a library a
// plugin loads (NCCL, torch, NVSHMEM) might otherwise turn it on.
var noMulticastEnv = []string{"NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1", "NVSHMEM_DISABLE_NVLS=1"}

// launchSpec says how to start a plugin process.
type launchSpec struct {
	Path     string
	Checksum []byte // SHA-256 the binary must have; nil to skip
	Logger   hclog.Logger
	Start    time.Duration
	// Stderr, when set, receives the plugin's raw stderr (go-plugin's
	// copy, besides Logger's), so a plugin that fails to start can be
	// shown with its last lines.
	Stderr io.Writer
	// AllowInsecure skips the ownership and permission checks
	// (--allow-insecure-plugins; see trust.go).
	AllowInsecure bool
}

// rankProc is one running plugin process serving one rank.
type rankProc struct {
	rank   int
	client *plugin.Client
	kernel pb.KernelClient
	pid    int
	// sockets is the process's socket folder, removed when it stops.
	sockets string
	// startup is how long the process took from exec to go-plugin's
	// handshake (a Python plugin's imports count here).
	startup time.Duration
	// cmd and stderr say how the process ended (exitNote).
	cmd    *exec.Cmd
	stderr []*stderrTail
}

// afterOpen, when set, runs between opening a plugin binary and starting
// it: tests replace the binary there, as an attacker racing the pin would.
var afterOpen func()

// launch starts a plugin process. Its process group is its own, so a
// Ctrl-C at the terminal reaches only the host, which then ends the ranks
// in order; Pdeathsig and the plugin's own watch on the host PID end it if
// the host dies without that chance.
func launch(spec launchSpec, rank int) (r *rankProc, err error) {
	sockets, err := newSocketDir()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(sockets)
		}
	}()
	// The child execs the file opened here, not the path (trust.go).
	img, err := openPlugin(spec.Path, spec.Checksum, spec.AllowInsecure)
	if err != nil {
		return nil, err
	}
	defer img.Close() // the child holds its own copy once started
	if afterOpen != nil {
		afterOpen()
	}
	cmd := exec.Command(spec.Path)
	cmd.Path = childExecPath
	cmd.ExtraFiles = []*os.File{img}
	cmd.Env = append(hostPluginEnv(), noMulticastEnv...)
	cmd.Env = append(cmd.Env, sdk.EnvParentPID+"="+strconv.Itoa(os.Getpid()), "SYMMTUNE_RANK="+strconv.Itoa(rank), socketEnv(sockets))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cfg, err := clientConfig(spec, cmd)
	if err != nil {
		return nil, err
	}
	tails := []*stderrTail{{}, {}}
	cfg.Stderr, cfg.SyncStderr = tails[0], tails[1]
	began := time.Now()
	c := plugin.NewClient(cfg)
	proto, err := c.Client()
	if err != nil {
		c.Kill()
		// go-plugin has no sentinel for this one. A stale plugin in the
		// plugin directory is the user's to rebuild, not a failure of
		// the search.
		if strings.Contains(strings.ToLower(err.Error()), "incompatible api version") {
			return nil, &InputError{fmt.Errorf("plugin %s speaks another plugin protocol; rebuild it against this symmtune's sdk (%w)", spec.Path, err)}
		}
		// go-plugin's message ("Unrecognized remote plugin message", "exited
		// before we could connect") hides why: the exit status and the
		// plugin's own last words say it.
		// Its later lines describe the file at cmd.Path, which in the
		// host is not the plugin (the child's /proc/self/fd/3).
		first, _, _ := strings.Cut(err.Error(), "\n")
		first = strings.TrimSuffix(strings.TrimSpace(first), ":")
		if note := (&rankProc{client: c, cmd: cmd, stderr: tails}).exitNote(); note != "" {
			if strings.HasPrefix(first, "Unrecognized remote plugin message") || strings.HasPrefix(first, "plugin exited before") {
				first = "it exited before go-plugin's handshake"
			}
			first += " (" + note + ")"
		}
		err = errors.New(first)
		return nil, fmt.Errorf("start plugin %s (rank %d): %w", spec.Path, rank, err)
	}
	raw, err := proto.Dispense(sdk.PluginName)
	if err != nil {
		c.Kill()
		return nil, fmt.Errorf("plugin %s (rank %d): dispense: %w", spec.Path, rank, err)
	}
	kc, ok := raw.(pb.KernelClient)
	if !ok {
		c.Kill()
		return nil, fmt.Errorf("plugin %s: dispensed %T, not a kernel client", spec.Path, raw)
	}
	r = &rankProc{rank: rank, client: c, kernel: kc, startup: time.Since(began), sockets: sockets, cmd: cmd, stderr: tails}
	if rc := c.ReattachConfig(); rc != nil {
		r.pid = rc.Pid
	}
	return r, nil
}

// clientConfig is go-plugin's configuration for one plugin process: gRPC
// only, mutually authenticated TLS with per-process certificates (go-plugin's
// AutoMTLS scheme with a P-256 host certificate, see hostTLS). No
// SecureConfig: go-plugin would hash the path and then exec the path, which
// can be swapped in between; launch checks a pinned binary's hash on the
// bytes the child execs instead (trust.go). It adds the host's certificate to cmd's environment, after
// the host's own (cmd.Env already holds it, so go-plugin must not append it
// again, which would let an inherited PLUGIN_CLIENT_CERT win). Separate
// from launch so a test can check those settings without starting anything.
func clientConfig(spec launchSpec, cmd *exec.Cmd) (*plugin.ClientConfig, error) {
	tlsCfg, certPEM, err := hostTLS()
	if err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Env, envClientCert+"="+string(certPEM))
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake(),
		VersionedPlugins: sdk.HostPlugins(),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		TLSConfig:        tlsCfg,
		Logger:           spec.Logger,
		StartTimeout:     spec.Start,
		Stderr:           spec.Stderr,
	}
	if spec.Logger != nil {
		// go-plugin names a plugin's log lines after cmd.Path, here the
		// child's /proc/self/fd/3: the binary's name says more.
		cfg.Logger = spec.Logger.Named(filepath.Base(spec.Path))
	}
	return cfg, nil
}

// kill ends the process at once. A hung rank may sit in a barrier with an
// RPC in flight, which a graceful shutdown would wait for, so it gets
// SIGKILL (its whole process group) before go-plugin cleans up.
func (r *rankProc) kill() {
	if r.pid > 0 {
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
		_ = syscall.Kill(r.pid, syscall.SIGKILL)
	}
	r.client.Kill()
	_ = os.RemoveAll(r.sockets)
}

// stop asks the plugin to tear down and exit, killing it if it does not.
func (r *rankProc) stop(ctx context.Context) {
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := r.kernel.Teardown(tctx, &pb.TeardownRequest{}); err != nil {
		r.kill()
		return
	}
	r.client.Kill()
	_ = os.RemoveAll(r.sockets)
}

// exited reports whether the process has died, waiting up to grace for
// go-plugin to notice (it learns of the exit asynchronously).
func (r *rankProc) exited(grace time.Duration) bool {
	deadline := time.Now().Add(grace)
	for {
		if r.client.Exited() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

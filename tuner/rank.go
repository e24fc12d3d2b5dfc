package tuner

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
}

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
	cmd := exec.Command(spec.Path)
	cmd.Env = append(os.Environ(), noMulticastEnv...)
	cmd.Env = append(cmd.Env, sdk.EnvParentPID+"="+strconv.Itoa(os.Getpid()), "SYMMTUNE_RANK="+strconv.Itoa(rank), socketEnv(sockets))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cfg, err := clientConfig(spec, cmd)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c := plugin.NewClient(cfg)
	proto, err := c.Client()
	if err != nil {
		c.Kill()
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			return nil, &InputError{fmt.Errorf("plugin %s: its SHA-256 does not match the pinned checksum; refusing to start it", spec.Path)}
		}
		// go-plugin has no sentinel for this one. A stale plugin in the
		// plugin directory is the user's to rebuild, not a failure of
		// the search.
		if strings.Contains(strings.ToLower(err.Error()), "incompatible api version") {
			return nil, &InputError{fmt.Errorf("plugin %s speaks another plugin protocol; rebuild it against this symmtune's sdk (%w)", spec.Path, err)}
		}
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
	r = &rankProc{rank: rank, client: c, kernel: kc, startup: time.Since(began), sockets: sockets}
	if rc := c.ReattachConfig(); rc != nil {
		r.pid = rc.Pid
	}
	return r, nil
}

// clientConfig is go-plugin's configuration for one plugin process: gRPC
// only, mutually authenticated TLS with per-process certificates (go-plugin's
// AutoMTLS scheme with a P-256 host certificate, see hostTLS), and the
// binary's pinned SHA-256 checked before it starts (SecureConfig) when the
// job pins one. It adds the host's certificate to cmd's environment, after
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
	if spec.Checksum != nil {
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: spec.Checksum, Hash: sha256.New()}
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

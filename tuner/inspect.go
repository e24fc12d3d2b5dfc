package tuner

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/symmtune/symmtune/hardware"
	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// PluginInfo is what one plugin process says about itself and, when a
// world size is given, the hardware it would run on.
type PluginInfo struct {
	Path     string
	Backend  string
	Desc     sdk.Description
	Hardware *hardware.Fingerprint
}

// Trust is what the host asks of a plugin binary before it runs one
// outside a search's job (which carries its own pin).
type Trust struct {
	// AllowInsecure runs binaries that someone other than root or this
	// user could have changed (--allow-insecure-plugins; trust.go).
	AllowInsecure bool
	// Pins maps a kernel to the SHA-256 its binary must have (--pin).
	Pins map[string]string
}

// Validator asks a running plugin whether config c can run problem p at
// the world size and backend it was inspected for: the reason it cannot,
// "" when it can.
type Validator func(ctx context.Context, c space.Config, p space.Problem) (string, error)

// Inspect starts one process of kernel's plugin, asks it to describe itself
// (and fingerprint the hardware for world ranks when world > 0), and stops it.
func Inspect(ctx context.Context, dir, kernel, backend string, world int, trust Trust) (*PluginInfo, error) {
	return InspectLogged(ctx, dir, kernel, backend, world, trust, hclog.NewNullLogger())
}

// stderrTailLines is how much of a failed plugin's stderr an error quotes:
// enough for a Python traceback's last frames and its message.
const stderrTailLines = 8

// InspectLogged is Inspect with the plugin's output logged to logger. A
// plugin that fails to start or to describe itself is reported with the
// last lines of its stderr (an import error, a missing library), which
// go-plugin's own error does not show.
func InspectLogged(ctx context.Context, dir, kernel, backend string, world int, trust Trust, logger hclog.Logger) (*PluginInfo, error) {
	return InspectWith(ctx, dir, kernel, backend, world, trust, logger, nil)
}

// InspectWith is InspectLogged that, when use is set, calls it with the
// description and a Validator on the same plugin process before stopping
// it (lookup checks the config it answers with at the asked shape).
func InspectWith(ctx context.Context, dir, kernel, backend string, world int, trust Trust, logger hclog.Logger, use func(*PluginInfo, Validator) error) (*PluginInfo, error) {
	backend, err := ResolveBackend(backend, dir, kernel)
	if err != nil {
		return nil, err
	}
	path, err := PluginPath(dir, kernel, backend)
	if err != nil {
		return nil, err
	}
	tail := &lineTail{max: stderrTailLines}
	spec := launchSpec{Path: path, Logger: logger, Start: 30 * time.Second, Stderr: tail, AllowInsecure: trust.AllowInsecure}
	if pin := trust.Pins[kernel]; pin != "" {
		if spec.Checksum, err = parsePin(pin); err != nil {
			return nil, inputErrorf("pinned checksum for %s: %v", kernel, err)
		}
	}
	r, err := launch(spec, 0)
	if err != nil {
		// go-plugin's paragraph for a process that never answered lists
		// generic causes; the plugin's own stderr, quoted below it, is
		// the cause.
		if strings.Contains(err.Error(), "Unrecognized remote plugin message") && tail.any() {
			err = fmt.Errorf("plugin %s exited or wrote something else before go-plugin's handshake", path)
		}
		return nil, tail.annotate(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			r.stop(context.WithoutCancel(ctx))
		}
	}
	defer stop()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := r.kernel.Describe(cctx, &pb.DescribeRequest{})
	if err != nil {
		stop() // its stderr is complete once it has exited
		return nil, tail.annotate(fmt.Errorf("describe %s: %s", path, grpcMessage(err)))
	}
	desc, err := sdk.DescriptionFromProto(d)
	if err != nil {
		return nil, err
	}
	info := &PluginInfo{Path: path, Backend: backend, Desc: desc}
	if world > 0 {
		hw, err := r.kernel.Hardware(cctx, &pb.HardwareRequest{Backend: backend, World: int32(world)})
		if err != nil {
			return nil, inputErrorf("world size %d on the %s backend: %s", world, backend, grpcMessage(err))
		}
		f := sdk.HardwareFromProto(hw)
		info.Hardware = &f
	}
	if use != nil {
		validate := func(ctx context.Context, c space.Config, p space.Problem) (string, error) {
			vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			v, err := r.kernel.Validate(vctx, &pb.ValidateRequest{
				Config: sdk.ConfigToProto(c), Problem: sdk.ProblemToProto(p), World: int32(world), Backend: backend,
			})
			if err != nil {
				return "", fmt.Errorf("validate %s: %w", c, err)
			}
			return rejection(v), nil
		}
		if err := use(info, validate); err != nil {
			return nil, err
		}
	}
	return info, nil
}

// lineTail keeps the last max lines written to it. go-plugin writes a
// plugin's stderr from its own goroutine, hence the lock.
type lineTail struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  []byte
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(t.part[:i]), "\r"); strings.TrimSpace(line) != "" {
			t.lines = append(t.lines, line)
			if len(t.lines) > t.max {
				t.lines = t.lines[1:]
			}
		}
		t.part = t.part[i+1:]
	}
	return len(p), nil
}

// any reports whether anything was written.
func (t *lineTail) any() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.lines) > 0 || len(bytes.TrimSpace(t.part)) > 0
}

// annotate adds the lines kept to err, indented under it.
func (t *lineTail) annotate(err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := slices.Clone(t.lines)
	if s := strings.TrimSpace(string(t.part)); s != "" {
		lines = append(lines, s) // a last line without its newline
		lines = lines[max(0, len(lines)-t.max):]
	}
	if len(lines) == 0 {
		if strings.Contains(err.Error(), "stderr: ") {
			return err // the launch quoted the stderr of a plugin that exited (crashNote)
		}
		return fmt.Errorf("%w (it wrote nothing to stderr)", err)
	}
	return fmt.Errorf("%w; its stderr ends:\n    %s", err, strings.Join(lines, "\n    "))
}

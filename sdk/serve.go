package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/symmtune/symmtune/hardware"
	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
)

// Serve runs k as a symmtune plugin process over the given backends and
// never returns. Call it from the plugin's main.
func Serve(k Kernel, backends ...symm.Backend) {
	srv := newServer(k, backends)
	go srv.watchHost(hostPID(), time.Second)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{
			builtProtocolVersion(): {PluginName: &GRPCKernelPlugin{Impl: srv}},
		},
		GRPCServer: plugin.DefaultGRPCServer,
	})
	srv.closeAll()
}

// server holds one rank's state. The host calls one RPC at a time per rank,
// but the mutex keeps a late call after a deadline from racing the next one.
type server struct {
	pb.UnimplementedKernelServer
	kernel   Kernel
	backends map[string]symm.Backend
	desc     Description
	// descErr is a panic of the kernel's Describe: the Describe call
	// answers with it, so the host names the panic instead of seeing a
	// process that died before its handshake.
	descErr error

	mu       sync.Mutex
	backend  symm.Backend
	problem  space.Problem
	pending  symm.Pending
	team     symm.Team
	instance Instance
}

func newServer(k Kernel, backends []symm.Backend) *server {
	s := &server{kernel: k, backends: map[string]symm.Backend{}}
	s.desc, s.descErr = describeKernel(k)
	s.desc.Backends = nil
	for _, b := range backends {
		s.backends[b.Name()] = b
		s.desc.Backends = append(s.desc.Backends, b.Name())
	}
	return s
}

// watchHost exits the process when the host that started it is gone (killed
// with SIGKILL, say), so no rank outlives its search. Shared resources were
// unlinked at Connect, so exiting leaks nothing.
func (s *server) watchHost(pid int, every time.Duration) {
	for {
		time.Sleep(every)
		if pid <= 1 || syscall.Kill(pid, 0) == syscall.ESRCH || os.Getppid() == 1 {
			slog.Warn("symmtune host is gone; plugin exiting", "host_pid", pid)
			s.closeAll()
			os.Exit(3)
		}
	}
}

func (s *server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
}

func (s *server) closeLocked() {
	if s.instance != nil {
		_ = s.instance.Close()
		s.instance = nil
	}
	if s.team != nil {
		_ = s.team.Close()
		s.team = nil
	}
	if s.pending != nil {
		_ = s.pending.Close()
		s.pending = nil
	}
}

func (s *server) Describe(context.Context, *pb.DescribeRequest) (*pb.Description, error) {
	if s.descErr != nil {
		return nil, s.descErr
	}
	return DescriptionToProto(s.desc), nil
}

// describeKernel calls k.Describe, turning a panic into an error.
func describeKernel(k Kernel) (d Description, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered("describe", p)
		}
	}()
	return k.Describe(), nil
}

// validateKernel calls the kernel's Validate, turning a panic into a
// rejection of that config: one bad config must not take the process (and
// with it the whole search) down.
func validateKernel(k Kernel, c space.Config, p space.Problem, world int, backend string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered("validate "+c.String(), p)
		}
	}()
	return k.Validate(c, p, world, backend)
}

// recovered makes a panic's value an error naming the call and the panic's
// first line (what the host shows), and writes the stack to stderr, where
// the host keeps the last lines of a plugin's output.
func recovered(call string, p any) error {
	line, _, _ := strings.Cut(fmt.Sprint(p), "\n")
	fmt.Fprintf(os.Stderr, "symmtune plugin: panic in %s: %v\n%s", call, p, debug.Stack())
	return fmt.Errorf("%s panicked: %s", call, line)
}

func (s *server) lookupBackend(name string) (symm.Backend, error) {
	b, ok := s.backends[name]
	if !ok {
		return nil, fmt.Errorf("plugin %s has no %q backend (it has %v)", s.desc.Name, name, s.desc.Backends)
	}
	return b, nil
}

// Validate rejects a backend the plugin does not serve before the kernel
// sees the request, so a kernel's Validate need not check it.
func (s *server) Validate(_ context.Context, r *pb.ValidateRequest) (*pb.ValidateResponse, error) {
	c, err := ConfigFromProto(r.GetConfig())
	if err != nil {
		return nil, err
	}
	if _, err := s.lookupBackend(r.GetBackend()); err != nil {
		return &pb.ValidateResponse{Ok: false, Reason: err.Error()}, nil
	}
	if err := s.desc.Space.Check(c); err != nil {
		return &pb.ValidateResponse{Ok: false, Reason: err.Error()}, nil
	}
	if err := validateKernel(s.kernel, c, ProblemFromProto(r.GetProblem()), int(r.GetWorld()), r.GetBackend()); err != nil {
		return &pb.ValidateResponse{Ok: false, Reason: err.Error()}, nil
	}
	return &pb.ValidateResponse{Ok: true}, nil
}

// ValidateBatch answers Validate for each config of the request, in order,
// in this process: one round trip for many configs, with no change to the
// kernel (it still validates one config at a time).
func (s *server) ValidateBatch(ctx context.Context, r *pb.ValidateBatchRequest) (*pb.ValidateBatchResponse, error) {
	out := &pb.ValidateBatchResponse{Results: make([]*pb.ValidateResponse, 0, len(r.GetConfigs()))}
	for i, c := range r.GetConfigs() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, err := s.Validate(ctx, &pb.ValidateRequest{Config: c, Problem: r.GetProblem(), World: r.GetWorld(), Backend: r.GetBackend()})
		if err != nil {
			return nil, fmt.Errorf("config %d of %d: %w", i+1, len(r.GetConfigs()), err)
		}
		out.Results = append(out.Results, v)
	}
	return out, nil
}

// DefaultFor answers with the kernel's problem-dependent default when it
// has one (Defaulter), else Describe's default. A backend the plugin does
// not serve is an error.
func (s *server) DefaultFor(_ context.Context, r *pb.DefaultRequest) (resp *pb.DefaultResponse, err error) {
	b, err := s.lookupBackend(r.GetBackend())
	if err != nil {
		return nil, err
	}
	c := s.desc.Default
	if d, ok := s.kernel.(Defaulter); ok {
		defer func() {
			// The default is part of describing the kernel: a panic
			// fails that call, naming it, instead of the process.
			if p := recover(); p != nil {
				err = recovered("default config", p)
			}
		}()
		p, world := ProblemFromProto(r.GetProblem()), int(r.GetWorld())
		hd, onHardware := d.(HardwareDefaulter)
		var hw hardware.Fingerprint
		if onHardware {
			hw, err = b.Hardware(world)
			onHardware = err == nil
		}
		if onHardware {
			c, err = hd.DefaultOn(p, world, r.GetBackend(), hw)
		} else {
			c, err = d.DefaultFor(p, world, r.GetBackend())
		}
		if err != nil {
			return nil, fmt.Errorf("default config: %w", err)
		}
		if err := s.desc.Space.Check(c); err != nil {
			return nil, fmt.Errorf("default config %s is outside the space: %w", c, err)
		}
	}
	return &pb.DefaultResponse{Config: ConfigToProto(c)}, nil
}

func (s *server) Hardware(_ context.Context, r *pb.HardwareRequest) (*pb.HardwareInfo, error) {
	b, err := s.lookupBackend(r.GetBackend())
	if err != nil {
		return nil, err
	}
	f, err := b.Hardware(int(r.GetWorld()))
	if err != nil {
		return nil, fmt.Errorf("hardware fingerprint: %w", err)
	}
	return HardwareToProto(f), nil
}

func (s *server) Setup(ctx context.Context, r *pb.SetupRequest) (*pb.SetupResponse, error) {
	b, err := s.lookupBackend(r.GetBackend())
	if err != nil {
		return nil, err
	}
	p := ProblemFromProto(r.GetProblem())
	world, rank := int(r.GetWorld()), int(r.GetRank())
	if rank < 0 || rank >= world {
		return nil, fmt.Errorf("rank %d outside world %d", rank, world)
	}
	bytes, err := s.kernel.SymmetricBytes(p, world, b.Name())
	if err != nil {
		return nil, fmt.Errorf("symmetric size: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
	pending, blob, err := b.Allocate(ctx, rank, world, bytes, r.GetGroupId())
	if err != nil {
		return nil, fmt.Errorf("rank %d: allocate %d symmetric bytes on %s: %w", rank, bytes, b.Name(), err)
	}
	s.backend, s.problem, s.pending = b, p, pending
	return &pb.SetupResponse{Blob: blob}, nil
}

func (s *server) Connect(ctx context.Context, r *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		return nil, errors.New("connect before setup")
	}
	team, err := s.pending.Connect(ctx, r.GetBlobs())
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	s.pending = nil
	s.team = team
	inst, err := s.kernel.Open(ctx, team, s.problem)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.desc.Name, err)
	}
	s.instance = inst
	return &pb.ConnectResponse{}, nil
}

// ready returns the instance and the request's config, checked against the space.
func (s *server) ready(c *pb.Config) (Instance, space.Config, error) {
	if s.instance == nil {
		return nil, nil, errors.New("no instance: call setup and connect first")
	}
	cfg, err := ConfigFromProto(c)
	if err != nil {
		return nil, nil, err
	}
	if err := s.desc.Space.Check(cfg); err != nil {
		return nil, nil, err
	}
	return s.instance, cfg, nil
}

func (s *server) Precompile(ctx context.Context, r *pb.PrecompileRequest) (*pb.PrecompileResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &pb.PrecompileResponse{Errors: make([]string, len(r.GetConfigs()))}
	pc, ok := s.instance.(Precompiler)
	if !ok {
		return out, nil
	}
	cs := make([]space.Config, len(r.GetConfigs()))
	for i, c := range r.GetConfigs() {
		cfg, err := ConfigFromProto(c)
		if err != nil {
			return nil, err
		}
		cs[i] = cfg
	}
	for i, err := range pc.Precompile(ctx, cs) {
		if err != nil {
			out.Errors[i] = err.Error()
		}
	}
	return out, nil
}

// withInstance runs f on the instance, for config c, under the server's
// lock: Prepare, Verify and Bench each hold it for their whole call.
func withInstance[T any](s *server, c *pb.Config, f func(Instance, space.Config) (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, cfg, err := s.ready(c)
	if err != nil {
		var none T
		return none, err
	}
	return f(inst, cfg)
}

func (s *server) Prepare(ctx context.Context, r *pb.PrepareRequest) (*pb.PrepareResponse, error) {
	return withInstance(s, r.GetConfig(), func(inst Instance, cfg space.Config) (*pb.PrepareResponse, error) {
		if err := inst.Prepare(ctx, cfg); err != nil {
			return nil, fmt.Errorf("prepare %s: %w", cfg, err)
		}
		return &pb.PrepareResponse{}, nil
	})
}

func (s *server) Verify(ctx context.Context, r *pb.VerifyRequest) (*pb.VerifyResponse, error) {
	return withInstance(s, r.GetConfig(), func(inst Instance, cfg space.Config) (*pb.VerifyResponse, error) {
		res, err := inst.Verify(ctx, cfg, r.GetSeed())
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", cfg, err)
		}
		return &pb.VerifyResponse{Ok: res.OK, RelErr: res.RelErr, Detail: res.Detail}, nil
	})
}

func (s *server) Bench(ctx context.Context, r *pb.BenchRequest) (*pb.BenchResponse, error) {
	return withInstance(s, r.GetConfig(), func(inst Instance, cfg space.Config) (*pb.BenchResponse, error) {
		if r.GetIters() < 1 || r.GetWarmup() < 0 {
			return nil, fmt.Errorf("bench: iters %d, warmup %d", r.GetIters(), r.GetWarmup())
		}
		timing, err := ParseTiming(r.GetTiming())
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		times, err := inst.Bench(WithTiming(ctx, timing), cfg, int(r.GetWarmup()), int(r.GetIters()))
		if err != nil {
			return nil, fmt.Errorf("bench %s: %w", cfg, err)
		}
		return &pb.BenchResponse{TimesUs: times}, nil
	})
}

func (s *server) Teardown(context.Context, *pb.TeardownRequest) (*pb.TeardownResponse, error) {
	s.closeAll()
	return &pb.TeardownResponse{}, nil
}

package tuner

import (
	"context"
	"fmt"
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

// Validator asks a running plugin whether config c can run problem p at
// the world size and backend it was inspected for: the reason it cannot,
// "" when it can.
type Validator func(ctx context.Context, c space.Config, p space.Problem) (string, error)

// Inspect starts one process of kernel's plugin, asks it to describe itself
// (and fingerprint the hardware for world ranks when world > 0), and stops it.
func Inspect(ctx context.Context, dir, kernel, backend string, world int) (*PluginInfo, error) {
	return InspectWith(ctx, dir, kernel, backend, world, nil)
}

// InspectWith is Inspect that, when use is set, calls it with the
// description and a Validator on the same plugin process before stopping
// it (lookup checks the config it answers with at the asked shape).
func InspectWith(ctx context.Context, dir, kernel, backend string, world int, use func(*PluginInfo, Validator) error) (*PluginInfo, error) {
	backend, err := ResolveBackend(backend, dir, kernel)
	if err != nil {
		return nil, err
	}
	path, err := PluginPath(dir, kernel, backend)
	if err != nil {
		return nil, err
	}
	r, err := launch(launchSpec{Path: path, Logger: hclog.NewNullLogger(), Start: 30 * time.Second}, 0)
	if err != nil {
		return nil, err
	}
	defer r.stop(context.WithoutCancel(ctx))
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := r.kernel.Describe(cctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
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

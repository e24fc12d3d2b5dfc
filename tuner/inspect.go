package tuner

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/symmtune/symmtune/hardware"
	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
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

// Inspect starts one process of kernel's plugin, asks it to describe itself
// (and fingerprint the hardware for world ranks when world > 0), and stops it.
func Inspect(ctx context.Context, dir, kernel, backend string, world int, trust Trust) (*PluginInfo, error) {
	backend, err := ResolveBackend(backend, dir, kernel)
	if err != nil {
		return nil, err
	}
	path, err := PluginPath(dir, kernel, backend)
	if err != nil {
		return nil, err
	}
	spec := launchSpec{Path: path, Logger: hclog.NewNullLogger(), Start: 30 * time.Second, AllowInsecure: trust.AllowInsecure}
	if pin := trust.Pins[kernel]; pin != "" {
		if spec.Checksum, err = parsePin(pin); err != nil {
			return nil, inputErrorf("pinned checksum for %s: %v", kernel, err)
		}
	}
	r, err := launch(spec, 0)
	if err != nil {
		return nil, err
	}
	defer r.stop(context.WithoutCancel(ctx))
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := r.kernel.Describe(cctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe %s: %s", path, grpcMessage(err))
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
	return info, nil
}

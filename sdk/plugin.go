package sdk

import (
	"context"
	"os"
	"strconv"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
)

// ProtocolVersion is the version of proto/kernel.proto. The host refuses a
// plugin built for another version (go-plugin's handshake carries it).
const ProtocolVersion = 1

// protocolOverride lets tests build a plugin that claims another protocol
// version (-ldflags -X github.com/symmtune/symmtune/sdk.protocolOverride=99).
var protocolOverride string

// builtProtocolVersion is the version this binary speaks.
func builtProtocolVersion() int {
	if v, err := strconv.Atoi(protocolOverride); err == nil {
		return v
	}
	return ProtocolVersion
}

// PluginName is the key the kernel service is dispensed under.
const PluginName = "kernel"

// Handshake is shared by host and plugins. The magic cookie only stops a
// plugin binary from being run by hand by mistake; it is no security measure.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  uint(builtProtocolVersion()),
		MagicCookieKey:   "SYMMTUNE_PLUGIN",
		MagicCookieValue: "symmetric-memory-kernels",
	}
}

// HostPlugins is the plugin set the host offers, keyed by protocol version.
func HostPlugins() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCKernelPlugin{}},
	}
}

// GRPCKernelPlugin is the go-plugin binding of the Kernel service: the host
// dispenses a pb.KernelClient, plugins serve Impl.
type GRPCKernelPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl pb.KernelServer
}

// GRPCServer registers the kernel service in the plugin process.
func (p *GRPCKernelPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterKernelServer(s, p.Impl)
	return nil
}

// GRPCClient returns the host's client for the kernel service.
func (p *GRPCKernelPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pb.NewKernelClient(c), nil
}

// EnvParentPID is set by the host to its PID, so a plugin can tell when the
// host is gone even if it was re-parented to a subreaper rather than init.
const EnvParentPID = "SYMMTUNE_HOST_PID"

// hostPID returns the PID the plugin should watch.
func hostPID() int {
	if v, err := strconv.Atoi(os.Getenv(EnvParentPID)); err == nil && v > 0 {
		return v
	}
	return os.Getppid()
}

package tuner

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// problemDefault is the config an untuned caller would run on p: the
// plugin's answer to DefaultFor, or Describe's default from a plugin that
// does not implement it (an older protocol 1 plugin). It is the baseline
// every search measures first, and what "speedup over default" compares.
func problemDefault(ctx context.Context, r *rankProc, desc sdk.Description, p space.Problem, world int, backend string) (space.Config, error) {
	resp, err := r.kernel.DefaultFor(ctx, &pb.DefaultRequest{Problem: sdk.ProblemToProto(p), World: int32(world), Backend: backend})
	if status.Code(err) == codes.Unimplemented {
		return desc.Default, nil
	}
	if err != nil {
		return nil, fmt.Errorf("default config for %s: %s", p.Shape, grpcMessage(err))
	}
	c, err := sdk.ConfigFromProto(resp.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("default config: %w", err)
	}
	if err := desc.Space.Check(c); err != nil {
		return nil, fmt.Errorf("default config %s: %w", c, err)
	}
	return c, nil
}

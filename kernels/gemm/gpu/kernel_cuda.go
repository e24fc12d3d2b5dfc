//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// UtilSource is the CUDA C of the pipelines' helper kernels.
var UtilSource = string(source("kernels/gemm_util.cu"))

// Kernel is the sdk.Kernel of a GPU GEMM plugin, agmm or matmulrs.
type Kernel struct{ Variant Variant }

func (k Kernel) Describe() sdk.Description {
	summary := "all-gather + matmul on GPUs: C = A*B from row shards of A, copies of peers' chunks overlapped with cuBLASLt products (impl=pipeline) or with one persistent Hopper GEMM that waits on each chunk's flag (impl=fused:TILE)"
	if k.Variant == VariantMatmulRS {
		summary = "matmul + reduce-scatter on GPUs: rank r gets rows r*M/W.. of sum_s A_s*B, cuBLASLt products pushed to owners chunk by chunk and reduced as they land"
	}
	return sdk.Description{
		Name:          k.Variant.String(),
		KernelVersion: k.Variant.KernelVersion(),
		Dims:          []string{"m", "n", "k"},
		Dtypes:        DtypeNames(),
		Space:         k.Variant.Space(),
		Default:       k.Variant.Default(),
		Summary:       summary,
	}
}

func (k Kernel) Validate(c space.Config, p space.Problem, world int, _ string) error {
	_, _, err := k.checked(c, p, world)
	return err
}

func (k Kernel) checked(c space.Config, p space.Problem, world int) (Config, Problem, error) {
	return k.Variant.check(c, p, world)
}

// DefaultFor implements sdk.Defaulter: Default fitted to the problem
// (FitDefault), so a search on one rank, or on ranks holding few rows, has
// a baseline that runs.
func (k Kernel) DefaultFor(p space.Problem, world int, backend string) (space.Config, error) {
	prob, err := ParseProblem(p, world)
	if err != nil {
		return nil, err
	}
	return k.Variant.FitDefault(prob)
}

var _ sdk.HardwareDefaulter = Kernel{}

// DefaultOn implements sdk.HardwareDefaulter: the family measured best on
// the GPUs the search runs on (Variant.DefaultOn: the fused GEMM on sm_90),
// fitted to the problem.
func (k Kernel) DefaultOn(p space.Problem, world int, _ string, hw hardware.Fingerprint) (space.Config, error) {
	prob, err := ParseProblem(p, world)
	if err != nil {
		return nil, err
	}
	return k.Variant.DefaultOn(prob, DeviceOf(hw))
}

func (k Kernel) SymmetricBytes(p space.Problem, world int, backend string) (int64, error) {
	prob, err := ParseProblem(p, world)
	if err != nil {
		return 0, err
	}
	return k.Variant.SymmetricBytes(prob), nil
}

func (k Kernel) Open(ctx context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, err := sdk.TeamAs[*cudamem.Team](team)
	if err != nil {
		return nil, err
	}
	prob, err := ParseProblem(p, t.World())
	if err != nil {
		return nil, err
	}
	if err := prob.Dtype.CheckDevice(t.ComputeCapability()); err != nil {
		return nil, fmt.Errorf("open GPU %s on rank %d: %w", k.Variant, t.Rank(), err)
	}
	return open(k, t, prob, p.Dtype)
}

package gemm

import (
	"context"
	"fmt"

	"github.com/symmtune/symmtune/kernels/internal/srchash"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/shm"
)

// CPUKernel is the sdk.Kernel of a GEMM plugin on the shared-memory
// backend, less what differs between plugins: matmulrs and agmm share the
// space, the rules, the default, the region layout and the checks on a
// problem, and differ in what their symmetric payload holds and in the
// per-rank instance.
type CPUKernel struct {
	Name    string
	Summary string
	// Source is the kernel's own Go file (its cpu.go); with the shared
	// GEMM sources it makes the kernel version, so cache entries made by
	// an older kernel go stale. The version reads its package clause as
	// "package main": the CPU kernels lived in their plugins' package main
	// until 2026-11-25, and the move kept their versions (srchash.AsMain).
	Source []byte
	// PayloadElems is how many f32 values each rank's region holds past
	// the flags.
	PayloadElems func(Dims) int64
	// NewInstance opens rank t.Rank()'s instance; d.M is divisible by the
	// world size.
	NewInstance func(t *shm.Team, d Dims) (sdk.Instance, error)
}

func (k CPUKernel) Describe() sdk.Description {
	return sdk.Description{
		Name:          k.Name,
		KernelVersion: sdk.SourceHash(append([][]byte{srchash.AsMain(k.Source)}, Sources()...)...),
		Dims:          DimNames,
		Dtypes:        []string{"f32"},
		Summary:       k.Summary,
		Space:         Space(),
		Default:       Default(),
	}
}

func (k CPUKernel) Validate(c space.Config, p space.Problem, world int, backend string) error {
	return ValidateCPU(c, p, world, backend)
}

// SymmetricBytes is the flags plus the payload.
func (k CPUKernel) SymmetricBytes(p space.Problem, _ int, _ string) (int64, error) {
	d, err := ParseDims(p.Shape)
	if err != nil {
		return 0, err
	}
	return SymmetricBytes(d.M, k.PayloadElems(d), 4)
}

func (k CPUKernel) Open(_ context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, err := sdk.TeamAs[*shm.Team](team)
	if err != nil {
		return nil, err
	}
	d, err := ParseDims(p.Shape)
	if err != nil {
		return nil, err
	}
	if d.M%t.World() != 0 {
		return nil, fmt.Errorf("m=%d is not divisible by world %d", d.M, t.World())
	}
	return k.NewInstance(t, d)
}

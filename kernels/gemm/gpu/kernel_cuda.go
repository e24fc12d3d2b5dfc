//go:build cuda

package gpu

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// sources are what the kernel version hashes: the device code and the Go
// files that decide what runs (plans, layout, pipelines), so cache entries
// go stale when any of them changes.
//
//go:embed kernels/gemm_util.cu plan.go layout.go space.go instance_cuda.go pipeline_cuda.go check_cuda.go agmm_cuda.go matmulrs_cuda.go fusedplan.go fused_cuda.go fusedrun_cuda.go
var sources embed.FS

func source(name string) []byte {
	b, err := sources.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return b
}

// UtilSource is the CUDA C of the pipelines' helper kernels.
var UtilSource = string(source("kernels/gemm_util.cu"))

// Kernel is the sdk.Kernel of a GPU GEMM plugin: Name is AGMM or MatmulRS.
type Kernel struct{ Name string }

func (k Kernel) Describe() sdk.Description {
	srcs := [][]byte{[]byte(k.Name), []byte(hopper.Source)}
	// Every embedded file, in WalkDir's lexical order.
	err := fs.WalkDir(sources, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			srcs = append(srcs, source(path))
		}
		return err
	})
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	summary := "all-gather + matmul on GPUs: C = A*B from row shards of A, copies of peers' chunks overlapped with cuBLASLt products (impl=pipeline) or with one persistent Hopper GEMM that waits on each chunk's flag (impl=fused:TILE)"
	if k.Name == MatmulRS {
		summary = "matmul + reduce-scatter on GPUs: rank r gets rows r*M/W.. of sum_s A_s*B, cuBLASLt products pushed to owners chunk by chunk and reduced as they land"
	}
	return sdk.Description{
		Name:          k.Name,
		KernelVersion: sdk.SourceHash(srcs...),
		Dims:          []string{"m", "n", "k"},
		Dtypes:        []string{"bf16", "f16"},
		Space:         Space(k.Name),
		Default:       Default(k.Name),
		Summary:       summary,
	}
}

func (k Kernel) Validate(c space.Config, p space.Problem, world int, backend string) error {
	if backend != "cuda" {
		return fmt.Errorf("this plugin build runs on the cuda backend, not %q", backend)
	}
	_, _, err := k.checked(c, p, world)
	return err
}

func (k Kernel) checked(c space.Config, p space.Problem, world int) (Config, Problem, error) {
	prob, err := ParseProblem(p, world)
	if err != nil {
		return Config{}, Problem{}, err
	}
	cfg, err := ParseConfig(k.Name, c)
	if err != nil {
		return Config{}, Problem{}, err
	}
	if err := Validate(k.Name, cfg, prob); err != nil {
		return Config{}, Problem{}, fmt.Errorf("config %s: %w", c, err)
	}
	return cfg, prob, nil
}

func (k Kernel) SymmetricBytes(p space.Problem, world int, backend string) (int64, error) {
	prob, err := ParseProblem(p, world)
	if err != nil {
		return 0, err
	}
	return SymmetricBytes(k.Name, prob), nil
}

func (k Kernel) Open(ctx context.Context, team symm.Team, p space.Problem) (sdk.Instance, error) {
	t, ok := team.(*cudamem.Team)
	if !ok {
		return nil, fmt.Errorf("GPU %s needs a *cudamem.Team, got %T", k.Name, team)
	}
	prob, err := ParseProblem(p, t.World())
	if err != nil {
		return nil, err
	}
	return open(k, t, prob, p.Dtype)
}

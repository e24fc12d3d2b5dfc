package gpu

import (
	"embed"
	"io/fs"

	"github.com/symmtune/symmtune/kernels/gemm/hopper"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// sources are what the kernel version hashes: the device code and the Go
// files that decide what runs (plans, layout, the Runner's launch sequence
// and graphs, the fused GEMM's launch), so cache entries go stale when any
// of them changes. They are
// embedded here, without the cuda build tag, so the version is known where
// no GPU code builds (libsymmtune answers it to the Python runtime);
// python/tests/test_gemm.py reads this //go:embed line to check that the
// library was built from the sources on disk.
//
//go:embed kernels/gemm_util.cu plan.go layout.go space.go validate.go problem.go dtype_cuda.go instance_cuda.go runner_cuda.go pipeline_cuda.go check_cuda.go agmm_cuda.go matmulrs_cuda.go fusedplan.go fused_cuda.go fusedrun_cuda.go
var sources embed.FS

func source(name string) []byte {
	b, err := sources.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return b
}

// KernelVersion is the plugin's Description.KernelVersion for the variant:
// sdk.SourceHash of the kernel's name, the Hopper GEMM's source
// (hopper.Source), the team barrier's (cudamem.DeviceSource) and every
// embedded file in fs.WalkDir's lexical order.
func (v Variant) KernelVersion() string {
	// The barrier's source too: gemm_util.cu's end_barrier is built on it.
	srcs := [][]byte{[]byte(v.String()), []byte(hopper.Source), []byte(cudamem.DeviceSource)}
	err := fs.WalkDir(sources, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			srcs = append(srcs, source(path))
		}
		return err
	})
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return sdk.SourceHash(srcs...)
}

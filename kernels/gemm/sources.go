package gemm

import "embed"

// sourceFS holds this package's kernel sources (not its tests), so plugins
// can fold them into their KernelVersion: a change to the shared GEMM, the
// schedule or the rules makes cached winners stale.
//
//go:embed config.go cpu.go gemm.go layout.go ref.go schedule.go
var sourceFS embed.FS

// Sources returns the package's kernel source files for sdk.SourceHash.
func Sources() [][]byte {
	names := []string{"config.go", "cpu.go", "gemm.go", "layout.go", "ref.go", "schedule.go"}
	out := make([][]byte, len(names))
	for i, n := range names {
		b, err := sourceFS.ReadFile(n)
		if err != nil {
			panic("gemm: embedded source " + n + ": " + err.Error())
		}
		out[i] = b
	}
	return out
}

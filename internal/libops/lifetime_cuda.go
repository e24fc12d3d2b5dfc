//go:build cuda

package libops

import "github.com/symmtune/symmtune/symm/cudamem"

// The runners' capture check (lifetime.go) asks the driver.
func init() {
	streamCapturing = func(stream uint64) (bool, error) { return cudamem.IsCapturing(cudamem.StreamOf(stream)) }
}

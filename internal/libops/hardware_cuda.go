//go:build cuda

package libops

import (
	"fmt"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// gpuFingerprint is the cuda backend's fingerprint of GPUs 0..world-1.
func gpuFingerprint(world int) (hardware.Fingerprint, error) {
	f, err := cudamem.Backend{}.Hardware(world)
	if err != nil {
		return f, fmt.Errorf("fingerprint %d GPUs: %w", world, err)
	}
	return f, nil
}

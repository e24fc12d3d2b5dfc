//go:build !cuda

package libops

import (
	"errors"

	"github.com/symmtune/symmtune/hardware"
)

// gpuFingerprint cannot fingerprint GPUs in a library built without CUDA.
func gpuFingerprint(int) (hardware.Fingerprint, error) {
	return hardware.Fingerprint{}, errors.New("fingerprint GPUs: this libsymmtune was built without CUDA (make lib builds it with -tags cuda)")
}

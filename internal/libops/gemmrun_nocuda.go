//go:build !cuda

package libops

import "errors"

// errNoCUDA is open's answer in a library built without the cuda tag.
var errNoCUDA = errors.New("this libsymmtune was built without CUDA (go build -tags cuda): it answers the rules but runs no kernel")

func openRunner(gemmOpen) (gemmRunner, string, error) { return nil, "", errNoCUDA }

func openAllreduce(allreduceOpen) (allreduceRunner, error) { return nil, errNoCUDA }

//go:build !cuda

package libops

func openAllreduce(allreduceOpen) (allreduceRunner, error) { return nil, errNoCUDA }

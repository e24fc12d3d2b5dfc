//go:build cuda

package gpu

// The tagged code's names equal consts.go's: a difference makes one of
// these constants negative, which uint cannot hold (a compile error).
const (
	_ = uint(maxStreams-MaxStreams) + uint(MaxStreams-maxStreams)
	_ = uint(copyThreads-CopyThreads) + uint(CopyThreads-copyThreads)
	_ = uint(reduceThreads-ReduceThreads) + uint(ReduceThreads-reduceThreads)
)

package libops

import "sort"

// This file is the runners' lifetime under CUDA graphs (the operations
// runtime.retire and runtime.stats). A CUDA graph captured on a caller's
// stream holds the kernels, modules, cuBLASLt workspaces and buffers of
// every runner whose call it captured, by address: closing such a runner
// while the graph may still replay would leave the graph pointing at freed
// memory. So a runner remembers whether any of its calls was enqueued in
// a capture, and the caller that moves to new memory (symmtune.torch, when
// a workspace grows) retires its old runners instead of closing them:
// those no capture used close at once, the others stay open, unused, for
// the process's life. Their memory is bounded by the workspace's growth
// (each generation is at least twice the last).

// streamCapturing says whether a CUstream is being captured. The cuda
// build sets it (gemmptrs_cuda.go); without CUDA no runner opens, so it is
// never asked. Tests replace it.
var streamCapturing = func(stream uint64) (bool, error) { return false, nil }

// noteCapture marks a GEMM runner as held by a graph when stream is being
// captured (one driver call, next to a GEMM's tens of microseconds of host
// time). Once marked it asks no more: a runner a graph held stays held.
// An all-reduce runner knows it itself (heldByGraph). Called with lr.mu
// held.
func (lr *liveRunner) noteCapture(stream uint64) error {
	if lr.captured {
		return nil
	}
	c, err := streamCapturing(stream)
	if err != nil {
		return err
	}
	lr.captured = c
	return nil
}

// heldByGraph says whether a graph may hold one of lr's calls; with lr.mu
// held.
func (lr *liveRunner) heldByGraph() bool {
	if ar, ok := lr.r.(arRunner); ok {
		return ar.captured()
	}
	return lr.captured
}

// RetireAnswer is runtime.retire's answer: the handles closed, and those
// kept because a capture used them (held until the process ends).
type RetireAnswer struct {
	Closed []uint64 `json:"closed"`
	Kept   []uint64 `json:"kept"`
}

// Retire closes each handle's runner unless a capture enqueued work on
// it; the others are kept open and refuse further calls. Every handle is
// dealt with even when one fails: the first error is returned with the
// answer so far.
func Retire(handles []uint64) (RetireAnswer, error) {
	ans := RetireAnswer{Closed: []uint64{}, Kept: []uint64{}}
	var first error
	for _, h := range handles {
		kept, err := retire(h)
		switch {
		case err != nil:
			if first == nil {
				first = err
			}
		case kept:
			ans.Kept = append(ans.Kept, h)
		default:
			ans.Closed = append(ans.Closed, h)
		}
	}
	return ans, first
}

func retire(h uint64) (kept bool, err error) {
	lr, err := liveHandle(h)
	if err != nil {
		return false, err
	}
	lr.mu.Lock()
	captured := lr.heldByGraph()
	lr.retired = true
	lr.mu.Unlock()
	if captured {
		return true, nil
	}
	return false, GemmClose(h)
}

// RuntimeStats counts the open runners, and of them the retired ones kept
// for graphs.
type RuntimeStats struct {
	Runners int `json:"runners"`
	Retired int `json:"retired"`
}

// Stats is runtime.stats's answer.
func Stats() RuntimeStats {
	runnersMu.Lock()
	live := make([]*liveRunner, 0, len(runners))
	for _, lr := range runners {
		live = append(live, lr)
	}
	runnersMu.Unlock()
	s := RuntimeStats{Runners: len(live)}
	for _, lr := range live {
		lr.mu.Lock()
		if lr.retired {
			s.Retired++
		}
		lr.mu.Unlock()
	}
	return s
}

func runtimeOps() map[string]op {
	return map[string]op{
		"runtime.retire": handler("{handles}: closes the runners no CUDA graph capture used, keeps (and retires) the others; answers {closed, kept}",
			func(r struct {
				Handles []uint64 `json:"handles"`
			}) (any, error) {
				ans, err := Retire(r.Handles)
				if err != nil {
					return nil, err
				}
				sort.Slice(ans.Kept, func(i, j int) bool { return ans.Kept[i] < ans.Kept[j] })
				return ans, nil
			}),
		"runtime.stats": handler("the open runners, and of them those retired but kept for CUDA graphs",
			func(struct{}) (any, error) { return Stats(), nil }),
	}
}

package libops

import (
	"testing"
	"time"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// poisonedAR is an all-reduce runner on a poisoned workspace, as
// cudaAllreduce answers once its host word is set.
type poisonedAR struct{ fakeAR }

func (*poisonedAR) enqueue(uint64, uint64, int64) error {
	return cudamem.PoisonError(uint32(cudamem.MakePoison(cudamem.KindBarrier, 1, 0)), 0, "all_reduce", 600*time.Second)
}

// poisonedGemm is the GEMM runner's twin.
type poisonedGemm struct{ fakeGemm }

func (*poisonedGemm) enqueue(uint64, gemmPtrs) error {
	return cudamem.PoisonError(uint32(cudamem.MakePoison(cudamem.KindFusedGate, 0xff, 1)), 0, "agmm", 600*time.Second)
}

// TestPoisonedEnqueue: a call on a poisoned workspace returns the
// workspace's error whole, one line naming the late rank and the op, with
// no prefix, for the all-reduce and the GEMM alike.
func TestPoisonedEnqueue(t *testing.T) {
	old := streamCapturing // the cuda build's asks the driver
	streamCapturing = func(uint64) (bool, error) { return false, nil }
	t.Cleanup(func() { streamCapturing = old })
	runnersMu.Lock()
	nextHandle++
	ar := nextHandle
	runners[ar] = &liveRunner{r: arRunner{&poisonedAR{}}}
	nextHandle++
	mm := nextHandle
	runners[mm] = &liveRunner{r: &poisonedGemm{}, dtype: "bf16"}
	runnersMu.Unlock()
	t.Cleanup(func() { _ = GemmClose(ar); _ = GemmClose(mm) })

	err := AllreduceEnqueue(ar, 1, 16, 8)
	want := "symmtune: group workspace poisoned: rank 1's barrier wait for rank 0 timed out after 10m0s (seen by rank 0's all_reduce); every later call on this workspace fails; rebuild the group"
	if err == nil || err.Error() != want {
		t.Errorf("all-reduce: %v\nwant %s", err, want)
	}
	err = GemmEnqueue(mm, 1, 16, 32, 48, 0)
	want = "symmtune: group workspace poisoned: rank 0's fused GEMM's start gate for rank 1 timed out after 10m0s (seen by rank 0's agmm); every later call on this workspace fails; rebuild the group"
	if err == nil || err.Error() != want {
		t.Errorf("GEMM: %v\nwant %s", err, want)
	}
}

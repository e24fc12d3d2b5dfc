package libops

import (
	"testing"
	"time"

	"github.com/symmtune/symmtune/symm/cudamem"
)

// TestPoisonedEnqueue: a call on a poisoned workspace returns the
// workspace's error whole, one line naming the late rank and the op, with
// no prefix, for the all-reduce and the GEMM alike.
func TestPoisonedEnqueue(t *testing.T) {
	f := useFake(t)
	f.err = cudamem.PoisonError(uint32(cudamem.MakePoison(cudamem.KindFusedGate, 0xff, 1)), 0, "agmm", 600*time.Second)
	req := fakeOpenReq
	mm, _, err := GemmOpen([]byte(req), []uint64{1 << 20, 2 << 20}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	ar := openFakeAR(t)
	runners[ar].ar.r = &fakeARRunner{err: cudamem.PoisonError(uint32(cudamem.MakePoison(cudamem.KindBarrier, 1, 0)), 0, "all_reduce", 600*time.Second)}

	err = AllreduceEnqueue(ar, 1, 16, 8)
	want := "symmtune: group workspace poisoned: rank 1's barrier wait for rank 0 timed out after 10m0s (seen by rank 0's all_reduce); every later call on this workspace fails; rebuild the group"
	if err == nil || err.Error() != want {
		t.Errorf("all-reduce: %v\nwant %s", err, want)
	}
	_, err = GemmEnqueue(mm, 1, 64, 16, 32, 48, 0)
	want = "symmtune: group workspace poisoned: rank 0's fused GEMM's start gate for rank 1 timed out after 10m0s (seen by rank 0's agmm); every later call on this workspace fails; rebuild the group"
	if err == nil || err.Error() != want {
		t.Errorf("GEMM: %v\nwant %s", err, want)
	}
}

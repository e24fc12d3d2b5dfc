package cudamem

import (
	"testing"
	"time"
)

func TestTimeoutOptions(t *testing.T) {
	if o := TimeoutOptions(TunerTimeout); o != nil {
		t.Errorf("tuner default: %v, want none (the macro's default)", o)
	}
	if o := TimeoutOptions(0); o != nil {
		t.Errorf("zero: %v, want none", o)
	}
	o := TimeoutOptions(RuntimeTimeout)
	if len(o) != 1 || o[0] != "-DSYMM_TIMEOUT_NS=600000000000ull" {
		t.Errorf("runtime default: %v", o)
	}
	if o := TimeoutOptions(50 * time.Millisecond); len(o) != 1 || o[0] != "-DSYMM_TIMEOUT_NS=50000000ull" {
		t.Errorf("50 ms: %v", o)
	}
}

func TestRuntimeTimeoutFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  string
		want time.Duration
		bad  bool
	}{
		{"", RuntimeTimeout, false},
		{"30", 30 * time.Second, false},
		{"0.25", 250 * time.Millisecond, false},
		{"0", 0, true},
		{"-5", 0, true},
		{"ten", 0, true},
		{"NaN", 0, true},
		{"1e12", 0, true},
	} {
		t.Setenv(TimeoutEnv, c.env)
		got, err := RuntimeTimeoutFromEnv()
		if c.bad != (err != nil) || got != c.want {
			t.Errorf("%s=%q: %v, %v", TimeoutEnv, c.env, got, err)
		}
	}
}

func TestPoisonWord(t *testing.T) {
	p := MakePoison(KindLamport, 3, 5)
	if uint32(p) != 0x82000305 {
		t.Fatalf("word %#x, want 0x82000305 (barrier.cuh's SYMM_POISON)", uint32(p))
	}
	if p.Kind() != KindLamport || p.Waiter() != 3 || p.Peer() != 5 {
		t.Errorf("decoded kind %d waiter %d peer %d", p.Kind(), p.Waiter(), p.Peer())
	}
	u := MakePoison(KindFusedFlag, 0xff, 0xff)
	if u.Waiter() != -1 || u.Peer() != -1 {
		t.Errorf("unknown ranks decode as %d, %d", u.Waiter(), u.Peer())
	}
}

func TestPoisonError(t *testing.T) {
	const tail = "; every later call on this workspace fails; rebuild the group"
	for _, c := range []struct {
		word    Poison
		rank    int
		op      string
		timeout time.Duration
		want    string
	}{
		{MakePoison(KindBarrier, 0, 1), 1, "all_reduce", 600 * time.Second,
			"symmtune: group workspace poisoned: rank 0's barrier wait for rank 1 timed out after 10m0s (seen by rank 1's all_reduce)"},
		// The fused GEMM does not know its rank or peer for every wait: the
		// caller's rank stands in.
		{MakePoison(KindFusedFlag, 0xff, 0xff), 2, "matmul_reduce_scatter", 10 * time.Second,
			"symmtune: group workspace poisoned: rank 2's fused GEMM's chunk wait for a peer timed out (seen by rank 2's matmul_reduce_scatter)"},
		{MakePoison(KindFusedGate, 0xff, 3), 0, "agmm", 5 * time.Second,
			"symmtune: group workspace poisoned: rank 0's fused GEMM's start gate for rank 3 timed out after 5s (seen by rank 0's agmm)"},
		// A pipeline's stream waiting for a peer's flag (wait_flags).
		{MakePoison(KindFlag, 0, 1), 0, "agmm", 5 * time.Second,
			"symmtune: group workspace poisoned: rank 0's stream's flag wait for rank 1 timed out after 5s (seen by rank 0's agmm)"},
		{MakePoison(KindFlag, 3, 2), 1, "matmulrs", 600 * time.Second,
			"symmtune: group workspace poisoned: rank 3's stream's flag wait for rank 2 timed out after 10m0s (seen by rank 1's matmulrs)"},
		{MakePoison(9, 1, 0), 1, "agmm", time.Second,
			"symmtune: group workspace poisoned: rank 1's wait for rank 0 timed out after 1s (seen by rank 1's agmm)"},
	} {
		err := PoisonError(uint32(c.word), c.rank, c.op, c.timeout)
		if err.Error() != c.want+tail {
			t.Errorf("word %#x:\ngot  %s\nwant %s", uint32(c.word), err, c.want+tail)
		}
		if pe, ok := err.(*PoisonedError); !ok || pe.Word != c.word {
			t.Errorf("word %#x: %T %v, want a *PoisonedError of the word", uint32(c.word), err, err)
		}
	}
}

//go:build cuda

package libops

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// TestAgmmFailStop: the fused all-gather + matmul on a world-2 group on
// device 0 where only rank 0 calls it. Its start gate (or, for a config
// that meets the peers first, its barrier) gives up after the bound, the
// end barrier spreads the poison to rank 1's pads, and both ranks' later
// calls fail naming rank 0's wait for rank 1. Needs an sm_90 GPU.
func TestAgmmFailStop(t *testing.T) {
	needGPU(t)
	if cc, err := cu.Device(0).Attribute(cu.ComputeCapabilityMajor); err != nil || cc != 9 {
		t.Skipf("the fused GEMM needs sm_90: major %d, %v", cc, err)
	}
	t.Setenv(cudamem.TimeoutEnv, "5")
	t.Setenv("SYMMTUNE_CUBIN_CACHE", t.TempDir())
	const m, n, k = 8192, 3584, 8192
	// The fused default on an H200 pair, without graphs, pushing.
	raw, err := Call("gemm.default", []byte(fmt.Sprintf(`{"kernel":"agmm","problem":{"m":%d,"n":%d,"k":%d,"world":2},"major":9,"minor":0,"sms":132}`, m, n, k)))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if impl, _ := cfg["impl"].(string); !strings.HasPrefix(impl, "fused") {
		t.Fatalf("default %s: not a fused config", raw)
	}
	// Push, as the fused defaults: the fused GEMM's own waits time out
	// here. A pull's stream wait for the peer's ready flag is
	// TestAgmmPullFailStop's.
	cfg["graph"], cfg["direction"] = 0, "push"
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, h := openAgmmGroup(t, m, n, k, string(cfgJSON))
	call := func(q int) error {
		return g.ranks[q].do(t, fmt.Sprintf("rank %d's agmm", q), func() error {
			o := g.tensor[q]
			if _, err := GemmEnqueue(h[q], 0, m, uint64(o[0]), uint64(o[1]), uint64(o[2]), 0); err != nil {
				return err
			}
			return cu.Synchronize()
		})
	}
	if err := call(0); err != nil {
		t.Fatalf("rank 0's call: %v", err)
	}
	flags := g.flags(t)
	for q, f := range flags {
		if f == 0 || f.Waiter() != 0 || f.Peer() != 1 {
			t.Errorf("rank %d's poison word %#x: want rank 0's wait for rank 1", q, uint32(f))
		}
	}
	t.Logf("poison word %#x (kind %d)", uint32(flags[0]), flags[0].Kind())
	for _, q := range []int{0, 1, 1} {
		err := call(q)
		if q == 1 && err == nil {
			continue // rank 1's first call: its end barrier finds the poison
		}
		var pe *cudamem.PoisonedError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "rank 0's") || !strings.Contains(err.Error(), "for rank 1 timed out after 5s") {
			t.Errorf("rank %d's call after the timeout: %v", q, err)
		}
	}
}

// TestAgmmPullFailStop: the cuBLASLt pipeline of all-gather + matmul,
// pulling, on a world-2 group on device 0 where only rank 0 calls it. Its
// copy stream waits for rank 1's ready flag in gemm_util.cu's wait_flags
// (it was cuStreamWaitValue32, which has no bound and hung the call for
// ever): past the bound the wait poisons the workspace naming rank 0's
// wait for rank 1, the call's stream finishes, and both ranks' later
// calls fail so. eager: rank 0's first call times out. graph: rank 0's
// first call runs healthy (the test sets the ready flag and the end
// barrier's signal rank 1 would have sent: the wait passes and clears the
// flag), then a call captured in the caller's CUDA graph times out when
// the graph is replayed: the wait is a kernel node.
func TestAgmmPullFailStop(t *testing.T) {
	needGPU(t)
	t.Setenv(cudamem.TimeoutEnv, "5")
	t.Setenv("SYMMTUNE_CUBIN_CACHE", t.TempDir())
	const m, n, k = 2048, 1024, 1024
	// The pipeline's default (no GPUs named: FitDefault), pulling, eager.
	raw, err := Call("gemm.default", []byte(fmt.Sprintf(`{"kernel":"agmm","problem":{"m":%d,"n":%d,"k":%d,"world":2}}`, m, n, k)))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["impl"] != "pipeline" || cfg["direction"] != "pull" {
		t.Fatalf("default %s: not the pulling pipeline", raw)
	}
	cfg["graph"] = 0
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, graph := range []bool{false, true} {
		t.Run(map[bool]string{false: "eager", true: "graph"}[graph], func(t *testing.T) {
			agmmPullFailStop(t, string(cfgJSON), m, n, k, graph)
		})
	}
}

func agmmPullFailStop(t *testing.T, cfgJSON string, m, n, k int, graph bool) {
	g, h := openAgmmGroup(t, m, n, k, cfgJSON)
	enqueue := func(q int, stream cu.Stream) error {
		o := g.tensor[q]
		_, err := GemmEnqueue(h[q], uint64(uintptr(stream.C())), m, uint64(o[0]), uint64(o[1]), uint64(o[2]), 0)
		return err
	}
	call := func(q int) error {
		return g.ranks[q].do(t, fmt.Sprintf("rank %d's agmm", q), func() error {
			if err := enqueue(q, cu.Stream{}); err != nil {
				return err
			}
			return cu.Synchronize()
		})
	}
	// Rank 0's ready flag from rank 1, and its team barrier pad counting
	// rank 1's signals (barrier.cuh: pads[slot][q], the last slot).
	ready := g.base[0] + cu.DevicePtr(gpu.ReadyFlag(1)*gpu.FlagStride)
	pad := g.pads[0] + cu.DevicePtr(((cudamem.PadSlots-1)*cudamem.MaxWorld+1)*4)
	word := func(at cu.DevicePtr) uint32 {
		var v uint32
		if err := g.ranks[0].do(t, "read a word", func() error { return cu.MemcpyDtoH(unsafe.Pointer(&v), at, 4) }); err != nil {
			t.Fatal(err)
		}
		return v
	}
	start := time.Now()
	if !graph {
		if err := call(0); err != nil {
			t.Fatalf("rank 0's call: %v", err)
		}
	} else {
		// What rank 1's call would have sent rank 0: its announcement and
		// its end barrier's signal.
		if err := g.ranks[0].do(t, "rank 1's signals", func() error {
			one := uint32(1)
			if err := cu.MemcpyHtoD(ready, unsafe.Pointer(&one), 4); err != nil {
				return err
			}
			return cu.MemcpyHtoD(pad, unsafe.Pointer(&one), 4)
		}); err != nil {
			t.Fatal(err)
		}
		if err := call(0); err != nil {
			t.Fatalf("rank 0's healthy call: %v", err)
		}
		if f := g.flags(t); f[0] != 0 || f[1] != 0 {
			t.Fatalf("poison words %#x, %#x after a healthy call", uint32(f[0]), uint32(f[1]))
		}
		if r, b := word(ready), word(pad); r != 0 || b != 0 {
			t.Fatalf("after the healthy call the ready flag is %d, the barrier pad %d: want both consumed", r, b)
		}
		t.Logf("healthy call: %v", time.Since(start).Round(time.Millisecond))
		// Now without rank 1: captured in the caller's graph, replayed.
		start = time.Now()
		if err := g.ranks[0].do(t, "rank 0's captured agmm", func() error {
			s, err := cu.MakeStream(cu.NonBlocking)
			if err != nil {
				return err
			}
			defer s.Destroy()
			gr, err := cudamem.CaptureLocal(s, func() error { return enqueue(0, s) })
			if err != nil {
				return err
			}
			defer gr.Destroy()
			if err := gr.Launch(s); err != nil {
				return err
			}
			return s.Synchronize()
		}); err != nil {
			t.Fatalf("rank 0's captured call: %v", err)
		}
	}
	// The call's stream finished: after the bound, not before.
	if d := time.Since(start); d < 5*time.Second {
		t.Errorf("rank 0's call ended %v after it began, within the 5 s bound: the wait did not wait", d)
	} else {
		t.Logf("rank 0's call ended %v after it began", d.Round(time.Millisecond))
	}
	want := cudamem.MakePoison(cudamem.KindFlag, 0, 1)
	for q, got := range g.flags(t) {
		if got != want {
			t.Errorf("rank %d's poison word %#x, want %#x (rank 0's stream waited for rank 1)", q, uint32(got), uint32(want))
		}
	}
	msg := func(seer int) string {
		return fmt.Sprintf("symmtune: group workspace poisoned: rank 0's stream's flag wait for rank 1 timed out after 5s (seen by rank %d's agmm); every later call on this workspace fails; rebuild the group", seer)
	}
	for i := 0; i < 2; i++ {
		err := call(0)
		var pe *cudamem.PoisonedError
		if !errors.As(err, &pe) || err.Error() != msg(0) {
			t.Errorf("rank 0's call %d after the timeout: %v\nwant %s", i+1, err, msg(0))
		}
	}
	// Rank 1 comes late: its first call's wait finds the poison at once.
	start = time.Now()
	if err := call(1); err != nil {
		t.Fatalf("rank 1's first call: %v", err)
	}
	t.Logf("rank 1's first call (opening its runner) took %v", time.Since(start).Round(time.Millisecond))
	for i := 0; i < 2; i++ {
		if err := call(1); err == nil || err.Error() != msg(1) {
			t.Errorf("rank 1's call %d: %v\nwant %s", i+2, err, msg(1))
		}
	}
}

// openAgmmGroup opens agmm of cfgJSON at m x n x k bf16 on both ranks of
// a world-2 group on device 0, with each rank's operands: A's shard [M/2,
// K], B [N, K], C [M, N].
func openAgmmGroup(t *testing.T, m, n, k int, cfgJSON string) (*group, [2]uint64) {
	t.Helper()
	p := gpu.Problem{Dims: gemm.Dims{M: m, N: n, K: k}, World: 2, ElemSize: 2}
	g := newGroup(t, gpu.VariantAGMM.SymmetricBytes(p), int64(m/2*k*2), int64(n*k*2), int64(m*n*2))
	h := g.open(t, func(q int) (uint64, error) {
		req := fmt.Sprintf(`{"kernel":"agmm","m":%d,"n":%d,"k":%d,"world":2,"rank":%d,"dtype":"bf16","device":0,"config":%s}`, m, n, k, q, cfgJSON)
		h, warning, err := GemmOpen([]byte(req), g.regions(), uint64(g.table))
		if warning != "" {
			t.Log(warning)
		}
		return h, err
	})
	return g, h
}

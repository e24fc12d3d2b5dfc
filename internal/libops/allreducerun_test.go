//go:build !cuda

package libops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestAllreduceOpenChecks(t *testing.T) {
	const ok = `{"region_bytes":6000,"world":2,"rank":1,"dtype":"bf16","device":0,"config":{"algorithm":"two_shot_push","threads":128,"blocks":1,"unroll":1}}`
	regions := []uint64{1 << 20, 2 << 20}
	cases := []struct {
		name    string
		req     string
		regions []uint64
		table   uint64
		bad     string // a BadInputError containing this; "" the no-CUDA error
	}{
		{"runs but for CUDA", ok, regions, 4096, ""},
		{"one_shot_lamport", strings.Replace(ok, "two_shot_push", "one_shot_lamport", 1), regions, 4096, ""},
		{"two_shot_lamport", strings.Replace(ok, "two_shot_push", "two_shot_lamport", 1), regions, 4096, ""},
		{"with stages", strings.Replace(ok, `"unroll":1`, `"unroll":1,"stages":2`, 1), regions, 4096, ""},
		{"unknown field", `{"m":1}`, regions, 4096, `unknown field "m"`},
		{"dtype", strings.Replace(ok, "bf16", "i64", 1), regions, 4096, `dtype "i64"`},
		{"region", strings.Replace(ok, `"region_bytes":6000`, `"region_bytes":0`, 1), regions, 4096, "region_bytes 0"},
		{"world", strings.Replace(ok, `"world":2`, `"world":99`, 1), regions, 4096, "world 99"},
		{"rank", strings.Replace(ok, `"rank":1`, `"rank":2`, 1), regions, 4096, "rank 2"},
		{"device", strings.Replace(ok, `"device":0`, `"device":-1`, 1), regions, 4096, "device -1"},
		{"no config", ok[:strings.Index(ok, `,"config"`)] + "}", regions, 4096, "config: missing"},
		{"algorithm", strings.Replace(ok, "two_shot_push", "three_shot", 1), regions, 4096, "algorithm"},
		{"ce_ag", strings.Replace(ok, "two_shot_push", "two_shot_ce_ag", 1), regions, 4096, "does not run it"},
		{"threads", strings.Replace(ok, `"threads":128`, `"threads":0`, 1), regions, 4096, "threads"},
		{"no unroll", strings.Replace(ok, `,"unroll":1`, "", 1), regions, 4096, "unroll"},
		{"blocks", strings.Replace(ok, `"blocks":1`, `"blocks":100000`, 1), regions, 4096, "barrier slots"},
		{"regions", ok, regions[:1], 4096, "1 regions for world 2"},
		{"null region", ok, []uint64{1, 0}, 4096, "region_ptrs[1]: NULL"},
		{"table", ok, regions, 0, "ptr_table: NULL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := AllreduceOpen([]byte(c.req), c.regions, c.table)
			var b *BadInputError
			switch {
			case c.bad == "" && !errors.Is(err, errNoCUDA):
				t.Errorf("err %v, want %v", err, errNoCUDA)
			case c.bad != "" && (!errors.As(err, &b) || !strings.Contains(b.Msg, c.bad)):
				t.Errorf("err %v, want bad input with %q", err, c.bad)
			}
		})
	}
}

func TestAllreduceUnknownHandle(t *testing.T) {
	var b *BadInputError
	if err := AllreduceEnqueue(12345, 0, 1, 10); !errors.As(err, &b) {
		t.Errorf("enqueue: %v", err)
	}
	if err := AllreduceClose(12345); !errors.As(err, &b) {
		t.Errorf("close: %v", err)
	}
}

// TestRunnerKinds: a handle of one kind is refused by the other's enqueue.
func TestRunnerKinds(t *testing.T) {
	useFake(t)
	h := openFakeAR(t)
	var b *BadInputError
	if _, err := GemmEnqueue(h, 0, 64, 1, 2, 3, 0); !errors.As(err, &b) || !strings.Contains(b.Msg, "all-reduce runner") {
		t.Errorf("GEMM enqueue of an all-reduce handle: %v", err)
	}
	g, _ := openFake(t, "bf16")
	if err := AllreduceEnqueue(g, 0, 16, 8); !errors.As(err, &b) || !strings.Contains(b.Msg, "GEMM runner") {
		t.Errorf("all-reduce enqueue of a GEMM handle: %v", err)
	}
}

// TestAllreduceRetireAndCapture: an all-reduce handle retired (its region
// grew) after an eager call on stream 7 closes at once where nothing
// captures stream 7, and where another thread captures it, stays open
// until a reap after that capture: its close waits for its own last call,
// a point no capture may take in.
func TestAllreduceRetireAndCapture(t *testing.T) {
	for _, captured := range []bool{false, true} {
		t.Run(fmt.Sprintf("captured=%v", captured), func(t *testing.T) {
			f := useFake(t)
			h, r := openFakeARFenced(t, f)
			if err := AllreduceEnqueue(h, 7, 16, 8); err != nil {
				t.Fatal(err)
			}
			if captured {
				f.beginCapture(7)
			}
			ans, err := Retire([]uint64{h})
			if err != nil {
				t.Fatal(err)
			}
			if p := poisoned.Load(); p != nil {
				t.Fatalf("the runtime stopped: %s", *p)
			}
			if !captured {
				if len(ans.Closed) != 1 || !r.closed {
					t.Fatalf("retire %+v, closed %v: want it closed now", ans, r.closed)
				}
				return
			}
			if len(ans.Kept) != 1 || r.closed {
				t.Fatalf("retire %+v, closed %v: want it kept while stream 7 is captured", ans, r.closed)
			}
			if got := Reap(); len(got.Closed) != 0 || r.closed {
				t.Fatalf("reap during the capture: %+v, closed %v", got, r.closed)
			}
			f.endCapture(7)
			if got := Reap(); len(got.Closed) != 1 || got.Closed[0] != h || !r.closed {
				t.Fatalf("reap after the capture: %+v, closed %v: want %d closed", got, r.closed, h)
			}
		})
	}
}

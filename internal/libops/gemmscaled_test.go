package libops

import (
	"errors"
	"strings"
	"testing"
)

// fakeGemm records the calls a handle's runner gets, and its closes.
// openFake opens a GEMM op of dtype on a fake device (runtime_test.go):
// its handle, and the device to see what reached its runners.
func openFake(t *testing.T, dtype string) (uint64, *fakeDevice) {
	t.Helper()
	f := useFake(t)
	req := strings.Replace(fakeOpenReq, `"dtype":"bf16"`, `"dtype":"`+dtype+`"`, 1)
	h, _, err := GemmOpen([]byte(req), []uint64{1 << 20, 2 << 20}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return h, f
}

// TestScaledEnqueueGoesToItsDtype: an FP8 runner takes only the scaled
// enqueue and a bf16 or f16 one only the plain one, each refusal one line
// naming the call to make; the runner gets the operands and scales as given.
func TestScaledEnqueueGoesToItsDtype(t *testing.T) {
	cases := []struct {
		dtype     string
		scaled    bool
		a, sa, sb uint64
		bad       string // a BadInputError containing this; "" the runner is called
	}{
		{"e4m3", true, 1, 16, 32, ""},
		{"e4m3_row", true, 1, 16, 32, ""},
		{"bf16", false, 1, 0, 0, ""},
		{"f16", false, 1, 0, 0, ""},
		{"e4m3", false, 1, 0, 0, "dtype e4m3 scales its operands: call symmtune_gemm_enqueue_scaled"},
		{"e4m3_row", false, 1, 0, 0, "dtype e4m3_row scales its operands"},
		{"bf16", true, 1, 16, 32, "dtype bf16 takes no scales: call symmtune_gemm_enqueue "},
		{"f16", true, 1, 16, 32, "dtype f16 takes no scales"},
		{"e4m3", true, 1, 0, 32, "scale_a 0x0, scale_b 0x20; neither may be NULL"},
		{"e4m3_row", true, 1, 16, 0, "neither may be NULL"},
		{"e4m3", true, 0, 16, 32, "none may be NULL"},
	}
	for _, c := range cases {
		h, f := openFake(t, c.dtype)
		var err error
		if c.scaled {
			_, err = GemmEnqueueScaled(h, 7, 64, c.a, 2, 3, 4, c.sa, c.sb)
		} else {
			_, err = GemmEnqueue(h, 7, 64, c.a, 2, 3, 4)
		}
		var b *BadInputError
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s scaled=%v: %v", c.dtype, c.scaled, err)
		case c.bad == "" && (len(f.calls) != 1 || f.calls[0].p != gemmPtrs{c.a, 2, 3, 4, c.sa, c.sb}):
			t.Errorf("%s scaled=%v: runner got %+v", c.dtype, c.scaled, f.calls)
		case c.bad != "" && (!errors.As(err, &b) || !strings.Contains(b.Msg, c.bad) || strings.Contains(b.Msg, "\n")):
			t.Errorf("%s scaled=%v: err %v, want bad input with %q", c.dtype, c.scaled, err, c.bad)
		case c.bad != "" && len(f.calls) != 0:
			t.Errorf("%s scaled=%v: refused, yet the runner got %+v", c.dtype, c.scaled, f.calls)
		}
	}
}

func TestScaledEnqueueRefusesOtherHandles(t *testing.T) {
	var b *BadInputError
	useFake(t)
	if _, err := GemmEnqueueScaled(12345, 0, 64, 1, 2, 3, 0, 4, 5); !errors.As(err, &b) || !strings.Contains(b.Msg, "not open") {
		t.Errorf("unknown handle: %v", err)
	}
	h := openFakeAR(t)
	if _, err := GemmEnqueueScaled(h, 0, 64, 1, 2, 3, 0, 4, 5); !errors.As(err, &b) || !strings.Contains(b.Msg, "all-reduce runner") {
		t.Errorf("all-reduce handle: %v", err)
	}
}

// slowAccum is a typed agmm pipeline config with fast_accum=0.
const slowAccum = `{"kernel":"agmm","impl":"pipeline","chunks":2,"streams":1,"copy":"ce","copy_blocks":4,"direction":"pull","graph":true,"no_fast_accum":true}`

var slowAccumBatch = strings.Replace(slowAccum, `"graph":true`, `"graph":true,"batch":true`, 1)

// TestRulesTakeTheDtype: the validate and default ops apply the request's
// dtype (docs/fp8.md's rules; gemm.choose's layout: TestGemmChooseLayout);
// without one the lax problem of before is kept.
func TestRulesTakeTheDtype(t *testing.T) {
	for _, c := range []struct {
		op, req string
		want    string // a substring of the answer, or of the message when bad
		bad     bool
	}{
		{"gemm.default", `{"kernel":"agmm","problem":{"m":4,"n":16,"k":16,"world":4,"dtype":"e4m3"}}`, `"chunks":1`, false},
		{"gemm.default", `{"kernel":"agmm","problem":{"m":4,"n":8,"k":16,"world":4,"dtype":"e4m3"}}`, "multiples of 16", true},
		{"gemm.default", `{"kernel":"agmm","problem":{"m":4,"n":16,"k":16,"world":4,"dtype":"e5m2"}}`, `dtype "e5m2"`, true},
		// fast_accum=0 is for FP8 products only: Validate sees the dtype.
		{"gemm.validate", `{"config":` + slowAccum + `,"problem":{"m":64,"n":16,"k":16,"world":2,"dtype":"e4m3"}}`, `{}`, false},
		{"gemm.validate", `{"config":` + slowAccum + `,"problem":{"m":64,"n":16,"k":16,"world":2,"dtype":"bf16"}}`, "fast_accum 0 with dtype bf16", true},
		{"gemm.validate", `{"config":` + slowAccumBatch + `,"problem":{"m":64,"n":16,"k":16,"world":2,"dtype":"e4m3_row"}}`, "batch 1 with dtype e4m3_row", true},
	} {
		ans, err := Call(c.op, []byte(c.req))
		var b *BadInputError
		switch {
		case c.bad && (!errors.As(err, &b) || !strings.Contains(b.Msg, c.want)):
			t.Errorf("%s %s: err %v, want bad input with %q", c.op, c.req, err, c.want)
		case !c.bad && (err != nil || !strings.Contains(string(ans), c.want)):
			t.Errorf("%s %s: %s, %v; want %q", c.op, c.req, ans, err, c.want)
		}
	}
}

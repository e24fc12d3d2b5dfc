package libops

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// TestCall: each operation's answer on a good request, and the bad-input
// error (naming what is wrong) on bad ones.
func TestCall(t *testing.T) {
	for _, c := range []struct {
		op, req string
		want    string // a substring of the answer, or of the message when bad
		bad     bool
	}{
		{"constants", "", `"payload_offset":` + itoa(gpu.PayloadOffset), false},
		{"ops", "{}", `"gemm.plan"`, false},
		{"nope", "{}", `unknown operation "nope"`, true},
		{"constants", `{"x":1}`, `unknown field "x"`, true},
		{"constants", `{} {}`, `data after`, true},
		{"constants", `[`, `request:`, true},
		{"gemm.space", `{"kernel":"matmulrs"}`, `"added_later":{"fast_accum":1,"reduce":"kernel"}`, false},
		{"gemm.space", `{"kernel":"gemm"}`, `kernel "gemm"`, true},
		{"gemm.choose", `{"kernel":"agmm","m":6,"n":8,"k":8,"world":4,"dtype":"bf16"}`, "not divisible by world 4", true},
		{"gemm.choose", `{"kernel":"agmm","m":"8"}`, `m: want an integer, got a string`, true},
		{"gemm.parse_config", `{"kernel":"agmm","config":{"chunks":true}}`, `want an integer or a string`, true},
		{"gemm.parse_config", `{"kernel":"agmm","config":{"impl":"pipeline"}}`, `parameter "chunks" missing; `, true},
		{"gemm.default", `{"kernel":"agmm"}`, `"chunks":2`, false},
		{"gemm.default", `{"kernel":"agmm","problem":{"m":1,"n":8,"k":8,"world":1}}`, `"chunks":1`, false},
		{"gemm.default", `{"kernel":"agmm","problem":{"m":8192,"n":3584,"k":8192,"world":2}}`, `"impl":"pipeline"`, false},
		{"gemm.default", `{"kernel":"agmm","problem":{"m":8192,"n":3584,"k":8192,"world":2},"major":9,"minor":0,"sms":132}`, `"impl":"fused:128x256:s4:c2:g8:cl2"`, false},
		{"gemm.default", `{"kernel":"matmulrs","problem":{"m":8192,"n":3584,"k":8192,"world":2},"major":8,"minor":0,"sms":108}`, `"impl":"pipeline"`, false},
		{"gemm.default", `{"kernel":"agmm","problem":{"m":8192,"n":3584,"k":8192,"world":2},"major":9,"link":"PCIe"}`, `"impl":"pipeline"`, false},
		{"gemm.default", `{"kernel":"agmm","major":9}`, "needs a problem", true},
		{"gemm.default", `{"kernel":"agmm","problem":{"m":8,"n":8,"k":8,"world":2},"major":9,"sms":-1}`, "sms -1", true},
		{"gemm.plan", `{"kernel":"agmm","m":8,"world":2,"rank":2,"chunks":1,"streams":1}`, "rank 2 outside 0..1", true},
		{"gemm.plan", `{"kernel":"matmulrs","m":8,"world":2,"rank":1,"chunks":2,"streams":2}`, `"max_products":4`, false},
		{"gemm.plan", `{"kernel":"agmm","m":8,"world":0,"rank":0,"chunks":1,"streams":1}`, "world 0 outside", true},
		{"gemm.step_spans", `{"step":{"owner":1,"index":0,"start":4,"rows":2,"batch":2,"stream":0},"rows":4}`, `"start":8`, false},
		{"gemm.fused_plan", `{"m":8,"world":2,"rank":0,"chunks":1,"rows_per_tile":0}`, "rows_per_tile 0", true},
		{"gemm.rs_table", `{"bounds":[0],"owner":[1],"index":[0],"expect":[1]}`, "rs plan", true},
		{"hopper.tile", `{"name":"128x256"}`, `"name":"128x256:s4:c2:g8"`, false},
		{"hopper.tile", `{"name":"128x25x"}`, `tile "128x25x"`, true},
		{"hopper.tile", `{"tile":{"bm":128,"bn":100,"stages":4,"consumers":2,"group_m":8,"bk_major":true}}`, `"check":"block_n 100`, false},
		{"hopper.tile", `{"name":"128x256","m":300,"n":512}`, `"tiles":6`, false},
		{"hopper.tile", `{"name":"64x128:s6:c2:g8:pp:sk4"}`, `"split_k":4`, false},
		{"hopper.check_shape", `{"n":8,"k":12}`, "k=12", true},
		{"allreduce.default", `{"n":1024,"elt":2,"world":3}`, `"padded":1032`, false},
		{"allreduce.default", `{"n":1024,"elt":3,"world":3}`, "elt 3", true},
		{"allreduce.macros", `{"dtype":"f16","world":2}`, `"-DDTYPE_F16=1"`, false},
		{"kernel_version", `{"kernel":"allreduce"}`, allreduce.KernelVersion(), false},
		{"kernel_version", `{"kernel":"agmm"}`, gpu.VariantAGMM.KernelVersion(), false},
		{"kernel_version", `{"kernel":"x"}`, `kernel "x"`, true},
	} {
		out, err := Call(c.op, []byte(c.req))
		var b *BadInputError
		switch {
		case c.bad && !errors.As(err, &b):
			t.Errorf("%s %s: %s, %v; want bad input", c.op, c.req, out, err)
		case c.bad && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s %s: %q, want %q in it", c.op, c.req, err, c.want)
		case !c.bad && err != nil:
			t.Errorf("%s %s: %v", c.op, c.req, err)
		case !c.bad && !strings.Contains(string(out), c.want):
			t.Errorf("%s %s: %s, want %s in it", c.op, c.req, out, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: message of more than one line: %q", c.op, c.req, err)
		}
	}
}

func itoa(v int) string { b, _ := json.Marshal(v); return string(b) }

// TestConstantsAgree: the constants op answers the packages' values.
func TestConstantsAgree(t *testing.T) {
	out, err := Call("constants", nil)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Gemm struct {
			PartialFlag [][]int `json:"partial_flag"`
			MaxRSChunks int     `json:"max_rs_chunks"`
		}
		Hopper struct {
			Searched []string
		}
	}
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	if c.Gemm.PartialFlag[3][5] != gpu.PartialFlag(3, 5) || c.Gemm.MaxRSChunks != gpu.MaxRSChunks || len(c.Hopper.Searched) != len(hopper.Searched) {
		t.Errorf("constants: %s", out)
	}
}

// FuzzCall: no request makes an operation panic; every error is one line.
func FuzzCall(f *testing.F) {
	for _, s := range []string{`{"kernel":"agmm","m":8,"world":2,"rank":1,"chunks":2,"streams":1,"batch":true}`,
		`{"name":"128x256:cl2"}`, `{"m":64,"n":64,"world":2,"rank":1,"chunks":2,"block_m":64,"block_n":128,"rows_per_tile":64}`,
		`{"config":{"kernel":"matmulrs","impl":"fused","tile":{"bm":64,"bn":128,"stages":4,"consumers":1,"group_m":1,"bk_major":true},"chunks":1,"streams":1},"problem":{"m":64,"n":8,"k":8,"world":2},"rank":1}`,
		`{"n":5,"elt":2,"world":3}`, `{"step":{"batch":3},"rows":2}`} {
		for i := range Names() {
			f.Add(uint8(i), s)
		}
	}
	names := Names()
	f.Fuzz(func(t *testing.T, i uint8, req string) {
		_, err := Call(names[int(i)%len(names)], []byte(req))
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("message of more than one line: %q", err)
		}
	})
}

//go:build !cuda

package libops

import (
	"errors"
	"strings"
	"testing"
)

func TestGemmOpenChecks(t *testing.T) {
	const ok = `{"kernel":"matmulrs","m":4096,"n":1024,"k":1024,"world":2,"rank":1,"dtype":"bf16","device":0,"config":{"algo":0,"batch":0,"chunks":2,"graph":1,"impl":"pipeline","push":"ce","reduce":"kernel","reduce_blocks":132,"sm_reserve":0,"streams":1}}`
	regions := []uint64{1 << 20, 2 << 20}
	cases := []struct {
		name    string
		req     string
		regions []uint64
		table   uint64
		bad     string // a BadInputError containing this; "" the no-CUDA error
	}{
		{"runs but for CUDA", ok, regions, 4096, ""},
		{"unknown field", `{"kernal":"agmm"}`, regions, 4096, `unknown field "kernal"`},
		{"kernel", strings.Replace(ok, "matmulrs", "mm", 1), regions, 4096, `kernel "mm"`},
		{"no dtype", strings.Replace(ok, `"dtype":"bf16",`, "", 1), regions, 4096, "dtype: missing"},
		{"no config", ok[:strings.Index(ok, `,"config"`)] + "}", regions, 4096, "config: missing"},
		{"bad config", strings.Replace(ok, `"chunks":2`, `"chunks":0`, 1), regions, 4096, "chunks"},
		{"rank", strings.Replace(ok, `"rank":1`, `"rank":2`, 1), regions, 4096, "rank 2"},
		{"device", strings.Replace(ok, `"device":0`, `"device":-1`, 1), regions, 4096, "device -1"},
		{"regions", ok, regions[:1], 4096, "1 regions for world 2"},
		{"null region", ok, []uint64{1, 0}, 4096, "region_ptrs[1]: NULL"},
		{"table", ok, regions, 0, "ptr_table: NULL"},
		{"e4m3 runs but for CUDA", strings.Replace(ok, "bf16", "e4m3", 1), regions, 4096, ""},
		{"e4m3_row runs but for CUDA", strings.Replace(ok, "bf16", "e4m3_row", 1), regions, 4096, ""},
		{"e5m2", strings.Replace(ok, "bf16", "e5m2", 1), regions, 4096, `dtype "e5m2"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := GemmOpen([]byte(c.req), c.regions, c.table)
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

func TestGemmUnknownHandle(t *testing.T) {
	var b *BadInputError
	if _, err := GemmEnqueue(12345, 0, 64, 1, 2, 3, 0); !errors.As(err, &b) {
		t.Errorf("enqueue: %v", err)
	}
	if err := GemmClose(12345); !errors.As(err, &b) {
		t.Errorf("close: %v", err)
	}
}

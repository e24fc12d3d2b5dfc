package gpu

import (
	"strings"
	"testing"
)

func TestCheckDevice(t *testing.T) {
	cases := []struct {
		dtype        Dtype
		major, minor int
		wantErr      string
	}{
		{DtypeBF16, 8, 0, ""},
		{DtypeF16, 7, 5, ""},
		{DtypeE4M3, 9, 0, ""},
		{DtypeE4M3Row, 9, 0, ""},
		{DtypeE4M3, 8, 9, ""},
		{DtypeE4M3, 10, 0, ""},
		{DtypeE4M3, 8, 0, "dtype e4m3 needs FP8 tensor cores (compute capability 8.9 or newer: Ada, Hopper); this GPU is 8.0"},
		{DtypeE4M3Row, 8, 6, "this GPU is 8.6"},
		{DtypeE4M3, 7, 9, "this GPU is 7.9"},
	}
	for _, c := range cases {
		err := c.dtype.CheckDevice(c.major, c.minor)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s on %d.%d: %v", c.dtype, c.major, c.minor, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s on %d.%d: error %v, want one containing %q", c.dtype, c.major, c.minor, err, c.wantErr)
		}
	}
}

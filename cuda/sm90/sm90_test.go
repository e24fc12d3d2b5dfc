//go:build cuda

package sm90

import "testing"

// TestL2Promotion: 256-byte promotion where rows start on 32-byte sectors,
// 128-byte where they do not (e4m3 with K = 3696, bf16 with K = 1000).
func TestL2Promotion(t *testing.T) {
	for _, tc := range []struct {
		rowBytes uint64
		want     int
	}{
		{3584, l2Promotion256}, // e4m3, K = 3584
		{7392, l2Promotion256}, // bf16, K = 3696: 32-byte rows
		{3696, l2Promotion128}, // e4m3, K = 3696: every other row 16 bytes off
		{2000, l2Promotion128}, // bf16, K = 1000
		{32, l2Promotion256},
	} {
		if got := l2Promotion(tc.rowBytes); got != tc.want {
			t.Errorf("rows %d bytes apart: promotion %d, want %d", tc.rowBytes, got, tc.want)
		}
	}
}

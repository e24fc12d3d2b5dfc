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

// TestL2PromotionDiag: the diagnostic sets only rows on 32-byte sectors but
// off 128-byte lines; a value it does not know is an error naming it.
func TestL2PromotionDiag(t *testing.T) {
	for _, tc := range []struct {
		rowBytes uint64
		diag     string
		want     int
		wantErr  bool
	}{
		{7392, "", l2Promotion256, false},    // bf16, K = 3696: the rule's
		{7392, "128", l2Promotion128, false}, // off the lines: the diagnostic's
		{7392, "none", l2PromotionNone, false},
		{7392, "64", l2Promotion64, false},
		{14784, "256", l2Promotion256, false},
		{7168, "128", l2Promotion256, false}, // bf16, K = 3584: on the lines, the rule's
		{3696, "256", l2Promotion128, false}, // off the sectors: the rule's
		{7392, "512", 0, true},
		{7392, "128B", 0, true},
		{7168, "bogus", 0, true}, // refused on the lines too, where it sets nothing
	} {
		got, err := l2PromotionFor(tc.rowBytes, tc.diag)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("rows %d bytes apart, %s=%q: promotion %d, err %v; want %d, error %v", tc.rowBytes, l2PromotionEnv, tc.diag, got, err, tc.want, tc.wantErr)
		}
	}
}

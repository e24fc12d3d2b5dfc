package allreduce

import (
	"strings"
	"testing"
)

// TestLamportSizes: slots are whole 256-byte multiples holding the
// message's 16-byte vectors, and an area is the header and 3 x world slots.
func TestLamportSizes(t *testing.T) {
	cases := []struct {
		n          int64
		elt, world int
		slot, area int64
	}{
		{1, 2, 2, 256, 256 + 6*256},
		{8, 2, 2, 256, 256 + 6*256},
		{8192, 2, 2, 16384, 256 + 6*16384},  // [1, 8192] bf16
		{8193, 2, 4, 16640, 256 + 12*16640}, // one element past: one more line
		{3, 4, 8, 256, 256 + 24*256},
		{256 * 8192, 2, 4, 4 << 20, 256 + 12*(4<<20)}, // [256, 8192] bf16, the cap
	}
	for _, c := range cases {
		if got := LamportSlotBytes(c.n, c.elt); got != c.slot {
			t.Errorf("LamportSlotBytes(%d, %d) = %d, want %d", c.n, c.elt, got, c.slot)
		}
		if got := LamportRegionBytes(c.n, c.elt, c.world); got != c.area {
			t.Errorf("LamportRegionBytes(%d, %d, %d) = %d, want %d", c.n, c.elt, c.world, got, c.area)
		}
		// A runner on exactly that region lays out the same slots, and on
		// any larger one slots at least as large.
		if got := lamportSlotOf(c.area, c.world); got != c.slot {
			t.Errorf("lamportSlotOf(%d, %d) = %d, want %d", c.area, c.world, got, c.slot)
		}
		for _, more := range []int64{1, 255, 256, 4096, 1 << 20} {
			if got := lamportSlotOf(c.area+more, c.world); got < c.slot || LamportAreaBytes(got, c.world) > c.area+more {
				t.Errorf("lamportSlotOf(%d, %d) = %d: want >= %d and an area within the region", c.area+more, c.world, got, c.slot)
			}
		}
	}
	for _, small := range []int64{0, 100, 256, 256 + 6*255} {
		if got := lamportSlotOf(small, 2); got != 0 {
			t.Errorf("lamportSlotOf(%d, 2) = %d, want 0 (no room for a slot)", small, got)
		}
	}
}

func TestCheckLamport(t *testing.T) {
	cases := []struct {
		n   int64
		elt int
		ok  bool
	}{
		{1, 2, true},
		{256 * 8192, 2, true},    // 4 MiB bf16
		{256*8192 + 1, 2, false}, // 2 bytes over
		{1 << 20, 4, true},       // 4 MiB f32
		{1<<20 + 1, 4, false},    //
		{512 * 8192, 2, false},   // [512, 8192] bf16
	}
	for _, c := range cases {
		err := checkLamport(c.n, c.elt)
		if (err == nil) != c.ok {
			t.Errorf("checkLamport(%d, %d) = %v, want ok %v", c.n, c.elt, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), OneShotLamport) {
			t.Errorf("checkLamport(%d, %d): %v does not name %s", c.n, c.elt, err, OneShotLamport)
		}
	}
}

// TestSymmetricBytes: the plugin's region holds [input | scratch | output]
// and, where one_shot_lamport takes the message, its area past them,
// 256-byte aligned.
func TestSymmetricBytes(t *testing.T) {
	cases := []struct {
		n          int64
		elt, world int
		want       int64
	}{
		{8192, 2, 2, 3*8192*2 + 256 + 6*16384},
		{8, 2, 4, 256 + 256 + 12*256},                    // npad 32: 192 bytes, the area at 256
		{256 * 8192, 2, 4, 3*(4<<20) + 256 + 12*(4<<20)}, //
		{256*8192 + 32, 2, 4, 3 * (256*8192 + 32) * 2},   // over the cap: no area
	}
	for _, c := range cases {
		npad := Padded(c.n, c.elt, c.world)
		got := symmetricBytes(c.n, npad, c.elt, c.world)
		if got != c.want {
			t.Errorf("symmetricBytes(n=%d, elt=%d, world=%d) = %d, want %d", c.n, c.elt, c.world, got, c.want)
		}
		if off := lamportOffset(npad, c.elt); off%lamportAlign != 0 || off < 3*npad*int64(c.elt) {
			t.Errorf("lamportOffset(%d, %d) = %d: want aligned, past the three regions", npad, c.elt, off)
		}
	}
}

// TestLamportAlgo: one_shot_lamport is ALGO 7, as lamport.cu names it.
func TestLamportAlgo(t *testing.T) {
	if AlgoNumber(OneShotLamport) != 7 || !strings.Contains(Allreduce, "#if ALGO == 7") {
		t.Errorf("one_shot_lamport is ALGO %d", AlgoNumber(OneShotLamport))
	}
	if !strings.Contains(Allreduce, "#define LAMPORT_HDR 256") || lamportHeader != 256 {
		t.Error("LAMPORT_HDR in lamport.cu and lamportHeader differ")
	}
}

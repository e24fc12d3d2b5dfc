package allreduce

import (
	"strings"
	"testing"
)

// TestLamportSizes: slots are whole 256-byte multiples holding the
// message's 16-byte vectors (one_shot_lamport) or one rank's chunk of them
// (two_shot_lamport), and an area is the header and three buffers of
// world slots (one-shot) or 2 x world (two-shot).
func TestLamportSizes(t *testing.T) {
	const one, two = OneShotLamport, TwoShotLamport
	const mib = 1 << 20
	cases := []struct {
		algo       string
		n          int64
		elt, world int
		slot, area int64
	}{
		{one, 1, 2, 2, 256, 256 + 6*256},
		{one, 8, 2, 2, 256, 256 + 6*256},
		{one, 8192, 2, 2, 16384, 256 + 6*16384},  // [1, 8192] bf16
		{one, 8193, 2, 4, 16640, 256 + 12*16640}, // one element past: one more line
		{one, 3, 4, 8, 256, 256 + 24*256},
		{one, 256 * 8192, 2, 4, 4 * mib, 256 + 12*4*mib}, // [256, 8192] bf16, the cap
		{two, 1, 2, 2, 256, 256 + 12*256},
		{two, 8192, 2, 2, 8192, 256 + 12*8192},              // 1024 vectors, chunks of 512
		{two, 16 * 8192, 2, 4, 65536, 256 + 24*65536},       // [16, 8192] bf16, issue 45: 1.5 MiB, 6x
		{two, 64 * 8192, 2, 4, mib / 4, 256 + 24*mib/4},     // [64, 8192] bf16, issue 45: 6 MiB, 6x
		{two, 8193, 2, 4, 4352, 256 + 24*4352},              // 1025 vectors, chunks of 257: 4112 bytes
		{two, 3000, 2, 3, 2048, 256 + 18*2048},              // 375 vectors, chunks of 125: 2000 bytes
		{two, 3, 4, 8, 256, 256 + 48*256},                   // one vector: every chunk but the first zeros
		{two, 8 * mib, 2, 8, 2 * mib, 256 + 48*2*mib},       // 16 MiB bf16, the cap: 96 MiB
		{two, 4 * mib, 4, 2, 8 * mib, 256 + 12*8*mib},       // 16 MiB f32 on 2 ranks: 96 MiB too
		{TwoShotPush, 8192, 2, 2, 0, lamportHeader + 0*256}, // not Lamport: no slot, no buffers
	}
	for _, c := range cases {
		if got := LamportSlotBytes(c.algo, c.n, c.elt, c.world); got != c.slot {
			t.Errorf("LamportSlotBytes(%s, %d, %d, %d) = %d, want %d", c.algo, c.n, c.elt, c.world, got, c.slot)
		}
		if !IsLamport(c.algo) {
			continue
		}
		if got := LamportRegionBytes(c.algo, c.n, c.elt, c.world); got != c.area {
			t.Errorf("LamportRegionBytes(%s, %d, %d, %d) = %d, want %d", c.algo, c.n, c.elt, c.world, got, c.area)
		}
		// A runner on exactly that region lays out the same slots, and on
		// any larger one slots at least as large.
		if got := lamportSlotOf(c.algo, c.area, c.world); got != c.slot {
			t.Errorf("lamportSlotOf(%s, %d, %d) = %d, want %d", c.algo, c.area, c.world, got, c.slot)
		}
		for _, more := range []int64{1, 255, 256, 4096, 1 << 20} {
			if got := lamportSlotOf(c.algo, c.area+more, c.world); got < c.slot || LamportAreaBytes(c.algo, got, c.world) > c.area+more {
				t.Errorf("lamportSlotOf(%s, %d, %d) = %d: want >= %d and an area within the region", c.algo, c.area+more, c.world, got, c.slot)
			}
		}
	}
	for _, small := range []struct {
		algo   string
		region int64
	}{{one, 0}, {one, 100}, {one, 256}, {one, 256 + 6*255}, {two, 256 + 6*256}, {two, 256 + 12*255}, {TwoShotPush, 1 << 20}} {
		if got := lamportSlotOf(small.algo, small.region, 2); got != 0 {
			t.Errorf("lamportSlotOf(%s, %d, 2) = %d, want 0 (no room for a slot)", small.algo, small.region, got)
		}
	}
}

func TestCheckLamport(t *testing.T) {
	cases := []struct {
		algo string
		n    int64
		elt  int
		bad  string // "" ok
	}{
		{OneShotLamport, 1, 2, ""},
		{OneShotLamport, 256 * 8192, 2, ""},                                                        // 4 MiB bf16
		{OneShotLamport, 256*8192 + 1, 2, "takes messages up to 4194304 bytes"},                    // 2 bytes over
		{OneShotLamport, 1 << 20, 4, ""},                                                           // 4 MiB f32
		{OneShotLamport, 1<<20 + 1, 4, "3 x world x the message"},                                  //
		{OneShotLamport, 512 * 8192, 2, "one_shot_lamport takes messages up to"},                   // [512, 8192] bf16
		{TwoShotLamport, 512 * 8192, 2, ""},                                                        // 8 MiB: past one_shot_lamport's cap
		{TwoShotLamport, 1024 * 8192, 2, ""},                                                       // 16 MiB bf16, the cap
		{TwoShotLamport, 1024*8192 + 1, 2, "two_shot_lamport takes messages up to 16777216 bytes"}, //
		{TwoShotLamport, 4 << 20, 4, ""},                                                           // 16 MiB f32
		{TwoShotLamport, 4<<20 + 1, 4, "about 6 x the message"},                                    //
		{TwoShotPush, 8, 2, "not a Lamport algorithm"},
	}
	for _, c := range cases {
		err := checkLamport(c.algo, c.n, c.elt)
		if c.bad == "" && err != nil || c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)) {
			t.Errorf("checkLamport(%s, %d, %d) = %v, want %q", c.algo, c.n, c.elt, err, c.bad)
		}
	}
	for algo, want := range map[string]int64{OneShotLamport: MaxLamportBytes, TwoShotLamport: MaxTwoShotLamportBytes, TwoShotPush: 0, OneShot: 0} {
		if got := LamportMaxBytes(algo); got != want {
			t.Errorf("LamportMaxBytes(%s) = %d, want %d", algo, got, want)
		}
	}
}

// TestSymmetricBytes: the plugin's region holds [input | scratch | output]
// and, where a Lamport algorithm takes the message, the larger of their
// areas past them, 256-byte aligned.
func TestSymmetricBytes(t *testing.T) {
	cases := []struct {
		n          int64
		elt, world int
		want       int64
	}{
		{8192, 2, 2, 3*8192*2 + 256 + 6*16384},           // both areas the same: 12 chunks = 6 messages
		{8, 2, 4, 256 + 256 + 24*256},                    // npad 32: 192 bytes, the area at 256; two_shot_lamport's 24 slots
		{256 * 8192, 2, 4, 3*(4<<20) + 256 + 12*(4<<20)}, // one_shot_lamport's 12 messages
		// Past one_shot_lamport's cap: two_shot_lamport's 24 slots of 65537
		// vectors (1048592 bytes, rounded up), past 3 x npad, rounded up.
		{256*8192 + 32, 2, 4, 12583168 + 256 + 24*1048832},
		{8<<20 + 8, 2, 2, 3 * 8388624 * 2}, // past both caps: no area
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

// TestLamportAlgos: the Lamport algorithms are ALGO 7 and 8, as lamport.cu
// names them, and IsLamport knows them and no other.
func TestLamportAlgos(t *testing.T) {
	for _, c := range []struct {
		name string
		algo int
	}{{OneShotLamport, 7}, {TwoShotLamport, 8}} {
		if AlgoNumber(c.name) != c.algo || !strings.Contains(Allreduce, "#if ALGO == "+string(rune('0'+c.algo))) {
			t.Errorf("%s is ALGO %d, want %d, guarded so in lamport.cu", c.name, AlgoNumber(c.name), c.algo)
		}
	}
	if !strings.Contains(Allreduce, "#define LAMPORT_HDR 256") || lamportHeader != 256 {
		t.Error("LAMPORT_HDR in lamport.cu and lamportHeader differ")
	}
	var lamport []string
	for _, a := range Algorithms {
		if IsLamport(a.Name) {
			lamport = append(lamport, a.Name)
		}
	}
	if strings.Join(lamport, " ") != "one_shot_lamport two_shot_lamport" {
		t.Errorf("IsLamport holds for %v, want one_shot_lamport and two_shot_lamport", lamport)
	}
}

// TestWorkVectors: what blocks share, as Validate and Default count it.
func TestWorkVectors(t *testing.T) {
	for _, c := range []struct {
		algo       string
		n          int64
		elt, world int
		want       int64
	}{
		{TwoShotPush, 8192, 2, 4, 256},     // a rank's share of 1024 vectors
		{OneShot, 8192, 2, 4, 1024},        // all of them
		{TwoShotPush, 8193, 2, 4, 257},     // padded to 1028
		{OneShotLamport, 8193, 2, 4, 1025}, // unpadded
		{TwoShotLamport, 8193, 2, 4, 257},  // chunks of ceil(1025/4)
		{TwoShotLamport, 64 * 8192, 2, 4, 16384},
		{TwoShotLamport, 3, 4, 8, 1},
	} {
		if got := workVectors(c.algo, c.n, c.elt, c.world); got != c.want {
			t.Errorf("workVectors(%s, %d, %d, %d) = %d, want %d", c.algo, c.n, c.elt, c.world, got, c.want)
		}
	}
}

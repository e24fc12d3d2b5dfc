package gpu

import (
	"encoding/binary"
	"reflect"
	"testing"
)

func TestPlanFusedRS(t *testing.T) {
	for _, c := range []struct {
		name                                  string
		m, n, world, rank, chunks, bm, bn, rt int
		order                                 []uint32
		bounds                                []uint32
		expect                                []uint32
	}{
		{
			name: "two ranks: the peer's rows first, own rows last",
			m:    1024, n: 512, world: 2, rank: 0, chunks: 2, bm: 128, bn: 256, rt: 128,
			order:  []uint32{4, 5, 6, 7, 0, 1, 2, 3},
			bounds: []uint32{0, 256, 512, 768, 1024},
			expect: []uint32{4, 4, 4, 4}, // 2 tile rows x 2 tile columns each
		},
		{
			name: "four ranks, rank 2: owners 3, 0, 1, then 2",
			m:    1024, n: 256, world: 4, rank: 2, chunks: 1, bm: 128, bn: 256, rt: 256,
			order:  []uint32{3, 0, 1, 2},
			bounds: []uint32{0, 256, 512, 768, 1024},
			expect: []uint32{2, 2, 2, 2},
		},
		{
			name: "a tile straddling two chunks counts for both",
			m:    1000, n: 100, world: 2, rank: 1, chunks: 2, bm: 128, bn: 64, rt: 128,
			// Rank 1's rows 500..999 (tiles 3..7; tile 3 holds 384..511):
			// owner 0 (tiles 0-3) first, then own.
			order:  []uint32{0, 1, 2, 3, 4, 5, 6, 7},
			bounds: []uint32{0, 250, 500, 750, 1000},
			// 2 tile columns; chunk 0 (0..249): tiles 0, 1; chunk 1
			// (250..499): tiles 1, 2, 3; chunk 2 (500..749): tiles 3-5;
			// chunk 3 (750..999): tiles 5-7.
			expect: []uint32{4, 6, 6, 6},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := PlanFusedRS(c.m, c.n, c.world, c.rank, c.chunks, c.bm, c.bn, c.rt)
			if !reflect.DeepEqual(f.Order, c.order) {
				t.Errorf("order %v, want %v", f.Order, c.order)
			}
			if !reflect.DeepEqual(f.Bounds, c.bounds) {
				t.Errorf("bounds %v, want %v", f.Bounds, c.bounds)
			}
			if !reflect.DeepEqual(f.Expect, c.expect) {
				t.Errorf("expect %v, want %v", f.Expect, c.expect)
			}
		})
	}
}

// The table's bytes are where hopper_comm.cuh's RSTable reads them.
func TestRSTableLayout(t *testing.T) {
	f := PlanFusedRS(1024, 512, 2, 0, 2, 128, 256, 128)
	b, err := f.Table([]uint64{0x1000, 0x2000}, []uint64{0xa0, 0xa1, 0xa2, 0xa3}, RSEpilogue{})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(b) != 1952 || RSTableBytes != 1952 || RSCountOffset != 1092 {
		t.Fatalf("table %d bytes, RSTableBytes %d, count at %d; the kernel's static_asserts say 1952 and 1092", len(b), RSTableBytes, RSCountOffset)
	}
	if le.Uint64(b[8:]) != 0x2000 || le.Uint64(b[64+3*8:]) != 0xa3 {
		t.Error("dst or flag misplaced")
	}
	if le.Uint32(b[576+4*4:]) != 1024 || le.Uint32(b[836:]) != 4 {
		t.Error("bounds or expect misplaced")
	}
	if le.Uint32(b[1348:]) != 4 {
		t.Error("nchunks misplaced")
	}
	for _, x := range b[RSCountOffset : RSCountOffset+RSCountBytes] {
		if x != 0 {
			t.Fatal("counts must start at zero")
		}
	}
	for _, x := range b[rsEpilogueOffset:] {
		if x != 0 {
			t.Fatal("without an RSEpilogue its fields stay zero (off)")
		}
	}
	if _, err := f.Table(make([]uint64, 9), make([]uint64, 4), RSEpilogue{}); err == nil {
		t.Error("nine owners accepted")
	}
}

// The epilogue's fields, at the offsets hopper_comm.cuh's static_asserts
// hold RSTable to: rank 1 of 2 waits for rank 0's flags of its chunks 0
// and 1 (plan chunks 2 and 3), PartialFlag(0, c) in its own region, and
// reads each source's partials from its slots (pushed there), or from
// where Parts says (push=none: the source's memory, remote).
func TestRSTableEpilogue(t *testing.T) {
	f := PlanFusedRS(1024, 512, 2, 1, 2, 128, 256, 128)
	const slot = 512 * 512 * 2
	cases := []struct {
		name       string
		ep         RSEpilogue
		parts      []uint64
		wantRemote uint32
	}{
		{"pushed into the slots", RSEpilogue{Me: 1, World: 2, SlotBytes: slot, Flags: 0x9000}, []uint64{0x200000 - slot, 0x200000}, 0},
		{"read in the sources' memory", RSEpilogue{Me: 1, World: 2, SlotBytes: slot, Flags: 0x9000, Parts: []uint64{0x7000, 0x8000}, Remote: true},
			[]uint64{0x7000, 0x8000}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := f.Table([]uint64{0x100000, 0x200000}, []uint64{0xa0, 0xa1, 0xa2, 0xa3}, tc.ep)
			if err != nil {
				t.Fatal(err)
			}
			le := binary.LittleEndian
			if me, world, on, remote := le.Uint32(b[1352:]), le.Uint32(b[1356:]), le.Uint32(b[1360:]), le.Uint32(b[1364:]); me != 1 || world != 2 || on != 1 || remote != tc.wantRemote {
				t.Errorf("me %d, world %d, epilogue %d, remote %d; want 1, 2, 1, %d", me, world, on, remote, tc.wantRemote)
			}
			if ss := le.Uint64(b[1368:]); ss != MaxChunks*FlagStride {
				t.Errorf("source stride %d", ss)
			}
			want := []uint64{0, 0, 0x9000 + uint64(PartialFlag(0, 0)*FlagStride), 0x9000 + uint64(PartialFlag(0, 1)*FlagStride)}
			for i, w := range want {
				if got := le.Uint64(b[1376+8*i:]); got != w {
					t.Errorf("wait[%d] = %#x, want %#x", i, got, w)
				}
			}
			for src, w := range tc.parts {
				if got := le.Uint64(b[1888+8*src:]); got != w {
					t.Errorf("part[%d] = %#x, want %#x", src, got, w)
				}
			}
			if len(b) != RSTableBytes {
				t.Errorf("%d bytes, want %d", len(b), RSTableBytes)
			}
		})
	}
	if _, err := f.Table([]uint64{0x1000, 0x2000}, []uint64{0xa0, 0xa1, 0xa2, 0xa3}, RSEpilogue{Me: 1, World: 2, Parts: []uint64{1}}); err == nil {
		t.Error("one source's partials accepted for two sources")
	}
}

// LocalSlot: which owners' rows a rank stores in its own GPU's memory, by
// push (and so by TMA: the rest cross NVLink by each warp's stores).
func TestLocalSlot(t *testing.T) {
	for _, tc := range []struct {
		push  string
		local []bool // owners 0..3, rank 1
	}{
		{PushGEMM, []bool{false, true, false, false}},
		{PushCE, []bool{true, true, true, true}},
		{PushNone, []bool{true, true, true, true}},
	} {
		for q, want := range tc.local {
			if got := LocalSlot(tc.push, q, 1); got != want {
				t.Errorf("push=%s, owner %d of rank 1: local %v, want %v", tc.push, q, got, want)
			}
		}
	}
}

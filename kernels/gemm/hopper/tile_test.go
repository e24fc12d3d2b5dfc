package hopper

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/hopper/internal/wgmmagen"
)

// The committed wgmma.cuh must be what the generator writes: NVRTC (from Go
// and from Python) reads the file, so a stale one would silently compile
// old wrappers.
func TestWgmmaHeaderUpToDate(t *testing.T) {
	b, err := os.ReadFile("wgmma.cuh")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != wgmmagen.Header() {
		t.Fatal("wgmma.cuh differs from internal/wgmmagen's output: run go generate ./kernels/gemm/hopper")
	}
	if !strings.HasPrefix(Source, string(b)) || !strings.Contains(Source, "hopper_gemm(") {
		t.Fatal("Source is not wgmma.cuh followed by the kernel")
	}
}

func TestTileCheck(t *testing.T) {
	ok := Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true}
	with := func(f func(*Tile)) Tile { c := ok; f(&c); return c }
	for _, c := range []struct {
		name string
		tile Tile
		want string // "" accepts; else a substring of the reason
	}{
		{"cooperative 128x256", ok, ""},
		{"ping-pong 128x128", with(func(t *Tile) { t.BN, t.Stages, t.PingPong = 128, 6, true }), ""},
		{"one consumer 128x128", with(func(t *Tile) { t.BN, t.Consumers = 128, 1 }), ""},
		{"ping-pong 128x192 uses every register", with(func(t *Tile) { t.BN, t.Stages, t.PingPong = 192, 5, true }), ""},
		{"no wgmma of that width", with(func(t *Tile) { t.BN = 104 }), "wgmma tiles"},
		{"112 columns, seven 16-column blocks", with(func(t *Tile) { t.BN, t.BM, t.PingPong, t.Stages = 112, 64, true, 9 }), ""},
		{"128x224 fits the 1792 and 3584 columns of the benchmark shapes", with(func(t *Tile) { t.BN = 224 }), ""},
		{"224 columns of a B stored [K, N] are not whole 64-column boxes", with(func(t *Tile) { t.BN, t.BKMajor = 224, false }), "64-column boxes"},
		{"three consumers", with(func(t *Tile) { t.Consumers = 3 }), "1 or 2 consumer"},
		{"one stage", with(func(t *Tile) { t.Stages = 1 }), "2 stages"},
		{"five stages of 128x256 overflow shared memory", with(func(t *Tile) { t.Stages = 5 }), "shared memory"},
		{"ping-pong 128x256 has too many accumulators", with(func(t *Tile) { t.PingPong = true; t.Stages = 3 }), "accumulator registers"},
		{"cooperative rows not 64 or 128", with(func(t *Tile) { t.BM = 64 }), "64 or 128 rows"},
		{"ping-pong rows past 128", with(func(t *Tile) { t.BM, t.BN, t.PingPong = 256, 128, true }), "64 or 128 rows"},
		{"group_m zero", with(func(t *Tile) { t.GroupM = 0 }), "group_m"},
		{"cluster of two", with(func(t *Tile) { t.Cluster = 2 }), ""},
		{"cluster of four", with(func(t *Tile) { t.Cluster = 4 }), "pair up"},
		{"cluster with ping-pong", with(func(t *Tile) { t.BN, t.Stages, t.PingPong, t.Cluster = 128, 6, true, 2 }), "cooperative"},
		{"cluster with an MN-major B", with(func(t *Tile) { t.BKMajor, t.Cluster = false, 2 }), "K-major"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.tile.Check(SmemLimit)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("accepted, want a reason with %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("reason %q lacks %q", err, c.want)
			}
		})
	}
}

// SmemBytes must match the kernel's layout: 1 KiB of alignment slack,
// STAGES stages of (BM+BN) x 64 two-byte elements, 2*STAGES+1 mbarriers
// padded to 256 bytes, EpiBuffers x 512 bytes of epilogue staging per
// consumer warp: 4 buffers where they fit in SmemLimit, else 2, else 1.
func TestSmemBytes(t *testing.T) {
	for _, c := range []struct {
		tile Tile
		bufs int
		want int
	}{
		{Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2}, 4, 1024 + 4*384*128 + 256 + 8*512*4},
		{Tile{BM: 128, BN: 128, Stages: 6, Consumers: 2, PingPong: true}, 4, 1024 + 6*256*128 + 256 + 8*512*4},
		{Tile{BM: 64, BN: 224, Stages: 6, Consumers: 2, PingPong: true}, 2, 1024 + 6*288*128 + 256 + 8*512*2},
		{Tile{BM: 128, BN: 224, Stages: 5, Consumers: 2}, 1, 1024 + 5*352*128 + 256 + 8*512},
		// Too large for any buffer count: one, and Check rejects it.
		{Tile{BM: 128, BN: 128, Stages: 8, Consumers: 1}, 1, 1024 + 8*256*128 + 256 + 4*512},
	} {
		if got := c.tile.EpiBuffers(); got != c.bufs {
			t.Errorf("%v: EpiBuffers %d, want %d", c.tile, got, c.bufs)
		}
		if got := c.tile.SmemBytes(); got != c.want {
			t.Errorf("%v: SmemBytes %d, want %d", c.tile, got, c.want)
		}
	}
}

func TestCheckShape(t *testing.T) {
	tile := Tile{BM: 128, BN: 256, Stages: 4, Consumers: 2, GroupM: 8}
	for _, c := range []struct {
		n, k int
		ok   bool
	}{{3584, 8192, true}, {1096, 520, true}, {3584, 8190, false}, {3585, 8192, false}} {
		if err := tile.CheckShape(c.n, c.k); (err == nil) != c.ok {
			t.Errorf("n=%d k=%d: err %v, want ok=%v", c.n, c.k, err, c.ok)
		}
	}
}

func TestTiles(t *testing.T) {
	tile := Tile{BM: 128, BN: 256}
	if got := tile.Tiles(1000, 1096); got != 8*5 {
		t.Fatalf("Tiles(1000, 1096) = %d, want 40", got)
	}
	tile.Cluster = 2
	if got, rows := tile.Tiles(1000, 1096), tile.RowsPerTile(); got != 4*5 || rows != 256 {
		t.Fatalf("cluster 2: Tiles(1000, 1096) = %d, RowsPerTile %d; want 20, 256", got, rows)
	}
}

func TestParseTile(t *testing.T) {
	for _, name := range append([]string{"128x256:s4:c2:g8", "64x256:s5:c2:g8:pp:bn", "128x256:s4:c2:g8:cl2", "64x128:s8:c2:g8:pp:ef", "64x128:s8:c2:g8:pp:sk2:ef"}, Searched...) {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tl.String() != name {
			t.Errorf("ParseTile(%q).String() = %q", name, tl.String())
		}
	}
	if tl, err := ParseTile("128x128:pp"); err != nil || tl != (Tile{BM: 128, BN: 128, Stages: 4, Consumers: 2, GroupM: 8, PingPong: true, BKMajor: true}) {
		t.Errorf("defaults: %+v, %v", tl, err)
	}
	for _, bad := range []string{"", "128", "128x", "x256", "128x256x64", "+128x256", "0128x256", "128x-256", "128x256:q4", "128x256:s", "128x256:sfour"} {
		if _, err := ParseTile(bad); err == nil {
			t.Errorf("ParseTile(%q) accepted", bad)
		}
	}
}

// TestSearchedTilesFit: every tile of searched.json parses, is named as
// String names it (an impl value is one name per tile), appears once and
// fits.
func TestSearchedTilesFit(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range Searched {
		tl, err := ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		if tl.String() != name || seen[name] {
			t.Errorf("searched.json: %q is repeated or not the canonical name %q", name, tl.String())
		}
		seen[name] = true
		if err := tl.Check(SmemLimit); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestMustSearchedRejectsBadFiles(t *testing.T) {
	for _, bad := range []string{``, `{}`, `{"searched": []}`, `{"searched": "128x256"}`} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("mustSearched(%q) did not panic", bad)
				}
			}()
			mustSearched([]byte(bad))
		}()
	}
	if got := mustSearched([]byte(`{"doc": "x", "searched": ["64x128"]}`)); len(got) != 1 || got[0] != "64x128" {
		t.Errorf("mustSearched = %v", got)
	}
}

// TestWithPeerBuffers: the peers' partials of a tile go into shared memory
// only where they fit beside the stages, and then count in SmemBytes and
// the compile options.
func TestWithPeerBuffers(t *testing.T) {
	for _, tc := range []struct {
		tile  string
		peers int
		fits  bool
	}{
		{"128x128:s5:c2:g4:pp", 1, true},
		{"128x128:s5:c2:g8:pp", 1, true},
		{"128x128:s6:c2:g8:pp", 1, false}, // 6 stages leave 30 KiB, a tile's partial is 32
		{"128x128:s5:c2:g4:pp", 3, false}, // a team of four: 96 KiB
		{"128x256:s4:c2:g8", 1, false},
		{"128x128:s5:c2:g4:pp", 0, false},
	} {
		tl, err := ParseTile(tc.tile)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := tl.WithPeerBuffers(tc.peers)
		if ok != tc.fits {
			t.Errorf("%s with %d peers: fits %v, want %v", tc.tile, tc.peers, ok, tc.fits)
			continue
		}
		if !ok {
			if got != tl {
				t.Errorf("%s with %d peers: refused but changed to %+v", tc.tile, tc.peers, got)
			}
			continue
		}
		if want := tl.SmemBytes() + tc.peers*tl.BM*tl.BN*2; got.SmemBytes() != want || got.SmemBytes() > SmemLimit {
			t.Errorf("%s with %d peers: %d bytes of shared memory, want %d (limit %d)", tc.tile, tc.peers, got.SmemBytes(), want, SmemLimit)
		}
		if opts := strings.Join(got.Options(Format{Elem: ElemE4M3}), " "); !strings.Contains(opts, fmt.Sprintf("-DRS_SMEM_PEERS=%d", tc.peers)) {
			t.Errorf("%s with %d peers: options %s lack RS_SMEM_PEERS", tc.tile, tc.peers, opts)
		}
		if got.String() != tl.String() {
			t.Errorf("%s with %d peers: named %s (the buffers are not a config's)", tc.tile, tc.peers, got.String())
		}
	}
}

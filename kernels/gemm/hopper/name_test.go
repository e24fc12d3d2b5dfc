package hopper

import (
	"fmt"
	"slices"
	"testing"
)

// fmtName is Tile.String as it was written with fmt, before the listing
// of whole spaces made it a cost: the reference String must match.
func fmtName(t Tile) string {
	s := fmt.Sprintf("%dx%d:s%d:c%d:g%d", t.BM, t.BN, t.Stages, t.Consumers, t.GroupM)
	if t.PingPong {
		s += ":pp"
	}
	if !t.BKMajor {
		s += ":bn"
	}
	if t.ClusterM() > 1 {
		s += fmt.Sprintf(":cl%d", t.ClusterM())
	}
	if t.KSplits() > 1 {
		s += fmt.Sprintf(":sk%d", t.KSplits())
	}
	if t.StreamK {
		s += ":st"
	}
	if t.EvictFirstB {
		s += ":ef"
	}
	return s
}

// namedTiles are tiles whose names TestTileNames checks: every compiled
// and searched tile, and odd ones (zero, negative, every flag).
func namedTiles(t *testing.T) []Tile {
	tiles := append(AllTiles(), Tile{}, Tile{BM: -64, BN: 128, Stages: -1, Consumers: 0, GroupM: -8, Cluster: -2, SplitK: -3})
	for _, name := range Searched {
		tl, err := parseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		tiles = append(tiles, tl)
	}
	for flags := range 1 << 6 {
		tl := Tile{BM: 1 << 20, BN: 123456789, Stages: 10, Consumers: 3, GroupM: 32}
		tl.PingPong, tl.BKMajor, tl.StreamK, tl.EvictFirstB = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
		if flags&16 != 0 {
			tl.Cluster = 2
		}
		if flags&32 != 0 {
			tl.SplitK = 16
		}
		tiles = append(tiles, tl)
	}
	return tiles
}

// TestTileNames: String writes what fmt wrote, and ParseTile reads a
// searched tile's name (from its table) as the long way does.
func TestTileNames(t *testing.T) {
	for _, tl := range namedTiles(t) {
		if got, want := tl.String(), fmtName(tl); got != want {
			t.Errorf("%+v: String %q, want %q", tl, got, want)
		}
	}
	if len(searchedByName()) != len(Searched) {
		t.Errorf("%d of %d searched names parsed", len(searchedByName()), len(Searched))
	}
	for _, name := range slices.Concat(Searched, []string{"128x256", "64x128:pp:sk4", "bad", "128x256:s4:zz"}) {
		got, gotErr := ParseTile(name)
		want, wantErr := parseTile(name)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("ParseTile(%q) = %+v, %v; the long way %+v, %v", name, got, gotErr, want, wantErr)
		}
	}
}

// TestWithPeerBuffersAsChecked: WithPeerBuffers, which asks about the
// width before Check, says what Check alone would.
func TestWithPeerBuffersAsChecked(t *testing.T) {
	for _, tl := range namedTiles(t) {
		for _, bn := range []int{0, 64, 80, 128, 160, 192, 224, 256} {
			tl.BN = bn
			for peers := -1; peers <= 7; peers++ {
				b := tl
				b.PeerBuffers = peers
				want := peers >= 1 && b.Check(SmemLimit) == nil
				got, ok := tl.WithPeerBuffers(peers)
				if ok != want || (ok && got != b) || (!ok && got != tl) {
					t.Errorf("%s with %d peers: %+v, %v; Check says %v", tl, peers, got, ok, want)
				}
			}
		}
	}
}

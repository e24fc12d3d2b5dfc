package hopper

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// A tile's name (String, ParseTile) is part of every fused config of the
// GPU GEMM plugins' spaces (impl=fused:NAME). The host lists a space by
// asking the plugin about each config, over a million for each plugin, so
// a name is parsed, and a rejected split-K tile's name written, once per
// config: neither goes through fmt.

// String is the tile's name, which ParseTile reads back:
// BMxBN:sSTAGES:cCONSUMERS:gGROUP_M, then ":pp" for ping-pong consumers,
// ":bn" for B stored [K, N], ":cl2" for clusters of two CTAs, ":skS"
// for split-K in S slices, ":st" for stream-K and ":ef" for B loaded
// evict-first.
func (t Tile) String() string {
	b := make([]byte, 0, 48)
	b = strconv.AppendInt(b, int64(t.BM), 10)
	b = append(b, 'x')
	b = strconv.AppendInt(b, int64(t.BN), 10)
	b = append(b, ":s"...)
	b = strconv.AppendInt(b, int64(t.Stages), 10)
	b = append(b, ":c"...)
	b = strconv.AppendInt(b, int64(t.Consumers), 10)
	b = append(b, ":g"...)
	b = strconv.AppendInt(b, int64(t.GroupM), 10)
	if t.PingPong {
		b = append(b, ":pp"...)
	}
	if !t.BKMajor {
		b = append(b, ":bn"...)
	}
	if t.ClusterM() > 1 {
		b = append(b, ":cl"...)
		b = strconv.AppendInt(b, int64(t.ClusterM()), 10)
	}
	if t.KSplits() > 1 {
		b = append(b, ":sk"...)
		b = strconv.AppendInt(b, int64(t.KSplits()), 10)
	}
	if t.StreamK {
		b = append(b, ":st"...)
	}
	if t.EvictFirstB {
		b = append(b, ":ef"...)
	}
	return string(b)
}

// ParseTile reads a tile name (see String); parts after BMxBN may be left
// out: 4 stages, 2 consumers, group_m 8, cooperative, B K-major, no
// cluster, no split-K, no stream-K, B loaded as any operand.
func ParseTile(name string) (Tile, error) {
	if t, ok := searchedByName()[name]; ok {
		return t, nil
	}
	return parseTile(name)
}

// searchedByName are the Searched tiles by name, parsed once: a fused
// config's name is one of them, and parsing it (strings.Split and
// strconv) was a fifth of a GPU GEMM plugin's listing. Read-only once
// built; a name that does not parse is left out (parseTile says why).
var searchedByName = sync.OnceValue(func() map[string]Tile {
	out := make(map[string]Tile, len(Searched))
	for _, name := range Searched {
		if t, err := parseTile(name); err == nil {
			out[name] = t
		}
	}
	return out
})

// TileSyntax is what a tile name looks like, for ParseTile's errors and
// the tools' help.
const TileSyntax = "BMxBN[:sS][:cC][:gG][:pp][:bn][:clN][:skS][:st][:ef]"

// parseTile is ParseTile, the long way.
func parseTile(name string) (Tile, error) {
	// A search parses every config of its space (over a million): no
	// fmt scanning here, which was a third of a world-1 matmulrs search's
	// validation (12 s on 1 x H200's host).
	parts := strings.Split(name, ":")
	t := Tile{Stages: 4, Consumers: 2, GroupM: 8, BKMajor: true}
	if !parseDims(parts[0], &t.BM, &t.BN) {
		return Tile{}, fmt.Errorf("tile %q: want %s", name, TileSyntax)
	}
	for _, p := range parts[1:] {
		var err error
		switch {
		case p == "pp":
			t.PingPong = true
		case p == "bn":
			t.BKMajor = false
		case p == "st":
			t.StreamK = true
		case p == "ef":
			t.EvictFirstB = true
		case strings.HasPrefix(p, "cl"):
			t.Cluster, err = strconv.Atoi(p[2:])
		case strings.HasPrefix(p, "sk"):
			t.SplitK, err = strconv.Atoi(p[2:])
		case len(p) > 1 && p[0] == 's':
			t.Stages, err = strconv.Atoi(p[1:])
		case len(p) > 1 && p[0] == 'c':
			t.Consumers, err = strconv.Atoi(p[1:])
		case len(p) > 1 && p[0] == 'g':
			t.GroupM, err = strconv.Atoi(p[1:])
		default:
			err = fmt.Errorf("unknown part")
		}
		if err != nil {
			return Tile{}, fmt.Errorf("tile %q, part %q: want %s", name, p, TileSyntax)
		}
	}
	return t, nil
}

// parseDims reads "BMxBN", two positive numbers in canonical decimal
// (what String writes: no sign, no leading zero), into bm and bn.
func parseDims(s string, bm, bn *int) bool {
	l, r, ok := strings.Cut(s, "x")
	if !ok {
		return false
	}
	var err error
	if *bm, err = strconv.Atoi(l); err != nil || *bm <= 0 || strconv.Itoa(*bm) != l {
		return false
	}
	if *bn, err = strconv.Atoi(r); err != nil || *bn <= 0 || strconv.Itoa(*bn) != r {
		return false
	}
	return true
}

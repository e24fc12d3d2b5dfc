package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// -tiles' lists; no build tag, so CI tests them without CUDA.

// sweep is the default list: the leaders of the first sweep on an H200
// (bench/results/2026-11-22-h200-gemmalone-sweep1.csv) without and with
// clusters of two CTAs, and the other tile shapes with clusters.
func sweep() []hopper.Tile {
	var out []hopper.Tile
	for _, name := range []string{
		"128x256:s4:c2:g8", "128x128:s6:c2:g4:pp", "256x128:s4:c2:g8",
		"128x256:s4:c2:g8:cl2", "128x256:s4:c2:g4:cl2", "128x256:s4:c2:g16:cl2", "128x256:s3:c2:g8:cl2",
		"256x128:s4:c2:g8:cl2", "128x192:s5:c2:g8:cl2", "128x128:s6:c2:g8:cl2",
	} {
		t, err := hopper.ParseTile(name)
		if err != nil {
			panic(err)
		}
		out = append(out, t)
	}
	return out
}

// smallM are issue 56's candidates at 64-1,024 rows, beside the default
// (128x256:s4:c2:g8:cl2, whose cluster pairs 256 rows): the same tile
// without the cluster; 128x224:s5:c2:g4, the two-rank small-rows default
// (defaults.go's agmmTwoRankSmall) and the leader at 4096 x 1792 x 4096;
// the ping-pong 128x128 tile; the searched 64-row ping-pong tiles (224 and
// 256 wide); and the 128-wide and 64-wide 64-row ones with as many stages
// as fit (searched since 2026-12-03), the former also with one
// cooperative consumer (bench/results/2026-12-03-h200-smallm-stages.md).
const smallM = "128x256:s4:c2:g8,128x224:s5:c2:g4,128x128:s6:c2:g4:pp,64x256:s5:c2:g8:pp,64x224:s6:c2:g8:pp,64x128:s8:c2:g8:pp,64x128:s8:c1:g8,64x64:s10:c2:g8:pp"

// splitK are the split-K tiles (hopper.Tile.SplitK; issue 56): the 64x128
// ping-pong tile with 8 stages in 2, 4 and 8 slices, whose unsplit form was
// the best at 64-256 rows (bench/results/2026-12-02-h200-gemmalone-smallm.md),
// 64x64 in 2 and 4, and the searched 64x256 and 128x256 in 2. Each runs only on
// shapes where splitKSkip lets it.
const splitK = "64x128:s8:c2:g8:pp:sk2,64x128:s8:c2:g8:pp:sk4,64x128:s8:c2:g8:pp:sk8,64x64:s10:c2:g8:pp:sk2,64x64:s10:c2:g8:pp:sk4,64x256:s5:c2:g8:pp:sk2,128x256:s4:c2:g8:sk2"

// splitKSkip says why split-K tile t is not timed on sh (on sms SMs), or
// "" where it is (always, for other tiles): where the plugins' Validate
// refuses it (more than gpu.SplitKMaxRows rows, less than gpu.SplitKMinK
// of K a slice), where its tiles alone already fill the SMs, and where its
// units take as many waves as it has slices: then each SM multiplies no
// fewer k-blocks than unsplit, plus the partials.
func splitKSkip(t hopper.Tile, sh shape, sms int) string {
	s := t.KSplits()
	if s < 2 {
		return ""
	}
	tiles := t.Tiles(sh.m, sh.n)
	switch {
	case sh.m > gpu.SplitKMaxRows:
		return fmt.Sprintf("m=%d above split-K's %d rows", sh.m, gpu.SplitKMaxRows)
	case sh.k/s < gpu.SplitKMinK:
		return fmt.Sprintf("k=%d leaves under %d a slice", sh.k, gpu.SplitKMinK)
	case tiles >= sms:
		return fmt.Sprintf("its %d tiles fill the %d SMs", tiles, sms)
	case (tiles*s+sms-1)/sms >= s:
		return fmt.Sprintf("its %d units take %d waves", tiles*s, (tiles*s+sms-1)/sms)
	}
	return ""
}

// defaultTile stands in -tiles' list for each shape's untuned tile
// (untunedTile): tilesFor replaces it.
var defaultTile = hopper.Tile{}

// untunedTile is sh's untuned tile in dtype on GPU d, which -tiles
// default times: gpu.DefaultTileFor of a plain product (agmm on one
// rank), so split in K where that runs and is estimated faster.
func untunedTile(sh shape, dtype string, d gpu.Device) (hopper.Tile, error) {
	dt, err := gpu.ParseDtype(dtype)
	if err != nil {
		return hopper.Tile{}, err
	}
	p := gpu.Problem{Dims: gemm.Dims{M: sh.m, N: sh.n, K: sh.k}, World: 1, Dtype: dt, ElemSize: dt.InBytes()}
	return gpu.DefaultTileFor(gpu.VariantAGMM, p, d), nil
}

// parseTiles reads -tiles: tile names, "default", and the named lists
// "sweep", "smallm" and "splitk", in the order given.
func parseTiles(s string) ([]hopper.Tile, error) {
	var out []hopper.Tile
	for _, f := range strings.Split(s, ",") {
		switch f {
		case "default":
			out = append(out, defaultTile)
			continue
		case "sweep":
			out = append(out, sweep()...)
			continue
		case "smallm", "splitk":
			list := smallM
			if f == "splitk" {
				list = splitK
			}
			ts, err := parseTiles(list)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
			continue
		}
		t, err := hopper.ParseTile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// tilesFor is tiles with "default" replaced by def, the shape's untuned
// tile. With "default" in the list def runs once, where it first appears
// (as "default" or by name); without, the list is as given.
func tilesFor(tiles []hopper.Tile, def hopper.Tile) []hopper.Tile {
	if !slices.Contains(tiles, defaultTile) {
		return tiles
	}
	var out []hopper.Tile
	seen := false
	for _, t := range tiles {
		if t == defaultTile {
			t = def
		}
		if t == def {
			if seen {
				continue
			}
			seen = true
		}
		out = append(out, t)
	}
	return out
}

// parseDevice reads -defaults-on: "NAME:SMS", a GPU's name as the driver
// gives it and its SM count (the name may hold colons; the count follows
// the last). The untuned rule's factors are per card by name
// (gpu.Device.Name), so a plan can list the picks of a card it does not
// have. Capability 9.0: the rule is sm_90's.
func parseDevice(s string) (gpu.Device, error) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return gpu.Device{}, fmt.Errorf("-defaults-on %q: want NAME:SMS, e.g. \"NVIDIA H100 80GB HBM3:132\"", s)
	}
	name := strings.TrimSpace(s[:i])
	sms, err := strconv.Atoi(strings.TrimSpace(s[i+1:]))
	if err != nil || name == "" || sms <= 0 {
		return gpu.Device{}, fmt.Errorf("-defaults-on %q: want NAME:SMS with a name and a positive SM count", s)
	}
	return gpu.Device{Major: 9, Minor: 0, SMs: sms, Name: name}, nil
}

// untunedLines is -list -defaults-on's output: "MxNxK TILE" a shape, the
// tile -tiles default would time for dtype on d.
func untunedLines(shs []shape, dtype string, d gpu.Device) ([]string, error) {
	var out []string
	for _, sh := range shs {
		t, err := untunedTile(sh, dtype, d)
		if err != nil {
			return nil, fmt.Errorf("-dtype: %w", err)
		}
		out = append(out, sh.String()+" "+t.String())
	}
	return out, nil
}

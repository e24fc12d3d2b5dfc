package sdk

import (
	"testing"

	"github.com/symmtune/symmtune/internal/golden"
)

// goldenValues is what testdata/golden.json holds: values of Uniform and
// SourceHash that the Python SDK (python/symmtune/plugin/reference.py) must
// reproduce bit for bit.
type goldenValues struct {
	Uniform []struct {
		Seed  uint64  `json:"seed"`
		Rank  int     `json:"rank"`
		I     int64   `json:"i"`
		Value float64 `json:"value"`
	} `json:"uniform"`
	SourceHash []struct {
		Sources []string `json:"sources"`
		Hash    string   `json:"hash"`
	} `json:"source_hash"`
}

func TestGoldenValues(t *testing.T) {
	var g goldenValues
	for _, seed := range []uint64{0, 1, 42, 0x5eed, 1 << 63, ^uint64(0)} {
		for _, rank := range []int{0, 1, 7} {
			for _, i := range []int64{0, 1, 1023, 1 << 40} {
				g.Uniform = append(g.Uniform, struct {
					Seed  uint64  `json:"seed"`
					Rank  int     `json:"rank"`
					I     int64   `json:"i"`
					Value float64 `json:"value"`
				}{seed, rank, i, Uniform(seed, rank, i)})
			}
		}
	}
	for _, srcs := range [][]string{{}, {""}, {"a"}, {"a", "b"}, {"ab"}, {"kernel source\n", "another file"}} {
		bs := make([][]byte, len(srcs))
		for i, s := range srcs {
			bs[i] = []byte(s)
		}
		g.SourceHash = append(g.SourceHash, struct {
			Sources []string `json:"sources"`
			Hash    string   `json:"hash"`
		}{srcs, SourceHash(bs...)})
	}
	golden.JSON(t, "testdata/golden.json", g)
}

package cache

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/symmtune/symmtune/space"
)

// The fast record writer writes exactly what the TOML encoder writes, or
// declines; random entries cover floats of every size, zones, empty and
// full fingerprints and strings that need escapes.
func TestFastEncodeMatchesEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "allreduce", "a b", "ünï ✓", `quo"te`, "tab\there", "back\\slash", "x\x7f", "[[entry]]", "# crc32c=0"}
	pick := func() string { return strs[r.IntN(len(strs))] }
	floats := []float64{0, 1, 95, 812.4, 1e-7, 1.5e20, 1e21, 123456789012345678, math.SmallestNonzeroFloat64, 0.1 + 0.2}
	declined := 0
	for i := range 3000 {
		e := entry(int64(1+r.IntN(1<<20)), func(e *Entry) {
			e.Kernel, e.KernelVersion, e.Backend, e.Dtype = pick(), pick(), pick(), pick()
			if e.Kernel == "" {
				e.Kernel = "k"
			}
			e.MedianUS, e.MinUS = floats[r.IntN(len(floats))], r.Float64()*1e4
			e.P90US, e.DefaultMedianUS = float64(r.IntN(1000)), floats[r.IntN(len(floats))]
			e.Trials, e.World = r.IntN(1000), 1+r.IntN(64)
			e.TunedAt = time.Unix(int64(r.IntN(2e9)), int64(r.IntN(3))*int64(r.IntN(1e9))).In(time.FixedZone("z", 3600*(r.IntN(5)-2)))
			e.Config = space.Config{"a": space.Int(int64(r.IntN(9)) - 4), pick() + "k": space.Str(pick())}
			if r.IntN(3) == 0 {
				e.HardwareInfo = gpuHW()
				e.HardwareInfo.Name = pick()
			} else if r.IntN(2) == 0 {
				e.HardwareInfo = Entry{}.HardwareInfo
			}
		})
		var want bytes.Buffer
		enc := toml.NewEncoder(&want)
		enc.Indent = ""
		if err := enc.Encode(recordDoc{Entry: []outEntry{toOut(e)}}); err != nil {
			continue // the encoder refuses it too
		}
		var got bytes.Buffer
		got.WriteString("x")
		if !appendRecord(&got, &e) {
			declined++
			if got.String() != "x" {
				t.Fatalf("entry %d: declined but wrote %q", i, got.String())
			}
			continue
		}
		if w := string(bytes.TrimLeft(want.Bytes(), "\n")); got.String()[1:] != w {
			t.Fatalf("entry %d:\nfast:\n%s\nencoder:\n%s", i, got.String()[1:], w)
		}
	}
	if declined == 0 || declined == 3000 {
		t.Errorf("%d of 3000 declined: the test does not cover both paths", declined)
	}
}

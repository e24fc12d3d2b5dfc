package space

import (
	"strings"
	"testing"
)

// fuzzDims are the dimension lists ParseShape is fuzzed against: none
// (any names), one, and the GEMM kernels' three.
var fuzzDims = [][]string{nil, {"n"}, {"m", "n", "k"}}

// FuzzParseShape: ParseShape never panics; what it accepts has only sizes
// in [1, MaxDim], exactly the kernel's dimensions when given, and survives
// Format and ParseShape unchanged; what it refuses gets a one-line error
// (the CLI prints errors as a single line).
func FuzzParseShape(f *testing.F) {
	for _, s := range []string{
		"n=1048576", "m=512,n=256,k=256", " n = 4 ", "n=0", "n=-1", "n=+5", "n=0x10", "n=1_000",
		"n=1099511627776", "n=1099511627777", "n=99999999999999999999", "n=4,n=4", "n", "=4", "n=",
		",", "n=4,", "m=1,n=2", "k=1,m=2,n=3", "n=4\n", "n=\u00a04", "n=٣",
	} {
		for i := range fuzzDims {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		dims := fuzzDims[int(which)%len(fuzzDims)]
		sh, err := ParseShape(text, dims)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseShape(%q): multi-line error %q", text, err)
			}
			if sh != nil {
				t.Fatalf("ParseShape(%q): error %v with a shape %v", text, err, sh)
			}
			return
		}
		if len(sh) == 0 {
			t.Fatalf("ParseShape(%q) accepted an empty shape", text)
		}
		for d, v := range sh {
			if v < 1 || v > MaxDim {
				t.Fatalf("ParseShape(%q): %s=%d outside [1, %d]", text, d, v, MaxDim)
			}
		}
		if len(dims) > 0 {
			if len(sh) != len(dims) {
				t.Fatalf("ParseShape(%q, %v) = %v: wrong dimensions", text, dims, sh)
			}
			for _, d := range dims {
				if _, ok := sh[d]; !ok {
					t.Fatalf("ParseShape(%q, %v) = %v: %s missing", text, dims, sh, d)
				}
			}
		}
		again, err := ParseShape(sh.Format(dims...), dims)
		if err != nil || !again.Equal(sh) {
			t.Fatalf("ParseShape(%q) = %v, but its Format %q reads back as %v, %v", text, sh, sh.Format(dims...), again, err)
		}
	})
}

// fuzzSpace mixes string and integer parameters, negative values included.
var fuzzSpace = Space{Params: []Param{
	{Name: "algorithm", Values: []Value{Str("one_shot"), Str("two_shot")}},
	{Name: "chunk", Values: []Value{Int(1024), Int(4096), Int(-1)}},
	{Name: "threads", Values: []Value{Int(1), Int(2), Int(4)}},
}}

var fuzzDefault = Config{"algorithm": Str("one_shot"), "chunk": Int(4096), "threads": Int(1)}

// FuzzParseConfig: ParseConfig never panics; what it accepts is a complete
// config of the space whose canonical String reads back unchanged; what it
// refuses gets a one-line error.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"", "algorithm=two_shot", "algorithm=two_shot,chunk=1024,threads=4", "chunk=-1", "chunk=+1024",
		"chunk=1024,chunk=4096", "threads=3", "nosuch=1", "algorithm", "=1", "algorithm=", ",,", " threads = 2 ",
		"algorithm=one_shot\n", "chunk=01024", "threads=2,",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, withBase bool) {
		var base Config
		if withBase {
			base = fuzzDefault
		}
		c, err := ParseConfig(text, fuzzSpace, base)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseConfig(%q): multi-line error %q", text, err)
			}
			return
		}
		if err := fuzzSpace.Check(c); err != nil {
			t.Fatalf("ParseConfig(%q) = %v, which the space refuses: %v", text, c, err)
		}
		if withBase && fuzzDefault["chunk"] != Int(4096) {
			t.Fatalf("ParseConfig(%q) changed its base config", text)
		}
		again, err := ParseConfig(c.String(), fuzzSpace, nil)
		if err != nil || again.String() != c.String() {
			t.Fatalf("ParseConfig(%q) = %v, but %q reads back as %v, %v", text, c, c.String(), again, err)
		}
	})
}

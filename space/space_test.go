package space

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

var testSpace = Space{Params: []Param{
	{Name: "algorithm", Values: []Value{Str("one_shot"), Str("two_shot")}},
	{Name: "chunk", Values: []Value{Int(1024), Int(4096)}},
	{Name: "threads", Values: []Value{Int(1), Int(2), Int(4)}},
}}

func TestEnumerateAtIndicesRoundTrip(t *testing.T) {
	all := testSpace.Enumerate()
	if len(all) != 12 || testSpace.Size() != 12 {
		t.Fatalf("enumerated %d configs, size %d; want 12", len(all), testSpace.Size())
	}
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.String()] {
			t.Errorf("duplicate %s", c)
		}
		seen[c.String()] = true
		idx, err := testSpace.Indices(c)
		if err != nil {
			t.Fatal(err)
		}
		if back := testSpace.At(idx); back.String() != c.String() {
			t.Errorf("At(Indices(%s)) = %s", c, back)
		}
	}
	if all[0].String() != "algorithm=one_shot,chunk=1024,threads=1" || all[1].String() != "algorithm=one_shot,chunk=1024,threads=2" {
		t.Errorf("order: %s, %s (last parameter should vary fastest)", all[0], all[1])
	}
}

// TestEachStops: Each gives Enumerate's configs in its order, and stops at
// the first false.
func TestEachStops(t *testing.T) {
	var got []string
	testSpace.Each(func(c Config) bool {
		got = append(got, c.String())
		return len(got) < 5
	})
	all := testSpace.Enumerate()
	if len(got) != 5 {
		t.Fatalf("Each went on after false: %d configs", len(got))
	}
	for i, c := range got {
		if c != all[i].String() {
			t.Errorf("config %d: %s, Enumerate's %s", i, c, all[i])
		}
	}
}

func TestParseConfig(t *testing.T) {
	base := Config{"algorithm": Str("one_shot"), "chunk": Int(1024), "threads": Int(1)}
	tests := []struct {
		in      string
		base    Config
		want    string
		wantErr string
	}{
		{"algorithm=two_shot,chunk=4096,threads=2", nil, "algorithm=two_shot,chunk=4096,threads=2", ""},
		{" threads=4 ", base, "algorithm=one_shot,chunk=1024,threads=4", ""},
		{"", base, "algorithm=one_shot,chunk=1024,threads=1", ""},
		{"threads=4", nil, "", `parameter "algorithm" missing`},
		{"threads=3", base, "", "not in [1 2 4]"},
		{"warps=4", base, "", `unknown parameter "warps"`},
		{"threads", base, "", "not name=value"},
		{"chunk=1e3", base, "", "not in"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			c, err := ParseConfig(tc.in, testSpace, tc.base)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", c, err, tc.want)
			}
		})
	}
}

func TestParseShape(t *testing.T) {
	tests := []struct {
		in      string
		dims    []string
		want    string
		wantErr string
	}{
		{"n=1048576", []string{"n"}, "n=1048576", ""},
		{"m=512, n=256,k=256", []string{"m", "n", "k"}, "k=256,m=512,n=256", ""},
		{"n=0", nil, "", "must be positive"},
		{"n=-4", nil, "", "must be positive"},
		{"n=99999999999999999999", nil, "", "fits in 64 bits"},
		{"n=2199023255553", nil, "", "exceeds the limit"},
		{"n=4,n=8", nil, "", "given twice"},
		{"m=4", []string{"m", "n"}, "", `missing dimension "n"`},
		{"m=4,n=4,q=1", []string{"m", "n"}, "", `unknown dimension "q"`},
		{"n=4x", nil, "", "not an integer"},
		{"", nil, "", "empty shape"},
		{"=4", nil, "", "not dim=size"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			sh, err := ParseShape(tc.in, tc.dims)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || sh.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", sh, err, tc.want)
			}
			back, err := ParseShape(sh.Format(tc.dims...), tc.dims)
			if err != nil || !back.Equal(sh) {
				t.Errorf("Format/Parse round trip: %v, %v", back, err)
			}
		})
	}
	if got := (Shape{"m": 1, "n": 2, "k": 3}).Format("m", "n", "k"); got != "m=1,n=2,k=3" {
		t.Errorf("Format in dims order: %s", got)
	}
}

func TestValueJSONAndAny(t *testing.T) {
	c := Config{"algorithm": Str("two_shot"), "chunk": Int(4096)}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"algorithm":"two_shot","chunk":4096}` {
		t.Errorf("json %s", b)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || back.String() != c.String() {
		t.Errorf("json round trip: %v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"chunk":4096.5}`), &back); err == nil {
		t.Error("a fractional number must not decode as a config value")
	}
	fromAny, err := ConfigFromAny(c.Any())
	if err != nil || fromAny.String() != c.String() {
		t.Errorf("Any round trip: %v %v", fromAny, err)
	}
	if _, err := ConfigFromAny(map[string]any{"x": true}); err == nil {
		t.Error("a bool must not be a config value")
	}
}

func TestCheck(t *testing.T) {
	good := Config{"algorithm": Str("one_shot"), "chunk": Int(1024), "threads": Int(1)}
	if err := testSpace.Check(good); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"missing":  {"algorithm": Str("one_shot"), "chunk": Int(1024)},
		"extra":    {"algorithm": Str("one_shot"), "chunk": Int(1024), "threads": Int(1), "x": Int(1)},
		"bad kind": {"algorithm": Int(1), "chunk": Int(1024), "threads": Int(1)},
	} {
		if err := testSpace.Check(c); err == nil {
			t.Errorf("%s: Check accepted %s", name, c)
		}
	}
}

// TestConfigKey: configs with the same values have the same key and are
// Equal however they were built; any other value, or another set of
// parameters, makes another key.
func TestConfigKey(t *testing.T) {
	base := Config{"algo": Str("ring"), "chunk": Int(4096)}
	for _, tc := range []struct {
		name string
		c    Config
		want bool
	}{
		{"same", Config{"chunk": Int(4096), "algo": Str("ring")}, true},
		{"clone", base.Clone(), true},
		{"value", Config{"algo": Str("ring"), "chunk": Int(1024)}, false},
		{"missing", Config{"algo": Str("ring")}, false},
		{"extra", Config{"algo": Str("ring"), "chunk": Int(4096), "threads": Int(1)}, false},
		{"empty", Config{}, false},
		{"a number as its text", Config{"algo": Str("ring"), "chunk": Str("4096")}, true},
		{"a number's text differs", Config{"algo": Str("ring"), "chunk": Str("04096")}, false},
		{"other parameter, same count", Config{"algo": Str("ring"), "chunks": Int(4096)}, false},
	} {
		if got := base.Key() == tc.c.Key(); got != tc.want {
			t.Errorf("%s: key equality %v, want %v", tc.name, got, tc.want)
		}
		if got := base.Equal(tc.c); got != tc.want {
			t.Errorf("%s: Equal %v, want %v", tc.name, got, tc.want)
		}
	}
	seen := map[ConfigKey]int{base.Key(): 1}
	seen[base.Clone().Key()]++
	if len(seen) != 1 || seen[base.Key()] != 2 {
		t.Errorf("map keyed by ConfigKey: %v", seen)
	}
}

// TestCheckSize: a space is refused once its product passes MaxConfigs,
// also where the product overflows an int, and never below it.
func TestCheckSize(t *testing.T) {
	twos := func(n int) Space {
		var s Space
		for i := range n {
			s.Params = append(s.Params, Param{Name: "x" + strconv.Itoa(i), Values: []Value{Int(0), Int(1)}})
		}
		return s
	}
	ints := func(n int) []Value {
		v := make([]Value, n)
		for i := range v {
			v[i] = Int(int64(i))
		}
		return v
	}
	for _, tc := range []struct {
		name string
		s    Space
		ok   bool
	}{
		{"empty", Space{}, true},
		{"exactly the bound", twos(22), true},
		{"twice the bound", twos(23), false},
		{"2^40", twos(40), false},
		{"2^63 overflows an int", twos(63), false},
		{"2^64 wraps to zero", twos(64), false},
		{"one long parameter", Space{Params: []Param{{Name: "a", Values: ints(MaxConfigs + 1)}}}, false},
		{"a parameter of no values: none at all", Space{Params: append([]Param{{Name: "none"}}, twos(63).Params...)}, true},
		{"within, three parameters", Space{Params: []Param{{Name: "a", Values: ints(100)}, {Name: "b", Values: ints(100)}, {Name: "c", Values: ints(100)}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.CheckSize()
			if (err == nil) != tc.ok {
				t.Fatalf("CheckSize() = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "more than 4194304 configs") {
				t.Errorf("error %q does not name the bound", err)
			}
		})
	}
}

// TestCheckText: names and string values that config text cannot carry
// are refused, the kernels' own kinds of names and values are not.
func TestCheckText(t *testing.T) {
	one := func(name string, vals ...Value) Space { return Space{Params: []Param{{Name: name, Values: vals}}} }
	for _, tc := range []struct {
		name string
		s    Space
		ok   bool
	}{
		{"the kernels' kind", one("impl", Str("fused:128x256:s4:c2:g8:st"), Str("pipeline")), true},
		{"numbers and an empty string", one("chunk", Int(-1), Int(4096), Str("")), true},
		{"an '=' inside a value", one("mode", Str("x=y")), true},
		{"empty name", one("", Int(1)), false},
		{"name with a comma", one("a,b", Int(1)), false},
		{"name with an '='", one("a=b", Int(1)), false},
		{"name with a space", one("block m", Int(1)), false},
		{"value with a comma", one("mode", Str("slow,fast")), false},
		{"value with a newline", one("mode", Str("slow\nfast")), false},
		{"value with a leading space", one("mode", Str(" slow")), false},
		{"value with a trailing tab", one("mode", Str("slow\t")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.CheckText(); (err == nil) != tc.ok {
				t.Fatalf("CheckText() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

package libops

import (
	"errors"
	"testing"
)

func TestDecodeRequestNamesTheArgument(t *testing.T) {
	type inner struct {
		M int `json:"m"`
	}
	type req struct {
		inner
		World  int               `json:"world"`
		Shape  map[string]int64  `json:"shape"`
		Ptrs   []uint64          `json:"ptrs"`
		Scale  float64           `json:"scale"`
		Fast   bool              `json:"fast"`
		Config map[string]string `json:"config"`
		Nested struct {
			Blocks []int `json:"blocks"`
		} `json:"nested"`
	}
	for _, tc := range []struct{ in, want string }{
		{`{"world":"2"}`, "world: want an integer, got a string"},
		{`{"m":"8"}`, "m: want an integer, got a string"}, // an embedded struct's field, at the top
		{`{"world":1.5}`, "world: want an integer, got 1.5"},
		{`{"world":true}`, "world: want an integer, got true or false"},
		{`{"shape":"n=1024"}`, "shape: want an object of integers, got a string"},
		{`{"shape":{"n":1024.5}}`, "shape: want an integer, got 1024.5"},
		{`{"ptrs":{"a":1}}`, "ptrs: want a list of non-negative integers, got an object"},
		{`{"ptrs":[-1]}`, "ptrs: want a non-negative integer, got -1"},
		{`{"scale":"x"}`, "scale: want a number, got a string"},
		{`{"fast":1}`, "fast: want true or false, got a number"},
		{`{"config":[1]}`, "config: want an object of strings, got a list"},
		{`{"nested":{"blocks":[[1]]}}`, "nested.blocks: want an integer, got a list"},
		{`{"colour":1}`, `request: unknown field "colour"`},
		{`{"world":2} {}`, "request: data after the JSON object"},
		{`{"world":`, "request: unexpected EOF"},
	} {
		var r req
		err := decodeRequest([]byte(tc.in), &r)
		var be *BadInputError
		if !errors.As(err, &be) || be.Msg != tc.want {
			t.Errorf("%s: got %v, want bad input %q", tc.in, err, tc.want)
		}
	}
	var r req
	if err := decodeRequest([]byte("  "), &r); err != nil {
		t.Errorf("an empty request is {}: %v", err)
	}
}

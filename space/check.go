package space

// The checks a space described by another process (a plugin) must pass
// before the host lists it: that its names and values survive config text,
// and that it is small enough to list.

import (
	"fmt"
	"strings"
	"unicode"
)

// MaxConfigs bounds the configs of a space (the product of its
// parameters' value counts). The host passes every config of a kernel's
// space through the plugin's Validate, keeping only the valid ones
// (Space.Each: it never lists them all), so a space described by a plugin,
// which is another process's word, must be one whose configs can all be
// asked about: the CUDA GEMM spaces hold 1.2 and 2.2 million configs (47
// impls: most of the product is combinations Validate refuses, 0.3-1.5%
// pass), asked about in seconds. Without a bound, 40 two-valued parameters
// killed the host (out of memory, when it listed them all) and 63
// overflowed Size. 2^20 refused those CUDA spaces once their searched tiles
// passed 41 (2026-12-05): the kernels' plugins did not load.
const MaxConfigs = 1 << 22

// CheckSize reports an error when s has more than MaxConfigs configs,
// counting without overflow, however many parameters it has.
func (s Space) CheckSize() error {
	n := 1
	for _, p := range s.Params {
		if k := len(p.Values); k > 0 && n > MaxConfigs/k {
			return fmt.Errorf("the space has more than %d configs (%d parameters): the host asks the plugin about every config, so a space must stay within that", MaxConfigs, len(s.Params))
		}
		n *= len(p.Values)
	}
	return nil
}

// CheckName reports an error when name (what names its kind: "parameter
// name", "dtype") cannot stand in config or shape text, a flag or a cache
// key: when it is empty or holds a comma, an '=', a space or a control
// character.
func CheckName(what, name string) error {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r == ',' || r == '=' || unicode.IsSpace(r) || unicode.IsControl(r)
	}) {
		return fmt.Errorf("%s %q: a name is not empty and holds no comma, '=', space or control character", what, name)
	}
	return nil
}

// CheckText reports an error when a parameter's name or a string value
// cannot be written in config text and read back as itself: a name that is
// empty or holds a comma, an '=', a space or a control character, or a
// string value that holds a comma or a control character, or starts or ends
// with a space. Config text ("name=value,name=value") is how configs are
// keyed, logged, cached and named in --where; a comma in a value would let
// two configs of one space share a key ("a=x,b=y" with b=z and a=x with
// b="y,b=z"), and such a value cannot be named at all.
func (s Space) CheckText() error {
	for _, p := range s.Params {
		if err := CheckName("parameter name", p.Name); err != nil {
			return err
		}
		for _, v := range p.Values {
			if !v.IsStr {
				continue
			}
			if strings.ContainsFunc(v.Str, func(r rune) bool { return r == ',' || unicode.IsControl(r) }) ||
				strings.TrimSpace(v.Str) != v.Str {
				return fmt.Errorf("parameter %q: value %q: a string value holds no comma or control character and does not start or end with a space", p.Name, v.Str)
			}
		}
	}
	return nil
}

// Package space owns the vocabulary every part of symmtune shares: parameter
// values, search spaces, configs, shapes and problems, with their canonical
// text, JSON and TOML forms. It has no dependencies on the host, the plugins
// or the cache, so all of them can import it.
package space

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Value is one setting of a tunable parameter: an integer or a string.
type Value struct {
	Int   int64
	Str   string
	IsStr bool
}

// Int makes an integer value.
func Int(v int64) Value { return Value{Int: v} }

// Str makes a string value.
func Str(s string) Value { return Value{Str: s, IsStr: true} }

// String renders the value as it appears in config text ("one_shot", "4096").
func (v Value) String() string {
	if v.IsStr {
		return v.Str
	}
	return strconv.FormatInt(v.Int, 10)
}

// Any returns the value as int64 or string, the types TOML and JSON decoders produce.
func (v Value) Any() any {
	if v.IsStr {
		return v.Str
	}
	return v.Int
}

// MarshalJSON writes integers as JSON numbers and strings as JSON strings.
func (v Value) MarshalJSON() ([]byte, error) { return json.Marshal(v.Any()) }

// UnmarshalJSON accepts a JSON integer or string.
func (v *Value) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = Str(s)
		return nil
	}
	var n json.Number
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return fmt.Errorf("value %s: want an integer or a string", b)
	}
	i, err := n.Int64()
	if err != nil {
		return fmt.Errorf("value %s: want an integer or a string", b)
	}
	*v = Int(i)
	return nil
}

// ValueFromAny converts a decoded TOML/JSON scalar (int64, int, float64 with
// an integral value, or string) into a Value.
func ValueFromAny(x any) (Value, error) {
	switch t := x.(type) {
	case string:
		return Str(t), nil
	case int64:
		return Int(t), nil
	case int:
		return Int(int64(t)), nil
	case float64:
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return Value{}, fmt.Errorf("value %v is not an integer", t)
		}
		return Int(int64(t)), nil
	default:
		return Value{}, fmt.Errorf("value %v (%T) is neither an integer nor a string", x, x)
	}
}

// Param is one tunable parameter with its ordered candidate values. The
// order matters: strategies treat neighbouring values as one step apart.
type Param struct {
	Name   string
	Values []Value
}

// Index returns the position of v in the parameter's values, or -1.
func (p Param) Index(v Value) int {
	for i, c := range p.Values {
		if c == v {
			return i
		}
	}
	return -1
}

// Space is a kernel's search space: the cartesian product of its parameters.
type Space struct {
	Params []Param
}

// Param returns the parameter called name.
func (s Space) Param(name string) (Param, bool) {
	for _, p := range s.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Size is the number of configs in the full product (before Validate
// prunes it). It overflows on a space CheckSize refuses.
func (s Space) Size() int {
	if len(s.Params) == 0 {
		return 0
	}
	n := 1
	for _, p := range s.Params {
		n *= len(p.Values)
	}
	return n
}

// At returns the config whose parameter i takes value index idx[i].
func (s Space) At(idx []int) Config {
	c := make(Config, len(s.Params))
	for i, p := range s.Params {
		c[p.Name] = p.Values[idx[i]]
	}
	return c
}

// Indices is the inverse of At.
func (s Space) Indices(c Config) ([]int, error) {
	if err := s.Check(c); err != nil {
		return nil, err
	}
	idx := make([]int, len(s.Params))
	for i, p := range s.Params {
		idx[i] = p.Index(c[p.Name])
	}
	return idx, nil
}

// Enumerate lists every config of the product, the last parameter varying fastest.
func (s Space) Enumerate() []Config {
	out := make([]Config, 0, s.Size())
	s.Each(func(c Config) bool {
		out = append(out, c)
		return true
	})
	return out
}

// Each calls f with every config of the product in Enumerate's order, one
// at a time, until f returns false: a caller that keeps few of them (the
// host keeps the valid ones) holds no list of them all.
func (s Space) Each(f func(Config) bool) {
	n := s.Size()
	idx := make([]int, len(s.Params))
	for k := 0; k < n; k++ {
		if !f(s.At(idx)) {
			return
		}
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(s.Params[i].Values) {
				break
			}
			idx[i] = 0
		}
	}
}

// Check reports whether c names every parameter of s exactly once with one
// of its listed values, and nothing else.
func (s Space) Check(c Config) error {
	for name := range c {
		if _, ok := s.Param(name); !ok {
			return fmt.Errorf("unknown parameter %q (known: %s)", name, strings.Join(s.Names(), ", "))
		}
	}
	for _, p := range s.Params {
		v, ok := c[p.Name]
		if !ok {
			return fmt.Errorf("parameter %q missing", p.Name)
		}
		if p.Index(v) < 0 {
			return fmt.Errorf("parameter %q: value %s not in %s", p.Name, v, p.valueList())
		}
	}
	return nil
}

// Names lists the parameter names in order.
func (s Space) Names() []string {
	names := make([]string, len(s.Params))
	for i, p := range s.Params {
		names[i] = p.Name
	}
	return names
}

func (p Param) valueList() string {
	parts := make([]string, len(p.Values))
	for i, v := range p.Values {
		parts[i] = v.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Config assigns a value to each parameter of a space.
type Config map[string]Value

// ConfigKey is a config's comparable identity: use it as a map key and
// compare it with ==. Two configs have the same key exactly when they
// render the same canonical text.
type ConfigKey string

// Key returns the config's comparable identity.
func (c Config) Key() ConfigKey { return ConfigKey(c.String()) }

// Equal reports whether two configs are the same: the same parameters with
// the same values, as their keys would say (a value is its text: 1 and "1"
// are one value), without building the keys: the host compares every
// config of a space with the default, millions of them.
func (c Config) Equal(o Config) bool {
	if len(c) != len(o) {
		return false
	}
	for name, v := range c {
		w, ok := o[name]
		if !ok || !v.sameText(w) {
			return false
		}
	}
	return true
}

// sameText reports whether v and w render the same text.
func (v Value) sameText(w Value) bool {
	switch {
	case v.IsStr && w.IsStr:
		return v.Str == w.Str
	case !v.IsStr && !w.IsStr:
		return v.Int == w.Int
	}
	return v.String() == w.String()
}

// String is the canonical text form: name=value pairs sorted by name,
// joined by commas. Two equal configs always render the same string; it is
// for text (logs, messages, files). Compare configs with Key or Equal.
func (c Config) String() string {
	var b strings.Builder
	for i, n := range slices.Sorted(maps.Keys(c)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(c[n].String())
	}
	return b.String()
}

// Clone returns an independent copy.
func (c Config) Clone() Config {
	out := make(Config, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Any converts the config to a map of int64/string, as TOML encoders want.
func (c Config) Any() map[string]any {
	out := make(map[string]any, len(c))
	for k, v := range c {
		out[k] = v.Any()
	}
	return out
}

// ConfigFromAny converts a decoded TOML/JSON table into a Config.
func ConfigFromAny(m map[string]any) (Config, error) {
	c := make(Config, len(m))
	for k, x := range m {
		v, err := ValueFromAny(x)
		if err != nil {
			return nil, fmt.Errorf("config key %q: %w", k, err)
		}
		c[k] = v
	}
	return c, nil
}

// ParseConfig reads "name=value,name=value" against a space: every name
// must be a parameter and every value one of its values. Parameters left out
// take their value from base (typically the kernel's default config) when
// base is non-nil; otherwise all parameters are required.
func ParseConfig(text string, s Space, base Config) (Config, error) {
	c := Config{}
	if base != nil {
		c = base.Clone()
	}
	text = strings.TrimSpace(text)
	if text != "" {
		for _, part := range strings.Split(text, ",") {
			name, raw, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok || name == "" {
				return nil, fmt.Errorf("config %q: %q is not name=value", text, part)
			}
			p, found := s.Param(name)
			if !found {
				return nil, fmt.Errorf("config %q: unknown parameter %q (known: %s)", text, name, strings.Join(s.Names(), ", "))
			}
			v, err := parseValueFor(p, raw)
			if err != nil {
				return nil, fmt.Errorf("config %q: %w", text, err)
			}
			c[name] = v
		}
	}
	if err := s.Check(c); err != nil {
		return nil, fmt.Errorf("config %q: %w", text, err)
	}
	return c, nil
}

func parseValueFor(p Param, raw string) (Value, error) {
	for _, v := range p.Values {
		if v.String() == raw {
			return v, nil
		}
	}
	return Value{}, fmt.Errorf("parameter %q: value %q not in %s", p.Name, raw, p.valueList())
}

// Shape gives each problem dimension its size, e.g. {"n": 1048576} or {"m": 512, "n": 256, "k": 256}.
type Shape map[string]int64

// MaxDim bounds a single dimension; larger values are refused as overflow
// risks (products of three dims must stay far inside int64).
const MaxDim = int64(1) << 40

// ParseShape reads "n=1048576" or "m=512,n=256,k=256". When dims is
// non-empty, exactly those dimensions must appear. Sizes must be positive
// integers no larger than MaxDim.
func ParseShape(text string, dims []string) (Shape, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errors.New("empty shape")
	}
	sh := Shape{}
	for _, part := range strings.Split(text, ",") {
		name, raw, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.TrimSpace(name)
		raw = strings.TrimSpace(raw)
		if !ok || name == "" || raw == "" {
			return nil, fmt.Errorf("shape %q: %q is not dim=size", text, part)
		}
		if _, dup := sh[name]; dup {
			return nil, fmt.Errorf("shape %q: dimension %q given twice", text, name)
		}
		v, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("shape %q: dimension %q: %q is not an integer that fits in 64 bits", text, name, raw)
		}
		if v <= 0 {
			return nil, fmt.Errorf("shape %q: dimension %q must be positive, got %d", text, name, v)
		}
		if v > MaxDim {
			return nil, fmt.Errorf("shape %q: dimension %q = %d exceeds the limit %d", text, name, v, MaxDim)
		}
		sh[name] = v
	}
	if len(dims) > 0 {
		for _, d := range dims {
			if _, ok := sh[d]; !ok {
				return nil, fmt.Errorf("shape %q: missing dimension %q (the kernel's dimensions are %s)", text, d, strings.Join(dims, ","))
			}
		}
		if len(sh) != len(dims) {
			for name := range sh {
				if !contains(dims, name) {
					return nil, fmt.Errorf("shape %q: unknown dimension %q (the kernel's dimensions are %s)", text, name, strings.Join(dims, ","))
				}
			}
		}
	}
	return sh, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Format renders the shape with dims in the given order, any others sorted
// after them; with no order, sorted by name. ParseShape reads it back.
func (sh Shape) Format(order ...string) string {
	seen := map[string]bool{}
	var names []string
	for _, d := range order {
		if _, ok := sh[d]; ok && !seen[d] {
			names = append(names, d)
			seen[d] = true
		}
	}
	var rest []string
	for d := range sh {
		if !seen[d] {
			rest = append(rest, d)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)
	parts := make([]string, len(names))
	for i, d := range names {
		parts[i] = d + "=" + strconv.FormatInt(sh[d], 10)
	}
	return strings.Join(parts, ",")
}

// String is the canonical (name-sorted) form, suitable as a map key.
func (sh Shape) String() string { return sh.Format() }

// Equal reports whether two shapes have the same dimensions and sizes.
func (sh Shape) Equal(o Shape) bool {
	if len(sh) != len(o) {
		return false
	}
	for k, v := range sh {
		if w, ok := o[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Problem is one instance a kernel is tuned for.
type Problem struct {
	Shape Shape
	Dtype string
}

// DtypeSize returns the element size in bytes of the dtypes symmtune knows.
func DtypeSize(dtype string) (int, error) {
	switch dtype {
	case "f32":
		return 4, nil
	case "bf16", "f16":
		return 2, nil
	case "f64":
		return 8, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (known: f32, bf16, f16, f64)", dtype)
}

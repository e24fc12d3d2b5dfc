package cache

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/symmtune/symmtune/space"
)

// fastRecord reads a record in exactly the form encode writes it, without
// the TOML decoder (which takes ~100 µs an entry and 70x the file's size
// in allocations: a 100k-entry cache took 40 s to load). Anything else —
// comments, quoted keys, escapes, literal strings, other number or date
// forms, duplicate or unknown keys, out-of-range values — returns ok =
// false, and the caller decodes the record with the TOML decoder, which
// then decides. So the fast path only ever accepts text the decoder reads
// the same way (FuzzFastRecord holds it to that).
//
// It returns the entry as fromFile would, not yet checked, and the entry
// keys it set.
func fastRecord(body []byte, in *interner) (e Entry, defined keySet, ok bool) {
	line, rest := nextLine(body)
	if string(line) != "[[entry]]" {
		return e, 0, false
	}
	hw := false
	var world, trials int64
	var hwSeen keySet
	for len(rest) > 0 {
		line, rest = nextLine(rest)
		if len(line) == 0 {
			continue
		}
		if string(line) == "[entry.hardware_info]" {
			if hw || defined.has("hardware_info") {
				return e, 0, false
			}
			hw = true
			defined = defined.add("hardware_info")
			continue
		}
		k, v, found := bytes.Cut(line, []byte(" = "))
		if !found || !bareKey(k) {
			return e, 0, false
		}
		key := string(k) // no allocation: used for lookups only
		var good bool
		if hw {
			if hwSeen.has(key) {
				return e, 0, false
			}
			good = fastHardware(&e, key, v, in)
			hwSeen = hwSeen.add(key)
		} else {
			if defined.has(key) {
				return e, 0, false
			}
			switch key {
			case "kernel":
				e.Kernel, good = fastString(v, in)
			case "kernel_version":
				e.KernelVersion, good = fastString(v, in)
			case "backend":
				e.Backend, good = fastString(v, in)
			case "hardware":
				e.Hardware, good = fastString(v, in)
			case "dtype":
				e.Dtype, good = fastString(v, in)
			case "world":
				world, good = fastInt(v)
				good = good && world >= 1 && world <= maxCount
			case "trials":
				trials, good = fastInt(v)
				good = good && trials >= 0 && trials <= maxCount
			case "median_us":
				e.MedianUS, good = fastFloat(v)
			case "min_us":
				e.MinUS, good = fastFloat(v)
			case "p90_us":
				e.P90US, good = fastFloat(v)
			case "default_median_us":
				e.DefaultMedianUS, good = fastFloat(v)
			case "tuned_at":
				e.TunedAt, good = fastTime(v)
			case "shape":
				e.Shape, good = fastShape(v, in)
			case "config":
				e.Config, good = fastConfig(v, in)
			}
			defined = defined.add(key)
		}
		if !good {
			return e, 0, false
		}
	}
	e.World, e.Trials = int(world), int(trials)
	if e.Config == nil {
		e.Config = space.Config{}
	}
	return e, defined, true
}

func fastHardware(e *Entry, key string, v []byte, in *interner) bool {
	h := &e.HardwareInfo
	var ok bool
	var n int64
	switch key {
	case "kind":
		h.Kind, ok = fastString(v, in)
	case "name":
		h.Name, ok = fastString(v, in)
	case "compute":
		h.Compute, ok = fastString(v, in)
	case "driver":
		h.Driver, ok = fastString(v, in)
	case "interconnect":
		h.Interconnect, ok = fastString(v, in)
	case "count", "cores", "sms", "memory_mib":
		if n, ok = fastInt(v); !ok || n < 0 || n > 1<<40 {
			return false
		}
		switch key {
		case "count":
			h.Count = int(n)
		case "cores":
			h.Cores = int(n)
		case "sms":
			h.SMs = int(n)
		default:
			h.MemoryMiB = n
		}
	}
	return ok
}

func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// bareKey: a TOML bare key of lower-case letters, digits, '_' and '-'.
func bareKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// fastString reads a basic string without escapes or control characters.
func fastString(v []byte, in *interner) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	for _, c := range s {
		if c == '"' || c == '\\' || c < 0x20 || c == 0x7f {
			return "", false
		}
	}
	if !utf8.Valid(s) {
		return "", false
	}
	return in.str(s), true
}

// fastInt reads a decimal integer: an optional '-', no leading zeros, no '_'.
func fastInt(v []byte) (int64, bool) {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || (d[0] == '0' && len(d) > 1) {
		return 0, false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// fastFloat reads a TOML float or integer in the plain form:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func fastFloat(v []byte) (float64, bool) {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		return i - j
	}
	start := i
	if n := digits(); n == 0 || (v[start] == '0' && n > 1) {
		return 0, false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	if i != len(v) {
		return 0, false
	}
	if bytes.IndexAny(v, ".eE") < 0 && len(v) > 15 {
		return 0, false // an integer a float64 may not hold exactly: the decoder decides
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// fastTime reads an RFC 3339 date-time with 'T' and a zone.
func fastTime(v []byte) (time.Time, bool) {
	// Exactly YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM): time.Parse alone
	// is laxer than TOML (a one-digit hour).
	digitsAt := func(b []byte, pos ...int) bool {
		for _, p := range pos {
			if p >= len(b) || b[p] < '0' || b[p] > '9' {
				return false
			}
		}
		return true
	}
	if len(v) < 20 || !digitsAt(v, 0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18) ||
		v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' {
		return time.Time{}, false
	}
	z := v[19:]
	if z[0] == '.' {
		i := 1
		for i < len(z) && z[i] >= '0' && z[i] <= '9' {
			i++
		}
		if i == 1 || i > 10 {
			return time.Time{}, false
		}
		z = z[i:]
	}
	if string(z) != "Z" && !(len(z) == 6 && (z[0] == '+' || z[0] == '-') && digitsAt(z, 1, 2, 4, 5) && z[3] == ':') {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(v))
	if err != nil || t.Year() < 1 {
		return time.Time{}, false
	}
	return t, true
}

// inlineItems splits `{ a = 1, b = "x" }` (or `{}`) into its pairs; it
// gives up on anything a plain split could misread (a comma or brace
// inside a string).
func inlineItems(v []byte, each func(k, val []byte) bool) bool {
	if string(v) == "{}" {
		return true
	}
	if len(v) < 4 || string(v[:2]) != "{ " || string(v[len(v)-2:]) != " }" {
		return false
	}
	body := v[2 : len(v)-2]
	if bytes.ContainsAny(body, "{}[]#\\") {
		return false
	}
	for len(body) > 0 {
		item := body
		if i := bytes.IndexByte(body, ','); i >= 0 {
			item, body = body[:i], body[i+1:]
			if len(body) == 0 || body[0] != ' ' {
				return false
			}
			body = body[1:]
		} else {
			body = nil
		}
		k, val, ok := bytes.Cut(item, []byte(" = "))
		if !ok || !bareKey(k) || !each(k, val) {
			return false
		}
	}
	return true
}

func fastShape(v []byte, in *interner) (space.Shape, bool) {
	sh := space.Shape{}
	ok := inlineItems(v, func(k, val []byte) bool {
		n, ok := fastInt(val)
		if _, dup := sh[string(k)]; !ok || dup {
			return false
		}
		sh[in.str(k)] = n
		return true
	})
	return sh, ok
}

func fastConfig(v []byte, in *interner) (space.Config, bool) {
	c := space.Config{}
	ok := inlineItems(v, func(k, val []byte) bool {
		if _, dup := c[string(k)]; dup {
			return false
		}
		if len(val) > 0 && val[0] == '"' {
			s, ok := fastString(val, in)
			c[in.str(k)] = space.Str(s)
			return ok
		}
		n, ok := fastInt(val)
		c[in.str(k)] = space.Int(n)
		return ok
	})
	return c, ok
}

// interner shares the text of repeated strings (kernels, hardware IDs,
// parameter names) between the entries of one load.
type interner struct{ m map[string]string }

func (in *interner) str(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(s) <= 256 {
		in.m[s] = s
	}
	return s
}

// keySet is a set of an entry's or a fingerprint's keys, one bit each.
type keySet uint32

var keyBits = func() map[string]keySet {
	m := map[string]keySet{}
	for k := range entryKeys {
		m[k] = keySet(1) << len(m)
	}
	for k := range hardwareKeys {
		if _, ok := m[k]; !ok {
			m[k] = keySet(1) << len(m)
		}
	}
	return m
}()

func (s keySet) has(k string) bool { b, ok := keyBits[k]; return ok && s&b != 0 }

func (s keySet) add(k string) keySet { return s | keyBits[k] }

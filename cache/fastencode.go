package cache

import (
	"bytes"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/symmtune/symmtune/space"
)

// appendRecord writes e's record the way the TOML encoder does, byte for
// byte (TestFastEncodeMatchesEncoder), without reflection: the encoder took
// ~50 µs an entry, and a search rewrites the whole file under its lock.
// It returns false, writing nothing, for text it would have to escape or
// quote (the encoder then writes the record).
func appendRecord(b *bytes.Buffer, e *Entry) bool {
	start := b.Len()
	ok := func() bool {
		b.WriteString("[[entry]]\n")
		str := func(key, v string, omitEmpty bool) bool {
			if omitEmpty && v == "" {
				return true
			}
			if !plainString(v) {
				return false
			}
			b.WriteString(key)
			b.WriteString(" = \"")
			b.WriteString(v)
			b.WriteString("\"\n")
			return true
		}
		num := func(key string, v int64) {
			b.WriteString(key)
			b.WriteString(" = ")
			b.WriteString(strconv.FormatInt(v, 10))
			b.WriteByte('\n')
		}
		flt := func(key string, v float64) {
			b.WriteString(key)
			b.WriteString(" = ")
			b.WriteString(floatText(v))
			b.WriteByte('\n')
		}
		if !str("kernel", e.Kernel, false) || !str("kernel_version", e.KernelVersion, true) ||
			!str("backend", e.Backend, true) || !str("hardware", e.Hardware, true) {
			return false
		}
		num("world", int64(e.World))
		if !str("dtype", e.Dtype, false) {
			return false
		}
		b.WriteString("shape = ")
		names := make([]string, 0, len(e.Shape))
		for k := range e.Shape {
			names = append(names, k)
		}
		if !inlineText(b, names, func(k string) (string, bool) { return strconv.FormatInt(e.Shape[k], 10), true }) {
			return false
		}
		b.WriteString("config = ")
		names = names[:0]
		for k := range e.Config {
			names = append(names, k)
		}
		if !inlineText(b, names, func(k string) (string, bool) { return valueText(e.Config[k]) }) {
			return false
		}
		flt("median_us", e.MedianUS)
		flt("min_us", e.MinUS)
		flt("p90_us", e.P90US)
		flt("default_median_us", e.DefaultMedianUS)
		num("trials", int64(e.Trials))
		if !e.TunedAt.IsZero() {
			b.WriteString("tuned_at = ")
			b.WriteString(e.TunedAt.Format(time.RFC3339Nano))
			b.WriteByte('\n')
		}
		h := e.HardwareInfo
		if h == hwZero {
			return true // omitted, as the encoder's omitempty does
		}
		b.WriteString("[entry.hardware_info]\n")
		if !str("kind", h.Kind, true) || !str("name", h.Name, true) {
			return false
		}
		for _, f := range []struct {
			k string
			v int64
		}{{"count", int64(h.Count)}, {"cores", int64(h.Cores)}, {"sms", int64(h.SMs)}, {"memory_mib", h.MemoryMiB}} {
			if f.v != 0 {
				num(f.k, f.v)
			}
		}
		return str("compute", h.Compute, true) && str("driver", h.Driver, true) && str("interconnect", h.Interconnect, true)
	}()
	if !ok {
		b.Truncate(start)
	}
	return ok
}

var hwZero = Entry{}.HardwareInfo

// inlineText writes `{ a = 1, b = "x" }` (`{}` when empty), keys sorted.
func inlineText(b *bytes.Buffer, names []string, val func(string) (string, bool)) bool {
	if len(names) == 0 {
		b.WriteString("{}\n")
		return true
	}
	slices.Sort(names)
	b.WriteString("{")
	for i, k := range names {
		if !bareKey([]byte(k)) {
			return false
		}
		v, ok := val(k)
		if !ok {
			return false
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(' ')
		b.WriteString(k)
		b.WriteString(" = ")
		b.WriteString(v)
	}
	b.WriteString(" }\n")
	return true
}

func valueText(v space.Value) (string, bool) {
	if !v.IsStr {
		return strconv.FormatInt(v.Int, 10), true
	}
	if !plainString(v.Str) {
		return "", false
	}
	return `"` + v.Str + `"`, true
}

// plainString: text a TOML basic string holds without escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(s)
}

// floatText is the TOML encoder's float form.
func floatText(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' || s[i] == '.' {
			return s
		}
	}
	return s + ".0"
}

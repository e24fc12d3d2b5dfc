package cache

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

// Version is the file format version Load accepts and Put writes.
const Version = 1

const header = "# symmtune tuned configs; written by `symmtune search`\n"

// fileDoc and fileEntry are the on-disk form, decoded before validation.
type fileDoc struct {
	Version int64       `toml:"version"`
	Entry   []fileEntry `toml:"entry"`
}

type fileEntry struct {
	Kernel          string               `toml:"kernel"`
	KernelVersion   string               `toml:"kernel_version"`
	Backend         string               `toml:"backend"`
	Hardware        string               `toml:"hardware"`
	World           int64                `toml:"world"`
	Dtype           string               `toml:"dtype"`
	Shape           map[string]any       `toml:"shape"`
	Config          map[string]any       `toml:"config"`
	MedianUS        float64              `toml:"median_us"`
	MinUS           float64              `toml:"min_us"`
	P90US           float64              `toml:"p90_us"`
	DefaultMedianUS float64              `toml:"default_median_us"`
	Trials          int64                `toml:"trials"`
	TunedAt         time.Time            `toml:"tuned_at"`
	HardwareInfo    hardware.Fingerprint `toml:"hardware_info"`
}

// The keys a file may hold, exactly (the decoder alone would also accept
// other spellings, case-insensitively).
var (
	entryKeys = map[string]bool{
		"kernel": true, "kernel_version": true, "backend": true, "hardware": true,
		"world": true, "dtype": true, "shape": true, "config": true,
		"median_us": true, "min_us": true, "p90_us": true, "default_median_us": true,
		"trials": true, "tuned_at": true, "hardware_info": true,
	}
	hardwareKeys = map[string]bool{
		"kind": true, "name": true, "count": true, "cores": true, "sms": true,
		"memory_mib": true, "compute": true, "driver": true, "interconnect": true,
	}
)

// FileError is a cache file that cannot be read as a cache (not TOML, an
// unknown version or key, a broken entry): it names the file and, where
// known, the line or the entry. It is the user's file that is wrong, not
// symmtune, so the CLI treats it as bad input; an unreadable file (I/O,
// permissions) is a plain error.
type FileError struct {
	path string
	line int // 0: unknown
	msg  string
	err  error
}

func (e *FileError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("cache %s: line %d: %s", e.path, e.line, e.msg)
	}
	return fmt.Sprintf("cache %s: %s", e.path, e.msg)
}

func (e *FileError) Unwrap() error { return e.err }

// lineRe pulls the line out of the decoder's type errors, which are plain
// errors of the form `toml: line 7 (last key "entry.world"): ...`.
var lineRe = regexp.MustCompile(`(?s)^toml: line (\d+) \(last key "(.*?)"\): (.*)$`)

func decodeError(path string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			msg = fmt.Sprintf("%s (last key %q)", msg, pe.LastKey)
		}
		return &FileError{path: path, line: pe.Position.Line, msg: msg, err: err}
	}
	if m := lineRe.FindStringSubmatch(err.Error()); m != nil {
		if line, convErr := strconv.Atoi(m[1]); convErr == nil {
			return &FileError{path: path, line: line, msg: m[2] + ": " + m[3], err: err}
		}
	}
	return &FileError{path: path, msg: strings.TrimPrefix(err.Error(), "toml: "), err: err}
}

func kernelNote(k string) string {
	if k == "" {
		return ""
	}
	return fmt.Sprintf(" (kernel %q)", k)
}

// checkKey accepts exactly the keys of the format.
func checkKey(k toml.Key) error {
	ok := false
	switch len(k) {
	case 1:
		ok = k[0] == "version" || k[0] == "entry"
	case 2:
		ok = k[0] == "entry" && entryKeys[k[1]]
	case 3:
		ok = k[0] == "entry" && (k[1] == "shape" || k[1] == "config" ||
			(k[1] == "hardware_info" && hardwareKeys[k[2]]))
	}
	if !ok {
		return fmt.Errorf("unknown key %q", k.String())
	}
	return nil
}

func fromFile(fe fileEntry) (Entry, error) {
	e := Entry{
		Key: Key{
			Kernel:        fe.Kernel,
			KernelVersion: fe.KernelVersion,
			Backend:       fe.Backend,
			Hardware:      fe.Hardware,
			Dtype:         fe.Dtype,
		},
		HardwareInfo:    fe.HardwareInfo,
		MedianUS:        fe.MedianUS,
		MinUS:           fe.MinUS,
		P90US:           fe.P90US,
		DefaultMedianUS: fe.DefaultMedianUS,
		TunedAt:         fe.TunedAt,
	}
	if fe.Kernel == "" {
		return e, errors.New("kernel is missing")
	}
	if fe.World < 1 || fe.World > maxCount {
		return e, fmt.Errorf("world %d: must be in 1..%d", fe.World, maxCount)
	}
	e.World = int(fe.World)
	if fe.Trials < 0 || fe.Trials > maxCount {
		return e, fmt.Errorf("trials %d: must be in 0..%d", fe.Trials, maxCount)
	}
	e.Trials = int(fe.Trials)
	if fe.TunedAt.Year() == 0 {
		// A bare TOML local time ("18:40:00") decodes to year 0.
		return e, fmt.Errorf("tuned_at %s has no date (or year 0)", fe.TunedAt.Format(time.TimeOnly))
	}
	if len(fe.Shape) > 0 {
		e.Shape = make(space.Shape, len(fe.Shape))
	}
	for _, name := range sortedKeys(fe.Shape) {
		v, ok := fe.Shape[name].(int64)
		if !ok {
			return e, fmt.Errorf("shape: dimension %q = %v (%s) is not an integer", name, fe.Shape[name], tomlType(fe.Shape[name]))
		}
		e.Shape[name] = v
	}
	e.Config = make(space.Config, len(fe.Config))
	for _, name := range sortedKeys(fe.Config) {
		v, err := space.ValueFromAny(fe.Config[name])
		if err != nil {
			return e, fmt.Errorf("config: parameter %q = %v (%s) is neither an integer nor a string", name, fe.Config[name], tomlType(fe.Config[name]))
		}
		e.Config[name] = v
	}
	return e, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func tomlType(x any) string {
	switch x.(type) {
	case int64:
		return "integer"
	case float64:
		return "float"
	case string:
		return "string"
	case bool:
		return "boolean"
	case time.Time:
		return "datetime"
	case []any, []map[string]any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", x)
}

// outEntry is the written form. Shape and config are written
// as inline tables.
type outEntry struct {
	Kernel          string               `toml:"kernel"`
	KernelVersion   string               `toml:"kernel_version,omitempty"`
	Backend         string               `toml:"backend,omitempty"`
	Hardware        string               `toml:"hardware,omitempty"`
	World           int                  `toml:"world"`
	Dtype           string               `toml:"dtype"`
	Shape           inlineTable          `toml:"shape"`
	Config          inlineTable          `toml:"config"`
	MedianUS        float64              `toml:"median_us"`
	MinUS           float64              `toml:"min_us"`
	P90US           float64              `toml:"p90_us"`
	DefaultMedianUS float64              `toml:"default_median_us"`
	Trials          int                  `toml:"trials"`
	TunedAt         time.Time            `toml:"tuned_at,omitempty"`
	HardwareInfo    hardware.Fingerprint `toml:"hardware_info,omitempty"`
}

// inlineTable is a table of int64/string values written inline,
// `{ a = 1, b = "x" }`, keys sorted.
type inlineTable map[string]any

// MarshalTOML implements toml.Marshaler.
func (t inlineTable) MarshalTOML() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range sortedKeys(t) {
		if i > 0 {
			b.WriteString(",")
		}
		v, err := scalar(t[k])
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		b.WriteString(" ")
		b.WriteString(toml.Key{k}.String())
		b.WriteString(" = ")
		b.WriteString(v)
	}
	if len(t) > 0 {
		b.WriteString(" ")
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

// scalar renders one TOML value with the TOML encoder, so string escaping
// follows the spec.
func scalar(v any) (string, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err != nil {
		return "", err
	}
	s, ok := strings.CutPrefix(b.String(), "v = ")
	if !ok {
		return "", fmt.Errorf("cannot write %v (%T) as a TOML value", v, v)
	}
	return strings.TrimSuffix(s, "\n"), nil
}

// encode renders entries (already checked and sorted) as a cache file:
// the header, then one checksummed record per entry (record.go).
func encode(entries []Entry) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(entries) * 600)
	b.WriteString(header)
	b.WriteString(checksumMarker)
	b.WriteString("\n")
	fmt.Fprintf(&b, "version = %d\n", Version)
	var rec bytes.Buffer
	enc := toml.NewEncoder(&rec)
	enc.Indent = ""
	for i := range entries {
		b.WriteString("\n")
		at := b.Len()
		if appendRecord(&b, &entries[i]) {
			b.WriteString(sumLine(b.Bytes()[at:]))
			continue
		}
		rec.Reset()
		if err := enc.Encode(recordDoc{Entry: []outEntry{toOut(entries[i])}}); err != nil {
			return nil, err
		}
		text := bytes.TrimLeft(rec.Bytes(), "\n")
		b.Write(text)
		b.WriteString(sumLine(text))
	}
	return b.Bytes(), nil
}

// recordDoc is one record's TOML: a file without its header.
type recordDoc struct {
	Entry []outEntry `toml:"entry"`
}

func toOut(e Entry) outEntry {
	shape := make(inlineTable, len(e.Shape))
	for k, v := range e.Shape {
		shape[k] = v
	}
	return outEntry{
		Kernel:          e.Kernel,
		KernelVersion:   e.KernelVersion,
		Backend:         e.Backend,
		Hardware:        e.Hardware,
		World:           e.World,
		Dtype:           e.Dtype,
		Shape:           shape,
		Config:          inlineTable(e.Config.Any()),
		MedianUS:        e.MedianUS,
		MinUS:           e.MinUS,
		P90US:           e.P90US,
		DefaultMedianUS: e.DefaultMedianUS,
		Trials:          e.Trials,
		TunedAt:         e.TunedAt,
		HardwareInfo:    e.HardwareInfo,
	}
}

package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
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

// Load reads the cache file at path. A missing file is an empty store.
//
// A file whose header cannot be read (not TOML, an unknown or missing
// format version, an unknown top-level key) is an error naming the file and
// the line: nothing of it can be trusted, and Put leaves it untouched.
//
// A damaged entry is not an error: it is left out of the store and listed
// by Store.Damaged, naming its line and what is wrong (a record cut short
// or failing its checksum, a required field missing, median_us not above
// 0, tuned_at later than now plus MaxClockSkew, no kernel, world < 1, a
// shape size that is not a positive integer, a config value that is
// neither an integer nor a string, a key already held by an earlier
// entry, ...). Every whole entry of the file loads exactly. Put sets
// damaged entries aside (see PutAll) instead of refusing to write.
//
// Path must be a regular file (or a symlink to one): a device, FIFO or
// directory is an error, found without reading or waiting on it.
func Load(path string) (*Store, error) {
	data, err := readRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Store{path: path}, nil
	}
	if err != nil {
		return nil, err
	}
	entries, damaged, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	return &Store{path: path, entries: entries, damaged: damaged}, nil
}

// parse decodes and validates file contents; path only names the file in
// errors. It returns the whole entries, sorted, and the damaged ones.
func parse(path string, data []byte) ([]Entry, []Damage, error) {
	header, recs := splitRecords(data)
	var doc fileDoc
	md, err := toml.NewDecoder(bytes.NewReader(header)).Decode(&doc)
	if err != nil {
		return nil, nil, decodeError(path, err)
	}
	for _, k := range md.Keys() {
		if err := checkKey(k); err != nil {
			return nil, nil, &FileError{path: path, msg: err.Error()}
		}
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, nil, &FileError{path: path, msg: fmt.Sprintf("unknown key %q", und[0].String())}
	}
	switch {
	case doc.Version == Version:
	case doc.Version == 0 && !md.IsDefined("version") && len(doc.Entry) == 0 && len(recs) == 0:
		// An empty file.
	case !md.IsDefined("version"):
		return nil, nil, &FileError{path: path, msg: fmt.Sprintf("no format version: want `version = %d` at the top", Version)}
	default:
		return nil, nil, &FileError{path: path, msg: fmt.Sprintf("format version %d is not supported (this symmtune reads version %d); upgrade symmtune or move the file away", doc.Version, Version)}
	}
	marked := hasMarker(header)
	p := parser{path: path, seen: make(map[Slot]int, len(recs)), in: interner{m: map[string]string{}},
		out: make([]Entry, 0, len(recs)), slots: make([]Slot, 0, len(recs))}
	if len(doc.Entry) > 0 {
		// Entries written inline in the header (`entry = [{...}]`): a
		// hand-written file; they carry no checksum.
		if marked {
			p.damage(0, 0, "", header, "entries in the header carry no checksum")
		} else {
			p.entries(0, 1, header, doc.Entry, md)
		}
	}
	for _, r := range recs {
		p.record(r, marked)
	}
	sortBySlot(p.out, p.slots)
	return p.out, p.damaged, nil
}

// parser gathers the entries and damage of one file.
type parser struct {
	path    string
	n       int // entries numbered so far, from 1, for messages
	seen    map[Slot]int
	out     []Entry
	slots   []Slot // out's
	damaged []Damage
	in      interner
}

func (p *parser) damage(n, line int, kernel string, raw []byte, msg string) {
	p.damaged = append(p.damaged, Damage{Location: p.path, Line: line, Entry: n, Kernel: kernel, Reason: msg, Raw: raw})
}

// record reads one record: checksum first, then its TOML, then its fields.
func (p *parser) record(r record, marked bool) {
	if r.stray {
		p.damage(0, r.line, "", r.text, "text after an entry's checksum line that is no whole entry (the file was cut short or edited)")
		return
	}
	n := p.n + 1
	switch {
	case r.sum && !r.sumOK:
		p.n++
		p.damage(n, r.line, guessKernel(r.body), r.text, r.sumErr)
		return
	case !r.sum && marked:
		p.n++
		p.damage(n, r.line, guessKernel(r.body), r.text, "it has no checksum line: it was cut short or edited (to keep an edit, delete the header line `"+checksumMarker+"`)")
		return
	}
	if e, defined, ok := fastRecord(r.body, &p.in); ok {
		p.n++
		p.add(n, r.line, r.text, e, defined)
		return
	}
	var doc fileDoc
	md, err := toml.NewDecoder(bytes.NewReader(r.body)).Decode(&doc)
	if err != nil {
		p.n++
		fe := decodeError(p.path, err).(*FileError)
		line := r.line
		if fe.line > 0 {
			line += fe.line - 1
		}
		p.damage(n, line, guessKernel(r.body), r.text, fe.msg)
		return
	}
	p.entries(n, r.line, r.text, doc.Entry, md)
}

// entries checks the entries decoded from one piece of the file.
func (p *parser) entries(_ int, line int, raw []byte, fes []fileEntry, md toml.MetaData) {
	start := p.n
	p.n += max(len(fes), 1)
	bad := func(msg string) {
		p.damage(start+1, line, guessKernel(raw), raw, msg)
	}
	var defined keySet
	for _, k := range md.Keys() {
		if err := checkKey(k); err != nil {
			bad(err.Error())
			return
		}
		if len(k) == 2 {
			defined = defined.add(k[1])
		}
	}
	if und := md.Undecoded(); len(und) > 0 {
		bad(fmt.Sprintf("unknown key %q", und[0].String()))
		return
	}
	if len(fes) == 0 {
		bad("no entry")
		return
	}
	for i, fe := range fes {
		n := start + 1 + i
		e, err := fromFile(fe)
		if err != nil {
			p.damage(n, line, fe.Kernel, raw, err.Error())
			continue
		}
		if len(fes) > 1 {
			defined = allKeys // per entry unknown: the header's inline array
		}
		p.add(n, line, raw, e, defined)
	}
}

// allKeys stands for keys that cannot be told apart per entry.
const allKeys = ^keySet(0)

// add checks one decoded entry and keeps it, or reports it damaged.
// defined holds the keys its record set.
func (p *parser) add(n, line int, raw []byte, e Entry, defined keySet) {
	e, err := checkOwned(e)
	if err == nil {
		// A record cut short must not load with zeros.
		for _, k := range requiredKeys {
			if !defined.has(k) {
				err = fmt.Errorf("%s is missing", k)
				break
			}
		}
	}
	if err != nil {
		p.damage(n, line, e.Kernel, raw, err.Error())
		return
	}
	id := e.Key.Slot()
	if j, dup := p.seen[id]; dup {
		p.damage(n, line, e.Kernel, raw, fmt.Sprintf("same key as [[entry]] #%d (%s)", j, e.Key))
		return
	}
	p.seen[id] = n
	p.out = append(p.out, e)
	p.slots = append(p.slots, id)
}

// requiredKeys are the fields every entry must state; the others default
// to zero or empty.
var requiredKeys = []string{"kernel", "world", "dtype", "shape", "median_us", "tuned_at"}

// guessKernel pulls `kernel = "..."` out of a record that may not parse,
// for messages.
func guessKernel(b []byte) string {
	i := bytes.Index(b, []byte("\nkernel = \""))
	if i < 0 {
		return ""
	}
	rest := b[i+len("\nkernel = \""):]
	j := bytes.IndexAny(rest, "\"\n")
	if j < 0 || rest[j] != '"' || j > 200 {
		return ""
	}
	return string(rest[:j])
}

// readRegular reads the regular file at path. Anything else (a device, a
// FIFO, a directory, a socket) is a *FileError, found without blocking:
// the file is opened non-blocking and checked before it is read.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read cache: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read cache: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read cache %s: %w", path, err)
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, 4096)
		}
	}
}

// notRegular is the error for a cache path that is not a regular file.
func notRegular(path string, fi fs.FileInfo) error {
	what := "not a regular file"
	switch m := fi.Mode(); {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return &FileError{path: path, msg: fmt.Sprintf("is %s, not a regular file: give --cache a file path (it is created when missing)", what)}
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

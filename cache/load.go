package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"github.com/BurntSushi/toml"
)

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
			p.entries(1, header, doc.Entry, md)
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
		p.damage(n, r.line, guessKernel(r.body), r.text, "it has no checksum line: it was cut short or edited ("+keepEdit+")")
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
	p.entries(r.line, r.text, doc.Entry, md)
}

// entries checks the entries decoded from one piece of the file.
func (p *parser) entries(line int, raw []byte, fes []fileEntry, md toml.MetaData) {
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

package cache

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
)

// A cache file is a header (comments and `version = 1`) followed by one
// record per entry: the entry's `[[entry]]` table (with its
// `[entry.hardware_info]` sub-table), then a comment line holding a CRC-32C
// of the record's bytes:
//
//	[[entry]]
//	kernel = "allreduce"
//	...
//	# crc32c=1a2b3c4d
//
// Like SQLite's and etcd's checksummed log records, this lets a reader tell
// a whole entry from one cut short or damaged, at any byte: a record is
// taken only when its checksum line is whole and matches. The line is a
// TOML comment, so the file stays plain TOML that older readers accept.
// Files written before checksums (no checksumMarker line in the header)
// still load; their entries are checked field by field only.

// checksumMarker is the header line of files whose every record carries a
// checksum: in them, a record without one was cut short or edited.
const checksumMarker = "# every [[entry]] ends with a crc32c line over its text: a cut or damaged entry is found and set aside"

const sumPrefix = "# crc32c="

// keepEdit says how to keep a hand edit of a checksummed file: without the
// header's marker, records without a checksum line are read field by field.
const keepEdit = "to keep a hand edit, delete the edited entry's `" + sumPrefix + "` line and the header line `" + checksumMarker + "`"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sumLine is the checksum line that ends record text rec.
func sumLine(rec []byte) string {
	return fmt.Sprintf("%s%08x\n", sumPrefix, crc32.Checksum(rec, castagnoli))
}

// record is one piece of a split file.
type record struct {
	text []byte // the whole piece, for setting it aside when damaged
	body []byte // the TOML of the entry: text up to its checksum line
	line int    // 1-based line of text's first byte in the file
	// sum: the checksum line was found (then sumOK says whether it
	// matched, and sumErr why not).
	sum    bool
	sumOK  bool
	sumErr string
	// stray is text after a checksum line that belongs to no entry (a
	// file cut inside the next record's `[[entry]]` line).
	stray bool
}

// splitRecords cuts data into the header and the records. A record starts
// at a line that is `[[entry]]` (spaces and a trailing comment allowed) and
// ends at its checksum line, or where the next record starts. Text after
// a checksum line that is not blank or a comment becomes a stray record.
func splitRecords(data []byte) (header []byte, recs []record) {
	var starts []int // byte offsets of record starts
	lineAt := []int{}
	line := 1
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		if isEntryHeader(data[off:next]) {
			starts = append(starts, off)
			lineAt = append(lineAt, line)
		}
		line++
		off = next
	}
	header = data
	if len(starts) > 0 {
		header = data[:starts[0]]
	}
	if h, tail, ok := cutAfterVersion(header); ok && !blankOrComments(tail) {
		// A checksummed file's header ends at its version line: text
		// after it is a damaged record (the first one's `[[entry]]`
		// line cut or changed), not a header that cannot be read.
		header = h
		recs = append(recs, record{text: tail, body: tail, line: 1 + bytes.Count(h, []byte("\n")), stray: true})
	}
	for i, s := range starts {
		e := len(data)
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		recs = append(recs, splitSum(data[s:e], lineAt[i])...)
	}
	return header, recs
}

// splitSum finds the checksum line of one record's text and checks it.
func splitSum(text []byte, line int) []record {
	r := record{text: text, body: text, line: line}
	i := bytes.Index(text, []byte("\n"+sumPrefix))
	if i < 0 {
		return []record{r}
	}
	r.sum = true
	r.body = text[:i+1]
	rest := text[i+1+len(sumPrefix):]
	eol := bytes.IndexByte(rest, '\n')
	if eol < 0 {
		eol = len(rest)
	}
	hex := bytes.TrimRight(rest[:eol], "\r")
	want, err := strconv.ParseUint(string(hex), 16, 32)
	switch {
	case len(hex) != 8 || err != nil:
		r.sumErr = fmt.Sprintf("its checksum line %q is malformed (cut short?)", sumPrefix+string(hex))
	case uint32(want) != crc32.Checksum(r.body, castagnoli):
		r.sumErr = "its text does not match its checksum: it was damaged or edited after it was written (" + keepEdit + ")"
	default:
		r.sumOK = true
	}
	after := i + 1 + len(sumPrefix) + eol
	if after < len(text) {
		after++ // the newline
	}
	r.text = text[:after]
	out := []record{r}
	if tail := text[after:]; !blankOrComments(tail) {
		out = append(out, record{text: tail, body: tail, line: line + bytes.Count(text[:after], []byte("\n")), stray: true})
	}
	return out
}

// isEntryHeader reports whether a line is the header of an array-of-tables
// element named entry: `[[entry]]`, spaces and a comment allowed.
func isEntryHeader(l []byte) bool {
	l = bytes.TrimSpace(l)
	if !bytes.HasPrefix(l, []byte("[[")) {
		return false
	}
	if i := bytes.IndexByte(l, '#'); i >= 0 {
		l = bytes.TrimSpace(l[:i])
	}
	if !bytes.HasSuffix(l, []byte("]]")) {
		return false
	}
	return string(bytes.TrimSpace(l[2:len(l)-2])) == "entry"
}

// blankOrComments reports whether b holds only blank and comment lines.
func blankOrComments(b []byte) bool {
	for len(b) > 0 {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

// hasMarker reports whether the header says every record is checksummed.
func hasMarker(header []byte) bool {
	for len(header) > 0 {
		l := header
		if i := bytes.IndexByte(header, '\n'); i >= 0 {
			l, header = header[:i], header[i+1:]
		} else {
			header = nil
		}
		if string(bytes.TrimRight(l, "\r")) == checksumMarker {
			return true
		}
	}
	return false
}

// Damage is an entry that could not be loaded, or text that belongs to no
// whole entry: it was left out of the store. Raw is its text as stored,
// so that a writer can set it aside instead of losing it.
type Damage struct {
	Location string // the file, or the server and key
	Line     int    // 0: unknown
	Entry    int    // the entry's number in the file, from 1; 0: none
	Kernel   string // as far as it could be read
	Reason   string
	Raw      []byte
}

// Error describes the damage on one line.
func (d Damage) Error() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "cache %s: ", d.Location)
	if d.Line > 0 {
		// The line first, as a TOML error names it; then which entry.
		fmt.Fprintf(&b, "line %d: %s", d.Line, d.Reason)
		if d.Entry > 0 {
			fmt.Fprintf(&b, " ([[entry]] #%d%s)", d.Entry, kernelNote(d.Kernel))
		}
		return b.String()
	}
	if d.Entry > 0 {
		fmt.Fprintf(&b, "[[entry]] #%d%s: ", d.Entry, kernelNote(d.Kernel))
	}
	b.WriteString(d.Reason)
	return b.String()
}

// cutAfterVersion splits a checksummed file's header after its
// `version = ` line; ok is false for other headers.
func cutAfterVersion(header []byte) (h, tail []byte, ok bool) {
	if !hasMarker(header) {
		return header, nil, false
	}
	for off := 0; off < len(header); {
		next := len(header)
		if i := bytes.IndexByte(header[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		l := bytes.TrimSpace(header[off:next])
		if bytes.HasPrefix(l, []byte("version")) && bytes.HasPrefix(bytes.TrimSpace(l[len("version"):]), []byte("=")) && next <= len(header) && header[next-1] == '\n' {
			return header[:next], header[next:], true
		}
		off = next
	}
	return header, nil, false
}

package cache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// sweepFile writes three entries (cpu and gpu fingerprints, odd strings)
// through PutAll and returns the file, the entries in file order, and the
// byte offset where each entry's record becomes whole (its checksum line
// complete).
func sweepFile(t *testing.T) ([]byte, []Entry, []int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "configs.toml")
	es := []Entry{
		entry(1024),
		entry(4096, func(e *Entry) {
			e.Backend, e.HardwareInfo, e.Hardware = "cuda", gpuHW(), gpuHW().ID()
			e.Config["name"] = space.Str(`quo"te ✓ [[entry]]`)
		}),
		entry(1<<20, func(e *Entry) { e.MedianUS, e.Trials = 1e-3, 7 }),
	}
	if err := PutAll(path, es); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, path)
	order := s.Entries()
	var ends []int
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte("\n"+sumPrefix))
		if i < 0 {
			break
		}
		end := off + i + 1 + len(sumPrefix) + 8
		ends = append(ends, end)
		off = end
	}
	if len(ends) != len(order) {
		t.Fatalf("%d checksum lines for %d entries", len(ends), len(order))
	}
	return data, order, ends
}

// A file cut at any byte offset loads every whole entry exactly, and
// names the damage of the one cut short; or, cut inside its header, fails
// naming the file. Issue 55: a 3-entry cache loaded 92 cuts with a damaged
// entry whose fields had defaulted to 0.
func TestTruncationSweep(t *testing.T) {
	data, order, ends := sweepFile(t)
	first := bytes.Index(data, []byte("\n[[entry]]")) + 1
	const path = "cut.toml"
	for off := 0; off <= len(data); off++ {
		es, damaged, err := parse(path, data[:off])
		if err != nil {
			var fe *FileError
			if off >= first || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "cache "+path+": ") {
				t.Fatalf("cut at %d of %d: %v", off, len(data), err)
			}
			continue
		}
		whole := 0
		for whole < len(ends) && ends[whole] <= off {
			whole++
		}
		// Records are written in the store's order.
		if len(es) != whole {
			t.Fatalf("cut at %d: %d entries loaded, want the %d whole ones; damaged: %v", off, len(es), whole, damaged)
		}
		entriesEqual(t, es, order[:whole])
		tail := data[:off]
		if whole > 0 {
			tail = tail[ends[whole-1]:]
		} else {
			tail = tail[min(first, off):]
		}
		if blankOrComments(tail) != (len(damaged) == 0) {
			t.Fatalf("cut at %d: tail %q, damaged %v", off, tail, damaged)
		}
		for _, d := range damaged {
			if !strings.HasPrefix(d.Error(), "cache "+path+": line ") {
				t.Fatalf("cut at %d: damage does not name its line: %v", off, d)
			}
		}
	}
}

// A byte changed inside an entry's record fails its checksum: that entry
// is reported and left out, and the others load exactly.
func TestFlippedByteSweep(t *testing.T) {
	data, order, ends := sweepFile(t)
	for i, end := range ends {
		rec := bytes.LastIndex(data[:end], []byte("\n[[entry]]")) + 1
		for off := rec; off < end-len(sumPrefix)-9; off++ {
			bad := bytes.Clone(data)
			bad[off] ^= 0x20
			es, damaged, err := parse("flip.toml", bad)
			if err != nil {
				t.Fatalf("flip at %d: %v", off, err)
			}
			if len(damaged) == 0 {
				t.Fatalf("flip at %d (%q): no damage reported", off, data[off])
			}
			sortEntries(es)
			var want []Entry
			for j, e := range order {
				if j != i {
					want = append(want, e)
				}
			}
			entriesEqual(t, es, want)
		}
	}
}

// A hand edit of a checksummed file is damage until its checksum line and
// the header's marker are deleted, as the message says; then the file
// loads as an older one, the edit included.
func TestHandEdit(t *testing.T) {
	data, order, _ := sweepFile(t)
	edited := bytes.Replace(data, []byte("median_us = 812.4"), []byte("median_us = 700.5"), 1)
	es, damaged, err := parse("c.toml", edited)
	if err != nil || len(es) != len(order)-1 || len(damaged) != 1 || !strings.Contains(damaged[0].Error(), "delete the edited entry's") {
		t.Fatalf("edited: %v, %d entries, damage %v", err, len(es), damaged)
	}
	i := bytes.Index(edited, []byte("median_us = 700.5"))
	j := i + bytes.Index(edited[i:], []byte(sumPrefix))
	k := j + bytes.IndexByte(edited[j:], '\n') + 1
	kept := append(bytes.Clone(edited[:j]), edited[k:]...)
	kept = bytes.Replace(kept, []byte(checksumMarker+"\n"), nil, 1)
	es, damaged, err = parse("c.toml", kept)
	if err != nil || len(es) != len(order) || len(damaged) != 0 {
		t.Fatalf("edit kept: %v, %d entries, damage %v", err, len(es), damaged)
	}
	found := false
	for _, e := range es {
		found = found || e.MedianUS == 700.5
	}
	if !found {
		t.Error("the edited value did not load")
	}
}

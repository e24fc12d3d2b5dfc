package cache

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The better-entry rule lives here, once: every store (the file, Redis) and
// `symmtune cache merge` decide with Merge which entry a slot keeps.
//
// A slot is a key without its kernel version: kernel, backend, hardware
// fingerprint, world size, dtype and shape. Per slot:
//
//  1. The newest kernel version wins: the version of the entry tuned last
//     (latest TunedAt; equal times: the greater version string). Entries of
//     other versions are superseded: a kernel whose source changed must be
//     tuned again.
//  2. Among the entries of that version the lowest median wins (equal
//     medians: the later TunedAt, then the smaller canonical encoding).
//
// Merge is a function of the set of entries it is given: the order of the
// sources and of the entries in them does not matter, and merging its
// result again with any of its inputs changes nothing. Merging one source
// at a time (what concurrent writers do) gives the same result whenever
// the kernel versions of a slot were tuned one after the other, not
// interleaved in time; see docs/fleet.md.

// Source is a named list of entries to merge: a cache, or new results.
type Source struct {
	Name    string // for the report: a file, a redacted URL, "search"
	Entries []Entry
	// Reject, when set, is asked by a Storage's Put about each entry it
	// holds in the slots of Entries: one it rejects (a config outside the
	// space of the plugin that wrote Entries, at the same kernel version)
	// is set aside like a damaged entry instead of merged, so that it
	// cannot keep a real winner out. Merge itself ignores it.
	Reject func(stored Entry) error
}

// Merged is the outcome of Merge: the entries kept, one per slot, and an
// account of every entry that was not kept, so that nothing disappears
// unreported.
type Merged struct {
	Entries []Entry // sorted like Store.Entries
	// Conflicts are entries of the winning kernel version with another
	// config than the winner's: two tunings disagreed.
	Conflicts []Dropped
	// Superseded are entries of an older kernel version of a slot.
	Superseded []Dropped
	// Remeasured are entries with the winner's version and config but
	// other measurements (a slower or an equal median).
	Remeasured []Dropped
	// Duplicates counts input entries identical to another input entry.
	Duplicates int
	// SetAside is the damage the store held (entries it could not load),
	// moved by this write to SetAsideTo so that it no longer stands in the
	// way and nothing is lost.
	SetAside   []Damage
	SetAsideTo string
}

// Dropped is an input entry that lost, and the entry that beat it.
type Dropped struct {
	Entry   Entry
	Sources []string // every source that held it, sorted
	Winner  Entry
	WonFrom []string // the sources that held the winner, sorted
}

// String describes the drop on one line.
func (d Dropped) String() string {
	return fmt.Sprintf("%s: kept %s %.1f µs (tuned %s, from %s) over %s %.1f µs (tuned %s, from %s)",
		d.Winner.Key.Slot().AnyVersion(), versioned(d.Winner), d.Winner.MedianUS, d.Winner.TunedAt.Format("2006-01-02 15:04:05"),
		strings.Join(d.WonFrom, ", "), versioned(d.Entry), d.Entry.MedianUS, d.Entry.TunedAt.Format("2006-01-02 15:04:05"),
		strings.Join(d.Sources, ", "))
}

func versioned(e Entry) string {
	if e.KernelVersion == "" {
		return e.Config.String()
	}
	return e.Config.String() + " @" + e.KernelVersion
}

// candidate is one distinct input entry of a slot.
type candidate struct {
	e       Entry
	enc     []byte // canonical encoding; equal encodings are the same entry
	sources []string
}

// newer orders entries by recency for rule 1: >0 when a is newer.
func newer(a, b *candidate) int {
	return cmp.Or(a.e.TunedAt.Compare(b.e.TunedAt), cmp.Compare(a.e.KernelVersion, b.e.KernelVersion))
}

// faster orders entries of one version for rule 2: <0 when a is better.
// It is total on distinct entries, which makes the choice independent of
// the input order.
func faster(a, b *candidate) int {
	return cmp.Or(cmp.Compare(a.e.MedianUS, b.e.MedianUS), b.e.TunedAt.Compare(a.e.TunedAt), bytes.Compare(a.enc, b.enc))
}

// Merge combines the sources by the better-entry rule above. It fails only
// on an entry that is not valid (see Put), naming its source.
func Merge(sources ...Source) (Merged, error) {
	slots := map[Slot][]*candidate{}
	byEnc := map[string]*candidate{}
	var out Merged
	for _, src := range sources {
		for _, raw := range src.Entries {
			e, err := check(raw)
			if err != nil {
				return Merged{}, fmt.Errorf("%s: entry %s: %w", src.Name, raw.Key, err)
			}
			enc, err := EncodeEntry(e)
			if err != nil {
				return Merged{}, fmt.Errorf("%s: entry %s: %w", src.Name, e.Key, err)
			}
			if c, ok := byEnc[string(enc)]; ok {
				out.Duplicates++
				if !slices.Contains(c.sources, src.Name) {
					c.sources = append(c.sources, src.Name)
				}
				continue
			}
			c := &candidate{e: e, enc: enc, sources: []string{src.Name}}
			byEnc[string(enc)] = c
			id := e.Key.Slot().AnyVersion()
			slots[id] = append(slots[id], c)
		}
	}
	for _, cs := range slots {
		newest := slices.MaxFunc(cs, newer)
		var same []*candidate
		for _, c := range cs {
			if c.e.KernelVersion == newest.e.KernelVersion {
				same = append(same, c)
			}
		}
		win := slices.MinFunc(same, faster)
		out.Entries = append(out.Entries, win.e)
		slices.Sort(win.sources)
		for _, c := range cs {
			if c == win {
				continue
			}
			slices.Sort(c.sources)
			d := Dropped{Entry: c.e, Sources: c.sources, Winner: win.e, WonFrom: win.sources}
			switch {
			case c.e.KernelVersion != win.e.KernelVersion:
				out.Superseded = append(out.Superseded, d)
			case !c.e.Config.Equal(win.e.Config):
				out.Conflicts = append(out.Conflicts, d)
			default:
				out.Remeasured = append(out.Remeasured, d)
			}
		}
	}
	sortEntries(out.Entries)
	for _, ds := range [][]Dropped{out.Conflicts, out.Superseded, out.Remeasured} {
		slices.SortFunc(ds, func(a, b Dropped) int {
			return cmp.Or(a.Entry.Key.Slot().Compare(b.Entry.Key.Slot()), cmp.Compare(a.Entry.MedianUS, b.Entry.MedianUS),
				a.Entry.TunedAt.Compare(b.Entry.TunedAt), cmp.Compare(a.Entry.Config.String(), b.Entry.Config.String()))
		})
	}
	return out, nil
}

// EncodeEntry is the canonical encoding of one entry: a cache file holding
// only e (TOML, with the format version). Stores that keep entries one by
// one (Redis) keep this text, so every reader parses them like a file.
func EncodeEntry(e Entry) ([]byte, error) {
	c, err := check(e)
	if err != nil {
		return nil, err
	}
	return encode([]Entry{c})
}

// DecodeEntry parses what EncodeEntry wrote; where names it in errors (a
// *FileError, like a broken file).
func DecodeEntry(where string, data []byte) (Entry, error) {
	es, damaged, err := parse(where, data)
	if err != nil {
		return Entry{}, err
	}
	if len(damaged) > 0 {
		return Entry{}, damaged[0]
	}
	if len(es) != 1 {
		return Entry{}, &FileError{path: where, msg: fmt.Sprintf("holds %d entries, want 1", len(es))}
	}
	return es[0], nil
}

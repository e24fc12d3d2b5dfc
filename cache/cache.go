// Package cache owns the tuned-config store and its lookup API: the way
// programs consume tuned configs at run time.
//
// The store is one TOML file (DefaultPath) holding one winner per slot:
// (kernel, backend, hardware fingerprint ID, world size, dtype, shape). The
// winner's Key adds its kernel version. `symmtune search` writes the file
// with Put/PutAll. They lock it, merge the new entries with what it holds,
// and replace it atomically. Concurrent writers never lose each other's
// entries, and readers never see a half-written file. Each slot keeps the
// better entry by Merge's rule: the newest kernel version, then the lowest
// median. A slower re-tuning of the same version leaves the faster entry in
// place. Programs read it with Load and pick a
// config with Store.Lookup, which falls back to the nearest tuned shape
// when the exact one was never tuned.
package cache

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
)

// Key identifies one tuned winner. The store holds one entry per slot, a
// key without its kernel version. Of two entries for one slot it keeps the
// better one by Merge's rule, not the later one.
type Key struct {
	Kernel        string
	KernelVersion string
	Backend       string
	Hardware      string // hardware.Fingerprint.ID()
	World         int
	Dtype         string
	Shape         space.Shape
}

// Slot is the comparable identity of a Key: every field, the shape in
// its canonical text. Two keys are Equal exactly when their slots are ==,
// so a Slot is the map key wherever keys are collected. With the kernel
// version left out (AnyVersion) it is the place in the store that holds
// one entry, the better one by Merge's rule.
type Slot struct {
	Kernel        string
	KernelVersion string
	Backend       string
	Hardware      string
	World         int
	Dtype         string
	Shape         string // space.Shape.String()
}

// Slot returns the key's comparable identity.
func (k Key) Slot() Slot {
	return Slot{Kernel: k.Kernel, KernelVersion: k.KernelVersion, Backend: k.Backend, Hardware: k.Hardware,
		World: k.World, Dtype: k.Dtype, Shape: k.Shape.String()}
}

// AnyVersion is s without its kernel version: the store's place for one
// entry of whatever version.
func (s Slot) AnyVersion() Slot {
	s.KernelVersion = ""
	return s
}

// String is the canonical text form,
// "kernel@version/backend/hardware/w<world>/dtype/shape", e.g.
// "allreduce@3f2a9c1e/cpu/cpu/AMD EPYC 7B13/2c/w4/f32/n=1048576". The
// "@version" part is left out when the version is empty. It is meant for
// messages and ordering; it is not injective (a field may hold a '/').
func (s Slot) String() string {
	var b strings.Builder
	b.WriteString(s.Kernel)
	if s.KernelVersion != "" {
		b.WriteByte('@')
		b.WriteString(s.KernelVersion)
	}
	b.WriteByte('/')
	b.WriteString(s.Backend)
	b.WriteByte('/')
	b.WriteString(s.Hardware)
	b.WriteString("/w")
	b.WriteString(strconv.Itoa(s.World))
	b.WriteByte('/')
	b.WriteString(s.Dtype)
	b.WriteByte('/')
	b.WriteString(s.Shape)
	return b.String()
}

// Ident is an injective text form of the slot, for stores keyed by text
// (Redis keeps each slot under its AnyVersion().Ident()).
func (s Slot) Ident() string {
	return strconv.Quote(s.Kernel) + " " + strconv.Quote(s.KernelVersion) + " " +
		strconv.Quote(s.Backend) + " " + strconv.Quote(s.Hardware) + " " +
		strconv.Itoa(s.World) + " " + strconv.Quote(s.Dtype) + " " + strconv.Quote(s.Shape)
}

// Compare orders slots by kernel, backend, hardware, world, dtype, shape
// and finally kernel version; it is 0 only for equal slots.
func (s Slot) Compare(o Slot) int {
	return cmp.Or(
		cmp.Compare(s.Kernel, o.Kernel),
		cmp.Compare(s.Backend, o.Backend),
		cmp.Compare(s.Hardware, o.Hardware),
		cmp.Compare(s.World, o.World),
		cmp.Compare(s.Dtype, o.Dtype),
		cmp.Compare(s.Shape, o.Shape),
		cmp.Compare(s.KernelVersion, o.KernelVersion),
	)
}

// String is the key's slot as text (Slot.String); compare keys with Equal.
func (k Key) String() string { return k.Slot().String() }

// Equal reports whether two keys name the same slot and version: every
// field equal, shapes compared by dimension names and sizes.
func (k Key) Equal(o Key) bool { return k.Slot() == o.Slot() }

// Entry is one tuned winner with its measurements.
type Entry struct {
	Key
	HardwareInfo    hardware.Fingerprint // the full fingerprint whose ID is Key.Hardware
	Config          space.Config
	MedianUS        float64 // median time of the winner, microseconds
	MinUS           float64
	P90US           float64
	DefaultMedianUS float64 // median of the kernel's default config; 0 when it was not measurable
	Trials          int
	TunedAt         time.Time
}

// Store is a loaded cache file. It is read-only; write with Put/PutAll and
// Load again to see the result.
type Store struct {
	path    string
	entries []Entry // sorted, keys unique
	damaged []Damage
}

// Damaged lists what Load left out: entries that are damaged, cut short or
// invalid, each naming where it is and what is wrong. Callers report them
// (the CLI on stderr); writers set them aside.
func (s *Store) Damaged() []Damage {
	if s == nil {
		return nil
	}
	return slices.Clone(s.damaged)
}

// WithDamage is s with more damage listed: what a Storage found besides
// the entries it handed to NewStore (one bad key of a server).
func (s *Store) WithDamage(d ...Damage) *Store {
	c := *s
	c.damaged = append(slices.Clone(s.damaged), d...)
	return &c
}

// NewStore is a store of es read from location (a file, a server): what a
// cache.Storage returns from Load. The entries are checked like a file's,
// and two with an Equal key are an error.
func NewStore(location string, es []Entry) (*Store, error) {
	out := make([]Entry, 0, len(es))
	seen := make(map[Slot]bool, len(es))
	for _, e := range es {
		c, err := check(e)
		if err != nil {
			return nil, &FileError{path: location, msg: fmt.Sprintf("entry %s: %v", e.Key, err)}
		}
		id := c.Key.Slot()
		if seen[id] {
			return nil, &FileError{path: location, msg: fmt.Sprintf("two entries with the key %s", c.Key)}
		}
		seen[id] = true
		out = append(out, c)
	}
	sortEntries(out)
	return &Store{path: location, entries: out}, nil
}

// Path is the file the store was loaded from.
func (s *Store) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

// Entries returns a copy of the entries, sorted by kernel, backend,
// hardware, world, dtype, shape (then kernel version).
func (s *Store) Entries() []Entry {
	if s == nil {
		return nil
	}
	out := make([]Entry, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.clone()
	}
	return out
}

func (e Entry) clone() Entry {
	c := e
	if e.Shape != nil {
		c.Shape = make(space.Shape, len(e.Shape))
		for k, v := range e.Shape {
			c.Shape[k] = v
		}
	}
	if e.Config != nil {
		c.Config = e.Config.Clone()
	}
	return c
}

func sortEntries(es []Entry) {
	slots := make([]Slot, len(es))
	for i := range es {
		slots[i] = es[i].Key.Slot()
	}
	sortBySlot(es, slots)
}

// sortBySlot sorts es, whose distinct slots are given, without building a
// slot per comparison (a shape's text each time: most of a large load's
// time) or copying the entries.
func sortBySlot(es []Entry, slots []Slot) { sort.Sort(bySlot{es, slots}) }

type bySlot struct {
	es    []Entry
	slots []Slot
}

func (b bySlot) Len() int           { return len(b.es) }
func (b bySlot) Less(i, j int) bool { return b.slots[i].Compare(b.slots[j]) < 0 }
func (b bySlot) Swap(i, j int) {
	b.es[i], b.es[j] = b.es[j], b.es[i]
	b.slots[i], b.slots[j] = b.slots[j], b.slots[i]
}

// DefaultPath is where the cache lives: $SYMMTUNE_CACHE when set (a file,
// or a redis:// URL that package cache/storage opens), else
// DefaultFilePath.
func DefaultPath() string { return DefaultPathEnv(os.Getenv) }

// DefaultPathEnv is DefaultPath with the environment read through getenv:
// for a caller whose environment is not this process's as Go saw it at
// start (libsymmtune in a Python process that set variables since).
func DefaultPathEnv(getenv func(string) string) string {
	if p := getenv("SYMMTUNE_CACHE"); p != "" {
		return p
	}
	return defaultFilePath(getenv)
}

// DefaultFilePath is the cache file of this user, whatever SYMMTUNE_CACHE
// says: $XDG_CACHE_HOME/symmtune/configs.toml (when that is an absolute
// path), else ~/.cache/symmtune/configs.toml. Without a home directory it
// falls back to the system temp directory.
func DefaultFilePath() string { return defaultFilePath(os.Getenv) }

func defaultFilePath(getenv func(string) string) string {
	if x := getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "symmtune", "configs.toml")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache", "symmtune", "configs.toml")
	}
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "symmtune", "configs.toml")
}

// maxCount bounds world and trials, so they fit an int everywhere.
const maxCount = 1 << 30

// check validates e and returns it normalized the way Load returns entries:
// TunedAt in UTC, non-nil Shape and Config maps owned by the result,
// integer values without stray string parts.
func check(e Entry) (Entry, error) { return checkOwned(e.clone()) }

// checkOwned is check on an entry whose maps the caller owns.
func checkOwned(e Entry) (Entry, error) {
	if e.Kernel == "" {
		return e, fmt.Errorf("kernel is missing")
	}
	for _, f := range []struct{ name, v string }{
		{"kernel", e.Kernel}, {"kernel_version", e.KernelVersion}, {"backend", e.Backend},
		{"hardware", e.Hardware}, {"dtype", e.Dtype},
	} {
		if !utf8.ValidString(f.v) {
			return e, fmt.Errorf("%s %q is not valid UTF-8", f.name, f.v)
		}
	}
	if e.World < 1 || e.World > maxCount {
		return e, fmt.Errorf("world %d: must be in 1..%d", e.World, maxCount)
	}
	if e.Dtype == "" {
		return e, fmt.Errorf("dtype is missing")
	}
	if len(e.Shape) == 0 {
		return e, fmt.Errorf("shape is missing or empty")
	}
	for name, v := range e.Shape {
		if err := checkName(name); err != nil {
			return e, fmt.Errorf("shape: dimension %w", err)
		}
		if v <= 0 || v > space.MaxDim {
			return e, fmt.Errorf("shape: dimension %q = %d must be in 1..%d", name, v, space.MaxDim)
		}
	}
	if e.Config == nil {
		e.Config = space.Config{}
	}
	for name, v := range e.Config {
		if err := checkName(name); err != nil {
			return e, fmt.Errorf("config: parameter %w", err)
		}
		if v.IsStr {
			if !utf8.ValidString(v.Str) {
				return e, fmt.Errorf("config: parameter %q: value %q is not valid UTF-8", name, v.Str)
			}
			v.Int = 0
		} else {
			v.Str = ""
		}
		e.Config[name] = v
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"median_us", e.MedianUS}, {"min_us", e.MinUS}, {"p90_us", e.P90US}, {"default_median_us", e.DefaultMedianUS}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return e, fmt.Errorf("%s = %v: must be a finite time >= 0", f.name, f.v)
		}
	}
	if e.Trials < 0 || e.Trials > maxCount {
		return e, fmt.Errorf("trials %d: must be in 0..%d", e.Trials, maxCount)
	}
	if err := e.HardwareInfo.Validate(); err != nil {
		return e, fmt.Errorf("hardware_info: %w", err)
	}
	for _, f := range []struct{ name, v string }{
		{"kind", e.HardwareInfo.Kind}, {"name", e.HardwareInfo.Name}, {"compute", e.HardwareInfo.Compute},
		{"driver", e.HardwareInfo.Driver}, {"interconnect", e.HardwareInfo.Interconnect},
	} {
		if !utf8.ValidString(f.v) {
			return e, fmt.Errorf("hardware_info: %s %q is not valid UTF-8", f.name, f.v)
		}
	}
	if !(e.MedianUS > 0) {
		// No search measures 0 µs: it is a field lost (a cut record), and
		// it would beat every later winner of the slot.
		return e, fmt.Errorf("median_us = %v: must be a time above 0", e.MedianUS)
	}
	if e.TunedAt.IsZero() {
		return e, fmt.Errorf("tuned_at is missing")
	}
	e.TunedAt = e.TunedAt.UTC()
	if y := e.TunedAt.Year(); y < 1 || y > 9999 {
		return e, fmt.Errorf("tuned_at %s: year outside 1..9999", e.TunedAt.Format(time.RFC3339))
	}
	if limit := now().Add(MaxClockSkew); e.TunedAt.After(limit) {
		// A node with a fast clock would otherwise win every later merge
		// of the slot (the newest kernel version wins).
		return e, fmt.Errorf("tuned_at %s is later than now plus the %v allowed for clock skew (a node's clock is wrong?)",
			e.TunedAt.Format(time.RFC3339), MaxClockSkew)
	}
	return e, nil
}

// MaxClockSkew is how far in the future an entry's tuned_at may be: clocks
// of a fleet's nodes disagree by this much at most. A later entry is
// damaged.
const MaxClockSkew = time.Hour

// now is the clock entries are checked against (tests set it).
var now = time.Now

// checkName refuses shape/config names that would make the canonical
// "name=value,..." text ambiguous.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("with an empty name")
	case !utf8.ValidString(name):
		return fmt.Errorf("%q: name is not valid UTF-8", name)
	case strings.ContainsAny(name, ",= \t\r\n"):
		return fmt.Errorf("%q: name contains ',', '=' or whitespace", name)
	}
	return nil
}

package cache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/symmtune/symmtune/space"
)

func TestMergeRule(t *testing.T) {
	cfg := func(tag string) func(*Entry) {
		return func(e *Entry) { e.Config = space.Config{"tag": space.Str(tag)} }
	}
	med := func(us float64) func(*Entry) { return func(e *Entry) { e.MedianUS = us } }
	at := func(h int) func(*Entry) { return func(e *Entry) { e.TunedAt = t0.Add(time.Duration(h) * time.Hour) } }
	ver := func(v string) func(*Entry) { return func(e *Entry) { e.KernelVersion = v } }
	tests := []struct {
		name       string
		a, b       Entry
		wantTag    string
		conflicts  int
		superseded int
		remeasured int
		duplicates int
	}{
		{"lower median wins", entry(64, cfg("slow"), med(20), at(2)), entry(64, cfg("fast"), med(10), at(1)), "fast", 1, 0, 0, 0},
		{"same config, re-measured", entry(64, cfg("x"), med(20), at(2)), entry(64, cfg("y"), med(10), at(1), cfg("x")), "x", 0, 0, 1, 0},
		{"equal medians: later wins", entry(64, cfg("old"), med(10), at(1)), entry(64, cfg("new"), med(10), at(2)), "new", 1, 0, 0, 0},
		{"newer version wins though slower", entry(64, cfg("v1"), med(5), at(1)), entry(64, cfg("v2"), med(50), at(2), ver("v2")), "v2", 0, 1, 0, 0},
		{"older version loses though faster", entry(64, cfg("v2"), med(50), at(3), ver("v2")), entry(64, cfg("v1"), med(5), at(1)), "v2", 0, 1, 0, 0},
		{"same time: greater version string", entry(64, cfg("a"), at(1), ver("a")), entry(64, cfg("b"), at(1), ver("b")), "b", 0, 1, 0, 0},
		{"identical", entry(64, cfg("x")), entry(64, cfg("x")), "x", 0, 0, 0, 1},
		{"other slots both kept", entry(64, cfg("x")), entry(128, cfg("y")), "", 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, order := range [][]Entry{{tt.a, tt.b}, {tt.b, tt.a}} {
				m, err := Merge(Source{Name: "first", Entries: order[:1]}, Source{Name: "second", Entries: order[1:]})
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantTag == "" {
					if len(m.Entries) != 2 {
						t.Fatalf("kept %d entries, want both", len(m.Entries))
					}
					continue
				}
				if len(m.Entries) != 1 || m.Entries[0].Config["tag"].Str != tt.wantTag {
					t.Fatalf("kept %v, want the entry tagged %q", m.Entries, tt.wantTag)
				}
				if len(m.Conflicts) != tt.conflicts || len(m.Superseded) != tt.superseded ||
					len(m.Remeasured) != tt.remeasured || m.Duplicates != tt.duplicates {
					t.Errorf("conflicts %d superseded %d remeasured %d duplicates %d, want %d %d %d %d",
						len(m.Conflicts), len(m.Superseded), len(m.Remeasured), m.Duplicates,
						tt.conflicts, tt.superseded, tt.remeasured, tt.duplicates)
				}
				for _, d := range slices.Concat(m.Conflicts, m.Superseded, m.Remeasured) {
					if d.String() == "" || len(d.Sources) != 1 || len(d.WonFrom) != 1 {
						t.Errorf("drop report %+v: want one source each side", d)
					}
				}
			}
		})
	}
}

func TestMergeRejectsBadEntry(t *testing.T) {
	_, err := Merge(Source{Name: "in.toml", Entries: []Entry{entry(64, func(e *Entry) { e.World = 0 })}})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("in.toml")) {
		t.Fatalf("err = %v, want an error naming the source", err)
	}
}

// randomCaches draws caches over a small domain of slots, versions, times,
// medians and configs, so that equal keys, equal medians, equal times and
// identical entries across caches are all common. With interleaved false,
// every version of a slot is tuned in its own time window after the
// previous version's (how kernels are upgraded in practice).
func randomCaches(r *rand.Rand, interleaved bool) []Source {
	n := 1 + r.IntN(5)
	srcs := make([]Source, n)
	for i := range srcs {
		seen := map[Slot]bool{}
		for range r.IntN(12) {
			v := r.IntN(3)
			hour := r.IntN(4)
			if !interleaved {
				hour += 10 * v
			}
			e := entry(int64(1)<<r.IntN(3), func(e *Entry) {
				e.Kernel = []string{"allreduce", "agmm"}[r.IntN(2)]
				e.World = []int{2, 4}[r.IntN(2)]
				e.KernelVersion = fmt.Sprintf("v%d", v)
				e.TunedAt = t0.Add(time.Duration(hour) * time.Hour)
				e.MedianUS = float64(1 + r.IntN(4))
				e.Config = space.Config{"c": space.Int(int64(r.IntN(3)))}
			})
			if id := e.Key.Slot(); !seen[id] { // a cache holds a key once
				seen[id] = true
				srcs[i].Entries = append(srcs[i].Entries, e)
			}
		}
		srcs[i].Name = fmt.Sprintf("in%d.toml", i)
	}
	return srcs
}

// identity tells apart the entries randomCaches draws (they differ only in
// key, config, median and time) without the cost of encoding them.
func identity(e Entry) string {
	return fmt.Sprintf("%s|%s|%v|%s", e.Key, e.Config, e.MedianUS, e.TunedAt.UTC().Format(time.RFC3339Nano))
}

func encodeAll(t *testing.T, es []Entry) []byte {
	t.Helper()
	b, err := encode(es)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMergeProperties checks Merge over random caches: the result does not
// depend on the order of caches or entries; merging it again, alone or with
// its inputs, changes nothing; every input entry is kept or accounted for
// exactly once; and every kept entry is the rule's winner of its slot.
func TestMergeProperties(t *testing.T) {
	for seed := range uint64(150) {
		r := rand.New(rand.NewPCG(seed, 15))
		srcs := randomCaches(r, true)
		m, err := Merge(srcs...)
		if err != nil {
			t.Fatal(err)
		}
		want := encodeAll(t, m.Entries)

		// Order independence: caches and entries shuffled.
		shuffled := slices.Clone(srcs)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for i := range shuffled {
			es := slices.Clone(shuffled[i].Entries)
			r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
			shuffled[i].Entries = es
		}
		m2, err := Merge(shuffled...)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encodeAll(t, m2.Entries), want) {
			t.Fatalf("seed %d: the order of the caches changed the result", seed)
		}
		if fmt.Sprint(m2.Conflicts, m2.Superseded, m2.Remeasured, m2.Duplicates) != fmt.Sprint(m.Conflicts, m.Superseded, m.Remeasured, m.Duplicates) {
			t.Fatalf("seed %d: the order of the caches changed the report", seed)
		}

		// Idempotence.
		for _, again := range [][]Source{{{Name: "out", Entries: m.Entries}}, append([]Source{{Name: "out", Entries: m.Entries}}, srcs...)} {
			m3, err := Merge(again...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encodeAll(t, m3.Entries), want) {
				t.Fatalf("seed %d: merging the result again changed it", seed)
			}
		}

		// Nothing lost: each distinct input entry is kept or dropped once,
		// with a reason; every slot of the input has its entry.
		total, distinct := 0, map[string]bool{}
		for _, s := range srcs {
			for _, e := range s.Entries {
				total++
				distinct[identity(e)] = true
			}
		}
		accounted := map[string]int{}
		for _, e := range m.Entries {
			accounted[identity(e)]++
		}
		for _, d := range slices.Concat(m.Conflicts, m.Superseded, m.Remeasured) {
			accounted[identity(d.Entry)]++
		}
		if len(accounted) != len(distinct) || total-len(distinct) != m.Duplicates {
			t.Fatalf("seed %d: %d distinct inputs (%d duplicates), %d accounted for (%d duplicates reported)",
				seed, len(distinct), total-len(distinct), len(accounted), m.Duplicates)
		}
		for id, n := range accounted {
			if n != 1 || !distinct[id] {
				t.Fatalf("seed %d: entry accounted for %d times (in the input: %v): %s", seed, n, distinct[id], id)
			}
		}

		// The rule: per slot, no entry of another version is newer than
		// the newest of the winner's version, none of its version faster.
		for _, w := range m.Entries {
			newestOfW := time.Time{}
			for _, s := range srcs {
				for _, e := range s.Entries {
					if e.Key.Slot().AnyVersion() == w.Key.Slot().AnyVersion() && e.KernelVersion == w.KernelVersion && e.TunedAt.After(newestOfW) {
						newestOfW = e.TunedAt
					}
				}
			}
			for _, s := range srcs {
				for _, e := range s.Entries {
					if e.Key.Slot().AnyVersion() != w.Key.Slot().AnyVersion() {
						continue
					}
					if e.KernelVersion != w.KernelVersion && (e.TunedAt.After(newestOfW) || (e.TunedAt.Equal(newestOfW) && e.KernelVersion > w.KernelVersion)) {
						t.Fatalf("seed %d: %s kept version %s over the newer %s", seed, w.Key, w.KernelVersion, e.KernelVersion)
					}
					if e.KernelVersion == w.KernelVersion && e.MedianUS < w.MedianUS {
						t.Fatalf("seed %d: %s kept %v µs over %v µs", seed, w.Key, w.MedianUS, e.MedianUS)
					}
				}
			}
		}
	}
}

// TestPutOneAtATime checks that writers putting caches one by one, in any
// order (what concurrent searches do), end where one merge of them all
// does, when each slot's kernel versions were tuned one after the other.
func TestPutOneAtATime(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 16))
		srcs := randomCaches(r, false)
		m, err := Merge(srcs...)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "configs.toml")
		for _, i := range r.Perm(len(srcs)) {
			if err := PutAll(path, srcs[i].Entries); err != nil {
				t.Fatal(err)
			}
		}
		if got := mustLoad(t, path).Entries(); !bytes.Equal(encodeAll(t, got), encodeAll(t, m.Entries)) {
			t.Fatalf("seed %d: putting the caches one by one gave\n%s\nwant\n%s", seed, encodeAll(t, got), encodeAll(t, m.Entries))
		}
	}
}

package libops

import (
	"os"
	"strconv"
)

// The environment a program sets to raise (or lower) the bounds on the
// GEMM units kept open (runtime.go), read at each GEMM op's open: a
// program that warms up more row counts than the defaults keep before it
// captures them needs more (docs/pytorch.md, "Serving programs").
const (
	UnitsEnv   = "SYMMTUNE_RUNTIME_UNITS"
	UnitMiBEnv = "SYMMTUNE_RUNTIME_UNIT_MIB"
)

// maxEvictedRemembered bounds each op's record of evicted row counts.
const maxEvictedRemembered = 4096

// unitBoundsFromEnv sets maxUnits and maxUnitBytes from $SYMMTUNE_RUNTIME_UNITS
// and $SYMMTUNE_RUNTIME_UNIT_MIB (the defaults where unset); a value that is
// not a positive integer is refused, naming the variable.
func unitBoundsFromEnv() error {
	units, err := positiveEnv(UnitsEnv, defaultMaxUnits)
	if err != nil {
		return err
	}
	mib, err := positiveEnv(UnitMiBEnv, defaultMaxUnitMiB)
	if err != nil {
		return err
	}
	maxUnits, maxUnitBytes = units, int64(mib)<<20
	return nil
}

func positiveEnv(name string, def int) (int, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > 1<<30 {
		return 0, bad("$%s=%q: want a positive integer (default %d)", name, s, def)
	}
	return v, nil
}

// unitLRU is every open GEMM unit of every handle, least recently used
// first, with their count and bytes: a first call at a new row count
// evicts from its front in constant time. Scanning every handle's units
// for the oldest cost a first call about 4 µs at 64 units (fake device,
// 2-core VM), most of what eviction cost it on the GPU.
type unitLRU struct {
	front, back *gemmUnit
	count       int
	bytes       int64
}

// lru holds the live handles' GEMM units, under runtimeMu.
var lru unitLRU

// push adds u as the most recently used.
func (l *unitLRU) push(u *gemmUnit) {
	u.older, u.newer = l.back, nil
	if l.back != nil {
		l.back.newer = u
	} else {
		l.front = u
	}
	l.back = u
	l.count++
	l.bytes += u.bytes
}

// remove takes u out of the list.
func (l *unitLRU) remove(u *gemmUnit) {
	if u.older != nil {
		u.older.newer = u.newer
	} else if l.front == u {
		l.front = u.newer
	}
	if u.newer != nil {
		u.newer.older = u.older
	} else if l.back == u {
		l.back = u.older
	}
	u.older, u.newer = nil, nil
	l.count--
	l.bytes -= u.bytes
}

// touch makes u the most recently used.
func (l *unitLRU) touch(u *gemmUnit) {
	if l.back == u {
		return
	}
	l.remove(u)
	l.push(u)
}

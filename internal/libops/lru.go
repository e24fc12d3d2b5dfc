package libops

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

//go:build cuda

package libops

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/space"
)

// TestGemmFirstCallPhases splits a first call at a new row count (Go
// alone, world 1, the GPU idle before each step) into its phases: the
// problem and config checks, the runner's open, its plans, the first
// launch, the eviction of the least recently used unit; beside them a
// plain launch of an open unit at new operand addresses and a graph
// replay. A measurement, not a check (it fails only on errors): it runs
// when SYMMTUNE_FIRST_CALLS names how many row counts to time.
func TestGemmFirstCallPhases(t *testing.T) {
	calls := firstCallsWanted(t)
	for _, c := range firstCallBuckets {
		t.Run(c.kernel, func(t *testing.T) { firstCallPhases(t, c.kernel, c.n, c.k, c.top, c.lo, calls) })
	}
}

func firstCallPhases(t *testing.T, kernel string, n, k, top, lo, calls int) {
	b := openBucket(t, kernel, n, k, top)
	op := runners[b.h].gemm
	c := op.dev.(*cudaOp)
	phases := map[string][]time.Duration{}
	timed := func(name string, f func() error) {
		if err := cu.Synchronize(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := f()
		phases[name] = append(phases[name], time.Since(start))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	span := top - lo
	stream := uint64(0)
	err := b.r.do(t, "phases", func() error {
		for i := range calls {
			m := lo + 1 + (i*7919)%span
			if op.units[m] != nil {
				continue
			}
			// The steps of cudaOp.open, one by one, on a runner of the
			// test's own (closed at once).
			var p gpu.Problem
			timed("1 parse+validate", func() error {
				var err error
				p, err = gpu.ParseProblem(space.Problem{Dtype: c.o.dtype, Shape: space.Shape{"m": int64(m), "n": int64(n), "k": int64(k)}}, 1)
				if err == nil {
					err = c.o.kernel.Validate(c.o.cfg, p)
				}
				return err
			})
			var r *gpu.Runner
			timed("2 NewRunnerOn", func() (err error) { r, err = gpu.NewRunnerOn(c.eng, c.o.kernel, c.peers, p, c.o.dtype); return err })
			timed("3 Algos (plans)", func() error { _, err := r.Algos(c.o.cfg); return err })
			timed("4 Prepare", func() error { return r.Prepare(c.o.cfg) })
			timed("5 runner Close", r.Close)
			// The runtime's own first call, in its steps.
			var u *gemmUnit
			timed("6 openUnit (all of 1-4)", func() (err error) { u, _, err = openUnit(op, m); return err })
			ptrs := gemmPtrs{a: uint64(b.ops[0]), b: uint64(b.ops[1]), c: uint64(b.ops[2])}
			timed("7 first launch (plain)", func() error { return u.r.enqueue(stream, ptrs, false) })
			timed("8 evict", func() error { evict(u); return nil })
			moved := ptrs
			moved.c += 256 // new operand addresses: a plain launch again
			timed("9 plain launch, unit open", func() error { return u.r.enqueue(stream, moved, false) })
			timed("10 capture+launch", func() error { return u.r.enqueue(stream, moved, false) })
			timed("11 replay", func() error { return u.r.enqueue(stream, moved, false) })
			// Plain launches back to back (new output addresses each, so
			// no graph), timed one by one with no synchronize between:
			// the CPU stays warm, as in a busy serving loop.
			if err := cu.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for j := range 8 {
				at := moved
				at.c += uint64(512 * (j + 1))
				start := time.Now()
				if err := u.r.enqueue(stream, at, false); err != nil {
					t.Fatal(err)
				}
				phases["12 plain launch, back to back"] = append(phases["12 plain launch, back to back"], time.Since(start))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(phases))
	for name := range phases {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		x, _ := strconv.Atoi(a[:2])
		y, _ := strconv.Atoi(b[:2])
		if a[1] == ' ' {
			x, _ = strconv.Atoi(a[:1])
		}
		if b[1] == ' ' {
			y, _ = strconv.Atoi(b[:1])
		}
		return x - y
	})
	for _, name := range names {
		d := phases[name]
		slices.Sort(d)
		t.Logf("%s n=%d k=%d: %-28s median %8v  p90 %8v  (%d)", kernel, n, k, name, d[len(d)/2], d[len(d)*9/10], len(d))
	}
}

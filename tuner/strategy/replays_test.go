package strategy

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
)

// recordedLandscapes is every landscape in ../testdata, plain (*.jsonl)
// or gzipped (*.jsonl.gz, as the large ones are stored), in name order as
// if none were gzipped: the replays cover the same landscapes however
// they are stored.
func recordedLandscapes(t *testing.T) []string {
	t.Helper()
	files, err := triallog.Glob("../testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no landscapes in ../testdata (%v)", err)
	}
	return files
}

// skipReplaysUnderRace skips a test that replays every recorded landscape
// when the race detector is on. The replays are deterministic and run on
// one goroutine, so -race finds nothing in them, while it makes them about
// ten times slower (over ten minutes on a 2-core machine with the GPU
// landscapes). `make test` runs these tests again without -race.
func skipReplaysUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("replays every landscape: run without -race (make test does)")
	}
}

// parallelDo runs f(0) .. f(n-1) on GOMAXPROCS goroutines. Landscape
// replays are independent and deterministic (each strategy has its own
// state, the landscape is only read), so the slowest tests of the package
// take about 1/GOMAXPROCS of their time, with the same results.
func parallelDo(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// prefetchFifth fills replayFifth's memo for every landscape in files,
// strategy in names and seed 1..seeds, in parallel; errors surface when
// the test asks replayFifth again (not memoised on error).
func prefetchFifth(t *testing.T, files []string, names []string, seeds int64) {
	t.Helper()
	prefetchFifthOf(loadLandscapes(t, files), names, seeds)
}

// loadLandscapes loads every landscape in files, in order.
func loadLandscapes(t *testing.T, files []string) []Landscape {
	t.Helper()
	var ls []Landscape
	for _, f := range files {
		l, err := LoadLandscape(f)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

// replayJob is one replay a test is about to ask a memo for: with a fifth
// of the valid configs (replayFifth) when fifth is set, else with budget
// trials (replayMemo).
type replayJob struct {
	l      Landscape
	name   string
	fifth  bool
	budget int
	seed   int64
}

// prefetchFifthOf is prefetchFifth over loaded landscapes.
func prefetchFifthOf(ls []Landscape, names []string, seeds int64) {
	var jobs []replayJob
	for _, l := range ls {
		for _, name := range names {
			for seed := int64(1); seed <= seeds; seed++ {
				jobs = append(jobs, replayJob{l: l, name: name, fifth: true, budget: len(l.Valid) / 5, seed: seed})
			}
		}
	}
	prefetch(jobs)
}

// prefetchMemo fills replayMemo's memo for every landscape in ls, strategy
// in names, budget budget(l) and seed 1..seeds, in parallel.
func prefetchMemo(ls []Landscape, names []string, budget func(l Landscape) []int, seeds int64) {
	var jobs []replayJob
	for _, l := range ls {
		for _, name := range names {
			for _, b := range budget(l) {
				for seed := int64(1); seed <= seeds; seed++ {
					jobs = append(jobs, replayJob{l: l, name: name, budget: b, seed: seed})
				}
			}
		}
	}
	prefetch(jobs)
}

// prefetch runs every job once on parallelDo's goroutines, so that a test
// then reads its results from the memos in its own order. One batch for a
// whole test (rather than one per landscape) keeps both cores busy to its
// end; the replays that cost most (the most valid configs times the
// budget: the surrogate's forests grow with both) go first, so none of
// them starts last while the other core idles. Replays are deterministic
// and independent, so the order changes no result. Errors are not
// memoised: they surface when the test asks again.
func prefetch(jobs []replayJob) {
	sort.SliceStable(jobs, func(i, j int) bool {
		return len(jobs[i].l.Valid)*jobs[i].budget > len(jobs[j].l.Valid)*jobs[j].budget
	})
	parallelDo(len(jobs), func(i int) {
		j := jobs[i]
		if j.fifth {
			_, _, _ = replayFifth(j.l, j.name, j.seed)
		} else {
			_, _ = replayMemo(j.l, j.name, j.budget, j.seed)
		}
	})
}

// resolvedRuns memoises replayResolved: a replay with its trials, by
// landscape, the strategy a name resolves to, budget and seed.
var resolvedRuns = struct {
	sync.Mutex
	m map[string]fifthRun
}{m: map[string]fifthRun{}}

// replayResolved is replay, run once for every name that resolves to the
// same strategy (New's answer: auto is the bandit below the whole space,
// exhaustive at it), so a test that asks for both auto and the bandit
// replays each seed once. Replays are deterministic, so the memo changes
// no result; errors are not memoised.
func replayResolved(l Landscape, name string, budget int, seed int64) (ReplayResult, []Observation, error) {
	resolved, budget, key, err := resolveReplay(l, name, budget, seed)
	if err != nil {
		return ReplayResult{}, nil, err
	}
	resolvedRuns.Lock()
	run, ok := resolvedRuns.m[key]
	resolvedRuns.Unlock()
	if ok {
		return run.r, run.h, nil
	}
	r, h, err := replay(l, resolved, budget, seed)
	if err != nil {
		return r, h, err
	}
	resolvedRuns.Lock()
	resolvedRuns.m[key] = fifthRun{r, h}
	resolvedRuns.Unlock()
	return r, h, nil
}

// resolveReplay is the strategy name resolves to on l with budget (as
// replay bounds it), that budget, and replayResolved's memo key.
func resolveReplay(l Landscape, name string, budget int, seed int64) (resolved string, bounded int, key string, err error) {
	if budget <= 0 || budget > len(l.Valid) {
		budget = len(l.Valid)
	}
	s, err := New(name, l.Problem(budget, seed))
	if err != nil {
		return "", 0, "", err
	}
	resolved = s.Name()
	s.Close()
	return resolved, budget, fmt.Sprintf("%s\x00%s\x00%d\x00%d", l.Path, resolved, budget, seed), nil
}

// resolvedJob is one replayResolved call.
type resolvedJob struct {
	l      Landscape
	name   string
	budget int
	seed   int64
}

// prefetchResolved fills replayResolved's memo for jobs on parallelDo's
// goroutines, the costliest first (as prefetch), each resolved replay
// once: two names of one strategy would otherwise both miss the memo at
// once and replay it twice.
func prefetchResolved(jobs []resolvedJob) {
	seen := map[string]bool{}
	var once []resolvedJob
	for _, j := range jobs {
		_, _, key, err := resolveReplay(j.l, j.name, j.budget, j.seed)
		if err != nil {
			once = append(once, j) // the error surfaces when the test asks
			continue
		}
		if !seen[key] {
			seen[key] = true
			once = append(once, j)
		}
	}
	sort.SliceStable(once, func(i, k int) bool {
		return len(once[i].l.Valid)*once[i].budget > len(once[k].l.Valid)*once[k].budget
	})
	parallelDo(len(once), func(i int) { _, _, _ = replayResolved(once[i].l, once[i].name, once[i].budget, once[i].seed) })
}

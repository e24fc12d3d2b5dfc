package strategy

import (
	"runtime"
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
	var ls []Landscape
	for _, f := range files {
		l, err := LoadLandscape(f)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	type run struct {
		l    Landscape
		name string
		seed int64
	}
	var runs []run
	for _, l := range ls {
		for _, name := range names {
			for seed := int64(1); seed <= seeds; seed++ {
				runs = append(runs, run{l, name, seed})
			}
		}
	}
	parallelDo(len(runs), func(i int) { _, _, _ = replayFifth(runs[i].l, runs[i].name, runs[i].seed) })
}

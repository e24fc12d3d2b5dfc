package strategy

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/internal/triallog"
)

// splitFile is the held-out split of the recorded landscapes (issue 57):
// which are used to fit the strategy's knobs and which only judge it. It
// says why the split is what it is.
const splitFile = "../testdata/split.txt"

// Set names in splitFile.
const (
	setFit     = "fit"
	setHeldOut = "heldout"
)

// readSplit returns splitFile's set for each landscape, keyed by the file
// name without a .gz (a landscape is the same however it is stored).
func readSplit(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(splitFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sets := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || (fields[0] != setFit && fields[0] != setHeldOut) {
			t.Fatalf("%s line %d: want \"fit|heldout FILE\", got %q", splitFile, n, line)
		}
		if _, dup := sets[fields[1]]; dup {
			t.Fatalf("%s line %d: %s listed twice", splitFile, n, fields[1])
		}
		sets[fields[1]] = fields[0]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sets
}

// splitName is a landscape file's name as splitFile lists it.
func splitName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), triallog.GzipExt)
}

// siblingGroup is the (machine, kernel) a recorded landscape belongs to,
// from its name (landscape-BACKEND-KERNEL-...): landscapes of one group
// share a space and most of their ranking.
func siblingGroup(name string) string {
	parts := strings.SplitN(strings.TrimPrefix(name, "landscape-"), "-", 3)
	if len(parts) < 2 {
		return name
	}
	return parts[0] + "/" + strings.TrimSuffix(parts[1], ".jsonl")
}

// TestSplitIsComplete checks the manifest itself: every recorded landscape
// is in one set, no listed file is missing, and no held-out landscape has
// a sibling (same machine and kernel) in the fitting set.
func TestSplitIsComplete(t *testing.T) {
	sets := readSplit(t)
	found := map[string]bool{}
	for _, f := range recordedLandscapes(t) {
		name := splitName(f)
		found[name] = true
		if _, ok := sets[name]; !ok {
			t.Errorf("%s is in no set of %s: add it with its siblings", name, splitFile)
		}
	}
	groups := map[string]map[string]bool{} // group -> sets it appears in
	for name, set := range sets {
		if !found[name] {
			t.Errorf("%s lists %s, which is not in ../testdata", splitFile, name)
		}
		g := siblingGroup(name)
		if groups[g] == nil {
			groups[g] = map[string]bool{}
		}
		groups[g][set] = true
	}
	held := 0
	for g, in := range groups {
		if in[setFit] && in[setHeldOut] {
			t.Errorf("%s has landscapes in both sets: a held-out one has a sibling in the fitting set", g)
		}
		if in[setHeldOut] {
			held++
		}
	}
	if held == 0 {
		t.Error("nothing is held out")
	}
}

// seedsWithin3 replays strategy name on l with budget trials for seeds
// 1..seeds and returns how many got within 3% of the landscape's optimum.
func seedsWithin3(l Landscape, name string, budget int, seeds int64) (int, error) {
	opt, ok := l.Optimum()
	if !ok {
		return 0, fmt.Errorf("%s: no config passed", l.Path)
	}
	got := make([]bool, seeds)
	errs := make([]error, seeds)
	parallelDo(int(seeds), func(i int) {
		r, err := Replay(l, name, budget, int64(i+1))
		errs[i] = err
		got[i] = err == nil && r.TrialsUsed <= budget && r.BestScoreUS <= opt.ScoreUS*1.03
	})
	n := 0
	for i := range got {
		if errs[i] != nil {
			return 0, errs[i]
		}
		if got[i] {
			n++
		}
	}
	return n, nil
}

// share is the budget of a share (1/den) of n valid configs, rounded up,
// with no floor.
func share(n, num, den int) int {
	return (n*num + den - 1) / den
}

package strategy

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
)

// tinyTrace, when set, runs TestTinyTrace: bandit on the 190-config
// synthetic landscapes of those (used) seeds at a tenth or a twentieth
// (-tiny-trace-share), trial by trial
// (issue 57, 21st fit's diagnosis). Never the held-out seeds.
var tinyTrace = flag.String("tiny-trace", "", "TestTinyTrace: synthetic seeds FIRST..LAST (used seeds only) to trace bandit on at a share (-tiny-trace-share) of the 190-config spaces")

// tinyTraceShare is the budget's denominator: 10 (a tenth, the tiny
// budgets' larger) or 20 (a twentieth).
var tinyTraceShare = flag.Int("tiny-trace-share", 10, "TestTinyTrace: trace at 1/N of the configs: 10 or 20")

func TestTinyTrace(t *testing.T) {
	if *tinyTrace == "" {
		t.Skip("-tiny-trace not set")
	}
	setKnobs(t)
	if *tinyTraceShare != 10 && *tinyTraceShare != 20 {
		t.Fatalf("-tiny-trace-share %d: want 10 or 20 (the tiny budgets)", *tinyTraceShare)
	}
	var lo, hi int64
	if _, err := fmt.Sscanf(*tinyTrace, "%d..%d", &lo, &hi); err != nil || lo <= hi && hi >= synthHeldOutRange[0] && lo <= synthHeldOutRange[1] {
		t.Fatalf("-tiny-trace %q: want FIRST..LAST outside the held-out seeds", *tinyTrace)
	}
	var b strings.Builder
	for _, kind := range fitKindList(t) {
		for s := lo; s <= hi; s++ {
			l := syntheticLandscape(kind, s)
			if len(l.Valid) > difficultyMaxValid {
				continue
			}
			traceTiny(&b, l, share(len(l.Valid), 1, *tinyTraceShare))
		}
	}
	t.Logf("\n%s", b.String())
}

// traceTiny writes one run (seed 1) of bandit on l with budget trials.
func traceTiny(b *strings.Builder, l Landscape, budget int) {
	opt, _ := l.Optimum()
	s, err := New(Bandit, l.Problem(budget, 1))
	if err != nil {
		fmt.Fprintln(b, err)
		return
	}
	defer s.Close()
	pt := s.(*bandit).pattern
	lat := pt.t.lat
	score := make([]float64, len(lat.valid))
	ok := make([]bool, len(lat.valid))
	var hits []int
	for i, c := range lat.valid {
		o := l.Lookup(c)
		ok[i], score[i] = o.OK, o.ScoreUS
		if o.OK && o.ScoreUS <= opt.ScoreUS*1.03 {
			hits = append(hits, i)
		}
	}
	var history []Observation
	var labels []string
	var gpRank []string
	batch := 0
	for len(history) < budget {
		out := s.Next(history)
		if len(out) == 0 {
			break
		}
		batch++
		for _, c := range out {
			if len(history) >= budget {
				break
			}
			lab := "probe/gp"
			if batch == 1 {
				lab = "first"
			}
			labels = append(labels, lab)
			history = append(history, l.Lookup(c))
		}
		// After the run so far: where the process ranks the hits.
		if g := fitGPWith(&pt.t, false, gpBoxCox); g != nil && len(history) >= budget-8 && len(history) < budget {
			type rv struct {
				i int
				v float64
			}
			var all []rv
			for i := range lat.valid {
				if pt.t.fresh(i) {
					m, sd := g.predict(i)
					all = append(all, rv{i, m - gpKappa*sd})
				}
			}
			best := math.Inf(1)
			bestRank := -1
			for _, h := range hits {
				if !pt.t.fresh(h) {
					continue
				}
				m, sd := g.predict(h)
				v := m - gpKappa*sd
				rank := 0
				for _, a := range all {
					if a.v < v {
						rank++
					}
				}
				if v < best {
					best, bestRank = v, rank
				}
			}
			gpRank = append(gpRank, fmt.Sprintf("%d(ell%.2g,lam%.2g)", bestRank, g.ell, g.lambda))
		}
	}
	bestSeen := math.Inf(1)
	for _, o := range history {
		if o.OK {
			bestSeen = math.Min(bestSeen, o.ScoreUS)
		}
	}
	won := bestSeen <= opt.ScoreUS*1.03
	fmt.Fprintf(b, "== %s budget %d hits %d won %v best %.3f\n", shortName(l.Path), budget, len(hits), won, bestSeen/opt.ScoreUS)
	name := func(i int) string {
		return fmt.Sprint(lat.idx[i])
	}
	// The hits, their classes, and the distance to the nearest measured.
	for _, h := range hits {
		near := math.MaxInt
		for j := range lat.valid {
			if pt.t.seen[j] {
				near = min(near, farDistance(lat, h, j))
			}
		}
		fmt.Fprintf(b, "  hit %s %.3f nearest-measured %d\n", name(h), score[h]/opt.ScoreUS, near)
	}
	for k, o := range history {
		i := lat.byKey[configKey(o.Config)]
		r := "fail"
		if o.OK {
			r = fmt.Sprintf("%.3f", o.ScoreUS/opt.ScoreUS)
		}
		dh := math.MaxInt
		for _, h := range hits {
			dh = min(dh, farDistance(lat, h, i))
		}
		fmt.Fprintf(b, "  %2d %-8s %s %s dhit %d\n", k+1, labels[k], name(i), r, dh)
	}
	fmt.Fprintf(b, "  gp rank of best fresh hit (last trials): %v\n", gpRank)
	// The summary line: the optimum's algorithm, the best's after the
	// first pass and after the probes, trials in a hit's algorithm past
	// the first pass, the nearest a trial came to a hit.
	algo := func(i int) int { return lat.idx[i][lat.free[0]] }
	hitAlgo := map[int]bool{}
	for _, h := range hits {
		hitAlgo[algo(h)] = true
	}
	bestAfter := func(n int) int {
		bi, bv := -1, math.Inf(1)
		for _, o := range history[:min(n, len(history))] {
			if o.OK && o.ScoreUS < bv {
				bi, bv = lat.byKey[configKey(o.Config)], o.ScoreUS
			}
		}
		return bi
	}
	first := 0
	for _, lb := range labels {
		if lb == "first" {
			first++
		}
	}
	inHit, minD := 0, math.MaxInt
	for k, o := range history {
		i := lat.byKey[configKey(o.Config)]
		for _, h := range hits {
			minD = min(minD, farDistance(lat, h, i))
		}
		if k >= first && hitAlgo[algo(i)] {
			inHit++
		}
	}
	optI := lat.byKey[configKey(opt.Config)]
	fa, pa := bestAfter(first), bestAfter(first+2)
	fmt.Fprintf(b, "SUMMARY %-40s won %v hits %d optalgo %d hitalgos %d firstbest %d(hit %v) probebest %d(hit %v) inhit %d/%d mind %d best %.3f\n",
		shortName(l.Path), won, len(hits), algo(optI), len(hitAlgo), algo(fa), hitAlgo[algo(fa)], algo(pa), hitAlgo[algo(pa)], inHit, len(history)-first, minD, bestSeen/opt.ScoreUS)
}

package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner"
)

// Plot sizes, inches.
const (
	wideW, wideH   = 6.4, 3.3
	paramW, paramH = 3.1, 2.5
)

// trialsFigure is the search as it went: every first-pass trial's score in
// the order it ran, the best so far, and the exhaustive optimum of the same
// job when one is known.
func trialsFigure(r *Run, optimum float64, optimumFrom string) (figure, error) {
	p := newPlot("best score against trial number ("+strategyName(r)+")", "trial (first pass, in order)", "median µs")
	var dots, def, win plotter.XYs
	var steps plotter.XYs
	best := math.Inf(1)
	winner, hasWinner := r.Winner()
	var scores []float64
	for i, t := range r.Trials {
		x := float64(i + 1)
		if t.Status != triallog.StatusOK {
			continue
		}
		y := t.Score()
		scores = append(scores, y)
		dots = append(dots, plotter.XY{X: x, Y: y})
		if t.Config.Equal(r.Default) {
			def = append(def, plotter.XY{X: x, Y: y})
		}
		if hasWinner && t.Config.Equal(winner.Config) {
			win = append(win, plotter.XY{X: x, Y: y})
		}
		if y < best {
			if len(steps) > 0 {
				steps = append(steps, plotter.XY{X: x, Y: best})
			}
			best = y
			steps = append(steps, plotter.XY{X: x, Y: y})
		}
	}
	if len(steps) > 0 {
		steps = append(steps, plotter.XY{X: float64(len(r.Trials)), Y: best})
	}
	f := figure{Kind: "trials", Title: p.Title.Text, Points: len(dots)}
	f.Legend = []legendItem{{hexColor(colTrial), "trial", "dot"}, {hexColor(colBest), "best so far", "line"}}
	if len(steps) > 1 {
		l, err := plotter.NewLine(steps)
		if err != nil {
			return f, err
		}
		l.Color, l.Width = colBest, 1.6
		p.Add(l)
	}
	if err := points(p, dots, colTrial, 2, true, false, false); err != nil {
		return f, err
	}
	if err := points(p, def, colDefault, 3.5, true, false, false); err != nil {
		return f, err
	}
	// A ring, so a default that won still shows its dot inside.
	if err := points(p, win, colWinner, 5, false, false, false); err != nil {
		return f, err
	}
	f.Legend = append(f.Legend, legendItem{hexColor(colDefault), "default config", "dot"}, legendItem{hexColor(colWinner), "winner (its first-pass trial)", "ring"})
	if finite(optimum) && len(dots) > 0 {
		if err := hline(p, optimum, 1, float64(len(r.Trials)), colOptimum); err != nil {
			return f, err
		}
		scores = append(scores, optimum)
		f.Legend = append(f.Legend, legendItem{hexColor(colOptimum), "exhaustive optimum", "dash"})
	}
	logY(p, minOf(scores), maxOf(scores))
	p.X.Min, p.X.Max = 0, float64(len(r.Trials))+1
	counts := r.Counts()
	f.Caption = fmt.Sprintf("%d first-pass trials: %s.", len(r.Trials), countsText(counts))
	if len(dots) < len(r.Trials) {
		f.Caption += " Trials that did not run correctly have no score and leave gaps."
	}
	if finite(optimum) && optimumFrom != "" {
		f.Caption += fmt.Sprintf(" The exhaustive optimum (%.1f µs) is from %s, an exhaustive search of the same job.", optimum, optimumFrom)
	}
	var err error
	f.SVG, err = render(p, wideW, wideH)
	return f, err
}

// distributionFigure ranks the configs by their first-pass score: how many
// come close to the best, and where the default and the winner fall.
func distributionFigure(r *Run) (figure, error) {
	p := newPlot("score distribution over configs", "configs, fastest first (first pass)", "median µs")
	ok := okConfigs(r)
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].Score() < ok[j].Score() })
	winner, hasWinner := r.Winner()
	var dots, def, win plotter.XYs
	var scores []float64
	defRank := 0
	for i, t := range ok {
		xy := plotter.XY{X: float64(i + 1), Y: t.Score()}
		scores = append(scores, xy.Y)
		dots = append(dots, xy)
		if t.Config.Equal(r.Default) {
			def, defRank = append(def, xy), i+1
		}
		if hasWinner && t.Config.Equal(winner.Config) {
			win = append(win, xy)
		}
	}
	f := figure{Kind: "distribution", Title: p.Title.Text, Points: len(dots)}
	for _, s := range []struct {
		xys    plotter.XYs
		c      color.RGBA
		radius float64
		filled bool
	}{{dots, colTrial, 2, true}, {def, colDefault, 3.5, true}, {win, colWinner, 5, false}} {
		if err := points(p, s.xys, s.c, s.radius, s.filled, false, false); err != nil {
			return f, err
		}
	}
	f.Legend = []legendItem{{hexColor(colTrial), "config", "dot"}, {hexColor(colDefault), "default config", "dot"}, {hexColor(colWinner), "winner", "ring"}}
	logY(p, minOf(scores), maxOf(scores))
	p.X.Min, p.X.Max = 0, float64(len(ok))+1
	if len(ok) > 0 {
		best := ok[0].Score()
		near := 0
		for _, t := range ok {
			if t.Score() <= best*1.05 {
				near++
			}
		}
		f.Caption = fmt.Sprintf("%d configs ran correctly; %d within 5%% of the best first-pass score (%.1f µs).", len(ok), near, best)
		if defRank > 0 {
			f.Caption += fmt.Sprintf(" The default ranks %d of %d.", defRank, len(ok))
		}
	}
	var err error
	f.SVG, err = render(p, wideW, wideH)
	return f, err
}

// parameterFigures show each parameter's effect: the median and the best
// first-pass score of the configs with each of its values. A parameter of
// which one value was measured says nothing and gets no plot.
func parameterFigures(r *Run) ([]figure, []string, error) {
	ok := okConfigs(r)
	names := map[string]bool{}
	for _, t := range ok {
		for n := range t.Config {
			names[n] = true
		}
	}
	var figs []figure
	var single []string
	for _, name := range sortedKeys(names) {
		byValue := map[space.Value][]float64{}
		for _, t := range ok {
			if v, has := t.Config[name]; has {
				byValue[v] = append(byValue[v], t.Score())
			}
		}
		if len(byValue) < 2 {
			single = append(single, name)
			continue
		}
		order := sortedValues(byValue)
		p := newPlot(name, "", "median µs")
		labels := make([]string, len(order))
		var med, best plotter.XYs
		var all []float64
		for i, v := range order {
			scores := byValue[v]
			labels[i] = fmt.Sprintf("%s (%d)", v, len(scores))
			m, b := tuner.Quantile(scores, 0.5), minOf(scores)
			med = append(med, plotter.XY{X: float64(i), Y: m})
			best = append(best, plotter.XY{X: float64(i), Y: b})
			all = append(all, m, b)
		}
		p.NominalX(labels...)
		if width := len(strings.Join(labels, "")); width > 28 {
			// Long or many values: slant them so they do not run together.
			p.X.Tick.Label.Rotation = math.Pi / 5
			p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		}
		line := !order[0].IsStr // ordered values: a line shows the trend
		if err := points(p, med, colMedian, 3, true, line, false); err != nil {
			return nil, nil, err
		}
		if err := points(p, best, colMin, 3, true, line, true); err != nil {
			return nil, nil, err
		}
		logY(p, minOf(all), maxOf(all))
		f := figure{Kind: "parameter", Key: name, Title: name, Points: len(order),
			Legend: []legendItem{{hexColor(colMedian), "median", "line"}, {hexColor(colMin), "best", "dash"}}}
		var err error
		if f.SVG, err = render(p, paramW, paramH); err != nil {
			return nil, nil, err
		}
		figs = append(figs, f)
	}
	return figs, single, nil
}

// series is one line of a latency plot.
type series struct {
	label  string
	peer   bool
	points plotter.XYs
}

// latencyFigure is a kernel's tuned latency against problem size at one
// world size, across the runs (and cache entries) at that world, with the
// peers measured at the same world size beside it.
func latencyFigure(kernel string, world int, runs []*Run, d *Data) (figure, error) {
	var shape string
	groups := map[string]*series{}
	var order []string
	labelParts := map[int]map[string]bool{}
	add := func(key string, parts []string, x, y float64) {
		s, ok := groups[key]
		if !ok {
			s = &series{label: strings.Join(parts, "\x00")}
			groups[key] = s
			order = append(order, key)
		}
		for i, p := range parts {
			if labelParts[i] == nil {
				labelParts[i] = map[string]bool{}
			}
			labelParts[i][p] = true
		}
		s.points = append(s.points, plotter.XY{X: x, Y: y})
	}
	noWinner := 0
	for _, r := range runs {
		w, ok := r.Winner()
		if !ok {
			noWinner++
			continue
		}
		x, _ := problemSize(r.Shape, r.Dtype)
		shape = r.Shape
		where := r.Hardware
		if where == "" {
			where = r.Origin
		}
		add("log|"+r.Backend+"|"+r.Dtype+"|"+where, []string{"symmtune", r.Backend, r.Dtype, where}, x, w.Score())
	}
	for _, e := range d.Entries {
		if e.Kernel != kernel || e.World != world {
			continue
		}
		text := e.Shape.Format(dimsOf(shape, e.Shape)...)
		x, err := problemSize(text, e.Dtype)
		if err != nil {
			continue
		}
		shape = text
		add("cache|"+e.Backend+"|"+e.Dtype+"|"+e.Hardware, []string{"symmtune (cache)", e.Backend, e.Dtype, e.Hardware}, x, e.MedianUS)
	}
	var all []*series
	var xs, ys []float64
	for _, key := range order {
		s := groups[key]
		var kept []string
		for i, p := range strings.Split(s.label, "\x00") {
			if i == 0 || len(labelParts[i]) > 1 {
				kept = append(kept, p)
			}
		}
		s.label = strings.Join(kept, " ")
		all = append(all, s)
	}
	peers := map[string]*series{}
	var peerOrder []string
	for _, p := range d.Peers {
		if p.World != world || !slices.Contains(peerKernels[p.Kind], kernel) {
			continue
		}
		label := p.Impl // this kernel's own peers; others (mm alone) say what they time
		if len(peerKernels[p.Kind]) > 1 {
			label = p.Kind + " " + p.Impl
		}
		if _, ok := peers[label]; !ok {
			peers[label] = &series{label: label, peer: true}
			peerOrder = append(peerOrder, label)
		}
		peers[label].points = append(peers[label].points, plotter.XY{X: p.Size, Y: p.US})
	}
	for _, l := range peerOrder {
		all = append(all, peers[l])
	}
	title := fmt.Sprintf("%s, %d ranks: tuned latency against %s", kernel, world, sizeAxis(shape))
	p := newPlot(title, sizeAxis(shape), "median µs")
	f := figure{Kind: "latency", Key: fmt.Sprintf("%s|%d", kernel, world), Title: title}
	for i, s := range all {
		sort.Slice(s.points, func(a, b int) bool { return s.points[a].X < s.points[b].X })
		c := seriesColors[i%len(seriesColors)]
		if err := points(p, s.points, c, map[bool]float64{false: 3, true: 2.5}[s.peer], !s.peer, true, s.peer); err != nil {
			return f, err
		}
		f.Points += len(s.points)
		f.Legend = append(f.Legend, legendItem{hexColor(c), s.label, map[bool]string{false: "line", true: "dash"}[s.peer]})
		for _, xy := range s.points {
			xs, ys = append(xs, xy.X), append(ys, xy.Y)
		}
	}
	if len(xs) == 0 {
		return f, nil
	}
	lo, hi := span(xs...)
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = lo/1.3, hi*1.3
	if dims, _ := parseShape(shape); len(dims) == 1 {
		p.X.Tick.Marker = byteTicks{}
		p.X.Label.Text = "message size (bytes)"
	} else {
		p.X.Tick.Marker = logTicks{format: formatCount}
	}
	ylo, yhi := span(ys...)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{format: formatUS}
	p.Y.Min, p.Y.Max = ylo/1.3, yhi*1.3
	f.Caption = "symmtune: the winner of each search as re-measured after it (median over iterations of the slowest rank)."
	if len(peerOrder) > 0 {
		f.Caption += " Peers: as peer_baselines.py measured them (median over iterations of each rank, slowest rank)."
	}
	if noWinner > 0 {
		f.Caption += fmt.Sprintf(" %d searches without a winner (interrupted, or nothing ran correctly) are not drawn.", noWinner)
	}
	var err error
	f.SVG, err = render(p, wideW, wideH+0.6)
	return f, err
}

// dimsOf orders a cache entry's dimensions like a logged shape of the same
// kernel (the cache's shape is a map); alphabetical when there is none.
func dimsOf(logged string, sh space.Shape) []string {
	if dims, err := parseShape(logged); err == nil && len(dims) == len(sh) {
		names := make([]string, len(dims))
		for i, d := range dims {
			names[i] = d.name
		}
		return names
	}
	names := make([]string, 0, len(sh))
	for n := range sh {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// okConfigs is the configs that ran correctly in the first pass, each once
// with its first measurement (a resumed search may log a config twice).
func okConfigs(r *Run) []triallog.Result {
	seen := map[string]bool{}
	var out []triallog.Result
	for _, t := range okTrials(r) {
		if k := t.Config.String(); !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

func okTrials(r *Run) []triallog.Result {
	var ok []triallog.Result
	for _, t := range r.Trials {
		if t.Status == triallog.StatusOK {
			ok = append(ok, t)
		}
	}
	return ok
}

func strategyName(r *Run) string {
	if r.Strategy == "" {
		return "strategy not recorded"
	}
	return r.Strategy
}

func countsText(counts map[triallog.Status]int) string {
	var parts []string
	for _, st := range triallog.Statuses {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, n))
		}
	}
	return strings.Join(parts, ", ")
}

// sortedValues orders a parameter's values as its space does: integers
// numerically, strings lexically.
func sortedValues[T any](values map[space.Value]T) []space.Value {
	out := make([]space.Value, 0, len(values))
	for v := range values {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].IsStr != out[j].IsStr {
			return !out[i].IsStr
		}
		if out[i].IsStr {
			return out[i].Str < out[j].Str
		}
		return out[i].Int < out[j].Int
	})
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func minOf(xs []float64) float64 {
	lo, _ := span(xs...)
	return lo
}

func maxOf(xs []float64) float64 {
	_, hi := span(xs...)
	return hi
}

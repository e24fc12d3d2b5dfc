package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"

	"github.com/symmtune/symmtune/internal/triallog"
)

// page is what the template draws.
type page struct {
	Generated string
	Summary   string
	Sources   []string
	Notes     []string
	Kernels   []*kernelSection
}

type kernelSection struct {
	ID, Name string
	Latency  []figure
	Rows     []runRow
	Runs     []*runSection
}

type runRow struct {
	ID, World, Dtype, Shape, Strategy, Trials, Winner, Default, Speedup, Config string
}

type runSection struct {
	ID, Title string
	Log, Job  string // for readers of the HTML: which log and job it shows
	Facts     []string
	Wide      []figure
	Params    []figure
	Note      string
}

// Render writes the report as one self-contained HTML page: inline SVG
// plots and CSS, no scripts, nothing fetched.
func Render(w io.Writer, d *Data, generated time.Time) error {
	pg := &page{
		Generated: generated.UTC().Format("2006-01-02 15:04 UTC"),
		Sources:   d.Sources,
		Notes:     d.Notes,
	}
	runs := append([]*Run(nil), d.Runs...)
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.Kernel != b.Kernel {
			return a.Kernel < b.Kernel
		}
		if a.World != b.World {
			return a.World < b.World
		}
		if a.Dtype != b.Dtype {
			return a.Dtype < b.Dtype
		}
		sa, _ := problemSize(a.Shape, a.Dtype)
		sb, _ := problemSize(b.Shape, b.Dtype)
		if sa != sb {
			return sa < sb
		}
		return a.Log < b.Log
	})
	pg.Summary = fmt.Sprintf("%d searches from %d trial logs", len(runs), countLogs(runs))
	if len(d.Entries) > 0 {
		pg.Summary += fmt.Sprintf(", %d tuned configs from the cache", len(d.Entries))
	}
	byKernel := map[string]*kernelSection{}
	section := func(kernel string) *kernelSection {
		if k, ok := byKernel[kernel]; ok {
			return k
		}
		k := &kernelSection{ID: "k-" + kernel, Name: kernel}
		byKernel[kernel] = k
		pg.Kernels = append(pg.Kernels, k)
		return k
	}
	worlds := map[string]map[int][]*Run{}
	for i, r := range runs {
		k := section(r.Kernel)
		id := fmt.Sprintf("run-%d", i+1)
		opt, from := optimumFor(r, runs)
		rs, err := runSectionOf(r, id, opt, from)
		if err != nil {
			return err
		}
		k.Runs = append(k.Runs, rs)
		k.Rows = append(k.Rows, rowOf(r, id))
		if worlds[r.Kernel] == nil {
			worlds[r.Kernel] = map[int][]*Run{}
		}
		worlds[r.Kernel][r.World] = append(worlds[r.Kernel][r.World], r)
	}
	for _, e := range d.Entries {
		section(e.Kernel)
		if worlds[e.Kernel] == nil {
			worlds[e.Kernel] = map[int][]*Run{}
		}
		if _, ok := worlds[e.Kernel][e.World]; !ok {
			worlds[e.Kernel][e.World] = nil
		}
	}
	sort.SliceStable(pg.Kernels, func(i, j int) bool { return pg.Kernels[i].Name < pg.Kernels[j].Name })
	for _, k := range pg.Kernels {
		var ws []int
		for w := range worlds[k.Name] {
			ws = append(ws, w)
		}
		sort.Ints(ws)
		for _, w := range ws {
			f, err := latencyFigure(k.Name, w, worlds[k.Name][w], d)
			if err != nil {
				return err
			}
			if f.Points > 0 {
				k.Latency = append(k.Latency, f)
			}
		}
	}
	return pageTemplate.Execute(w, pg)
}

// optimumFor finds the exhaustive optimum of r's job: the best first-pass
// score of an exhaustive run of the same job on the same hardware (the
// same directory of logs when a log does not name its hardware).
func optimumFor(r *Run, runs []*Run) (float64, string) {
	// An exhaustive run's own optimum first: a job may have several
	// exhaustive runs (each restricted by --where to other configs).
	if r.Exhaustive() {
		return minOf(scoresOf(okTrials(r))), ""
	}
	for _, o := range runs {
		if o.key() != r.key() || !o.Exhaustive() {
			continue
		}
		if r.Hardware != o.Hardware || (r.Hardware == "" && r.Origin != o.Origin) {
			continue
		}
		return minOf(scoresOf(okTrials(o))), o.Log
	}
	return 0, ""
}

func runSectionOf(r *Run, id string, optimum float64, optimumFrom string) (*runSection, error) {
	rs := &runSection{ID: id, Title: r.Title(), Log: r.Log, Job: r.key()}
	rs.Facts = append(rs.Facts, "strategy: "+strategyName(r)+"; "+coverage(r))
	if r.Hardware != "" {
		rs.Facts = append(rs.Facts, "hardware: "+r.Hardware)
	}
	rs.Facts = append(rs.Facts, "winner: "+winnerText(r), "log: "+r.Log)
	if len(okTrials(r)) == 0 {
		rs.Note = "No trial ran correctly: there is nothing to plot."
		return rs, nil
	}
	tf, err := trialsFigure(r, optimum, optimumFrom)
	if err != nil {
		return nil, err
	}
	df, err := distributionFigure(r)
	if err != nil {
		return nil, err
	}
	rs.Wide = []figure{tf, df}
	params, single, err := parameterFigures(r)
	if err != nil {
		return nil, err
	}
	rs.Params = params
	if len(single) > 0 {
		rs.Note = fmt.Sprintf("Parameters with one measured value (no plot): %v.", single)
	}
	if r.ValidConfigs > 0 && !r.Exhaustive() && len(params) > 0 {
		rs.Note += " The parameter plots summarize the configs the strategy chose to measure, not the whole space."
	}
	return rs, nil
}

// coverage says how much of the space the first pass measured.
func coverage(r *Run) string {
	n := len(r.Trials)
	switch {
	case r.ValidConfigs == 0:
		return fmt.Sprintf("%d first-pass trials (%s); the log does not record how many configs were valid", n, countsText(r.Counts()))
	case r.Exhaustive():
		return fmt.Sprintf("%d first-pass trials, every valid config (exhaustive; %s)", n, countsText(r.Counts()))
	}
	return fmt.Sprintf("%d first-pass trials of %d valid configs (%s)", n, r.ValidConfigs, countsText(r.Counts()))
}

// winnerText says what won and how it was chosen.
func winnerText(r *Run) string {
	w, ok := r.Winner()
	if !ok {
		return "none: the log holds no correct re-measurement (the search was interrupted, or nothing ran correctly)"
	}
	n := 0
	for _, m := range r.Remeasured {
		if m.Status == triallog.StatusOK {
			n++
		}
	}
	s := fmt.Sprintf("%s, %.1f µs over %d iterations%s: the fastest of %d configs re-measured after the search", w.Config, w.Score(), w.Iters, w.RoundsNote(), n)
	switch def, ok := r.DefaultRemeasured(); {
	case w.Config.Equal(r.Default):
		s += "; it is the default config"
	case ok:
		s += fmt.Sprintf("; %.2fx the default config (%.1f µs) re-measured with it", def.Score()/w.Score(), def.Score())
	}
	return s
}

func rowOf(r *Run, id string) runRow {
	row := runRow{ID: id, World: fmt.Sprint(r.World), Dtype: r.Dtype, Shape: r.Shape, Strategy: strategyName(r),
		Trials: fmt.Sprint(len(r.Trials)), Winner: "—", Default: "—", Speedup: "—", Config: "no winner"}
	if r.Strategy == "" {
		row.Strategy = "—"
	}
	if w, ok := r.Winner(); ok {
		row.Winner, row.Config = fmt.Sprintf("%.1f", w.Score()), w.Config.String()
		if def, ok := r.DefaultRemeasured(); ok {
			row.Default, row.Speedup = fmt.Sprintf("%.1f", def.Score()), fmt.Sprintf("%.2fx", def.Score()/w.Score())
		}
	}
	return row
}

func scoresOf(rs []triallog.Result) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Score()
	}
	return out
}

func countLogs(runs []*Run) int {
	logs := map[string]bool{}
	for _, r := range runs {
		logs[r.Log] = true
	}
	return len(logs)
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>symmtune report</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { margin: 1.6em 0 0.3em; font-size: 1.05em; }
.meta, figcaption, .note { color: #555; font-size: 0.9em; }
.facts { margin: 0.3em 0; padding-left: 1.2em; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
td.config { text-align: left; font-family: monospace; overflow-wrap: anywhere; }
figure { margin: 0.6em 0; }
.wide { display: flex; flex-wrap: wrap; gap: 1em; }
.wide figure { flex: 1 1 30em; max-width: calc(50% - 0.5em); }
.params { display: flex; flex-wrap: wrap; gap: 0.5em; }
.params figure { flex: 0 1 15.5em; }
svg.plot { width: 100%; height: auto; }
svg.plot text { font-family: "Liberation Sans", Arial, Helvetica, sans-serif !important; }
.key { display: inline-block; margin-right: 1em; white-space: nowrap; }
.swatch { display: inline-block; width: 1.4em; height: 0; border-top: 3px solid; vertical-align: middle; margin-right: 0.3em; }
.swatch.dash { border-top-style: dashed; }
.swatch.dot, .swatch.ring { width: 0.6em; height: 0.6em; border: none; border-radius: 50%; }
.swatch.ring { width: 0.5em; height: 0.5em; border: 2px solid; background: none !important; }
</style>
</head>
<body>
<h1>symmtune report</h1>
<p class="meta">{{.Summary}}; generated {{.Generated}}.</p>
{{if .Notes}}<ul class="note">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<details class="meta"><summary>sources</summary><ul>{{range .Sources}}<li>{{.}}</li>{{end}}</ul></details>
{{range .Kernels}}
<section class="kernel" id="{{.ID}}">
<h2>{{.Name}}</h2>
<div class="wide">{{range .Latency}}{{template "figure" .}}{{end}}</div>
{{if .Rows}}<table>
<tr><th>world</th><th>dtype</th><th>shape</th><th>strategy</th><th>trials</th><th>winner µs</th><th>default µs</th><th>speedup</th><th>winner config</th></tr>
{{range .Rows}}<tr><td>{{.World}}</td><td>{{.Dtype}}</td><td><a href="#{{.ID}}">{{.Shape}}</a></td><td>{{.Strategy}}</td><td>{{.Trials}}</td><td>{{.Winner}}</td><td>{{.Default}}</td><td>{{.Speedup}}</td><td class="config">{{.Config}}</td></tr>
{{end}}</table>
<p class="meta">Winner and default: both re-measured in the same round after the search; speedup = default / winner.</p>{{end}}
{{range .Runs}}
<section class="run" id="{{.ID}}" data-log="{{.Log}}" data-job="{{.Job}}">
<h3>{{.Title}}</h3>
<ul class="facts">{{range .Facts}}<li>{{.}}</li>{{end}}</ul>
<div class="wide">{{range .Wide}}{{template "figure" .}}{{end}}</div>
{{if .Params}}<p class="meta">Effect of each parameter: the median and the best first-pass score of the configs with each value; in brackets, how many configs had it.</p>
<div class="params">{{range .Params}}{{template "figure" .}}{{end}}</div>{{end}}
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
</section>
{{end}}
</section>
{{end}}
</body>
</html>
{{define "figure"}}<figure class="plot" data-kind="{{.Kind}}" data-key="{{.Key}}" data-points="{{.Points}}">
{{.SVG}}
<figcaption>{{range .Legend}}<span class="key"><span class="swatch {{.Mark}}" style="border-color: {{.Color}}; background: {{.Color}}"></span>{{.Label}}</span>{{end}}{{if .Caption}}<br>{{.Caption}}{{end}}</figcaption>
</figure>{{end}}
`))

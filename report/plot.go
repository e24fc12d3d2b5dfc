package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Colors of the roles a mark plays. Every data point is one circle glyph
// of its series' color, so a reader (and the tests) can count them in the
// SVG; the legends are HTML, beside the plot, not glyphs inside it.
var (
	colTrial   = rgb(0x8c, 0x8c, 0x8c) // a first-pass trial
	colBest    = rgb(0x1f, 0x77, 0xb4) // best so far
	colOptimum = rgb(0x17, 0xbe, 0xcf) // the exhaustive optimum
	colWinner  = rgb(0x2c, 0xa0, 0x2c) // the search's winner
	colDefault = rgb(0xd6, 0x27, 0x28) // the kernel's default config
	colMedian  = rgb(0x1f, 0x77, 0xb4) // median per parameter value
	colMin     = rgb(0xff, 0x7f, 0x0e) // best per parameter value
)

// seriesColors colors the latency plots' series: symmtune's first, then
// the peers'.
var seriesColors = []color.RGBA{
	rgb(0x1f, 0x77, 0xb4), rgb(0x2c, 0xa0, 0x2c), rgb(0x94, 0x67, 0xbd), rgb(0x17, 0xbe, 0xcf),
	rgb(0xd6, 0x27, 0x28), rgb(0xff, 0x7f, 0x0e), rgb(0x8c, 0x56, 0x4b), rgb(0xe3, 0x77, 0xc2),
	rgb(0x7f, 0x7f, 0x7f), rgb(0xbc, 0xbd, 0x22),
}

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// hexColor is how SVG and CSS write c.
func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// legendItem is one entry of a plot's HTML legend.
type legendItem struct {
	Color string
	Label string
	Mark  string // line, dash, dot or ring: how the swatch is drawn
}

// figure is one rendered plot.
type figure struct {
	Kind    string // latency, trials, distribution, parameter
	Key     string // which one of its kind: "kernel|world" or the parameter's name
	Title   string
	SVG     template.HTML
	Legend  []legendItem
	Caption string
	Points  int // data points drawn, for the reader of the HTML
}

// sans is the face of all plot text; the page's CSS names metric-compatible
// fallbacks (Arial, Helvetica) for browsers without Liberation Sans.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Title.TextStyle.Font = font.From(sans, 12)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.Add(plotter.NewGrid())
	return p
}

// render draws p as an inline SVG element of w×h inches.
func render(p *plot.Plot, w, h float64) (template.HTML, error) {
	c := vgsvg.New(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("render plot %q: %w", p.Title.Text, err)
	}
	s := b.String()
	// Inline in HTML: drop the XML prologue, keep the <svg> element.
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("render plot %q: no <svg> element", p.Title.Text)
	}
	return template.HTML(`<svg class="plot"` + s[i+len("<svg"):]), nil
}

// points adds a series of circle glyphs (filled, or rings) and,
// optionally, a line through them.
func points(p *plot.Plot, xys plotter.XYs, c color.RGBA, radius float64, filled, line bool, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	if line && len(xys) > 1 {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color, l.Width = c, vg.Points(1.2)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(radius), Shape: ring{}}
	if filled {
		s.GlyphStyle.Shape = draw.CircleGlyph{}
	}
	p.Add(s)
	return nil
}

// ring is gonum's RingGlyph drawn with a line thick enough to see.
type ring struct{}

func (ring) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.3)})
	p := make(vg.Path, 0, 3)
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// hline draws a horizontal line at y across [x0, x1].
func hline(p *plot.Plot, y, x0, x1 float64, c color.RGBA) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(l)
	return nil
}

// logY puts the y axis on a log scale when the values spread over more
// than a factor of 8 (a slow default next to fast tuned configs), with a
// margin so no point sits on the frame.
func logY(p *plot.Plot, lo, hi float64) {
	if !finite(lo) || !finite(hi) {
		return
	}
	if hi/lo <= 8 {
		pad := (hi - lo) * 0.08
		if pad == 0 {
			pad = hi * 0.05
		}
		p.Y.Min, p.Y.Max = math.Max(0, lo-pad), hi+pad
		return
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{format: formatUS}
	p.Y.Min, p.Y.Max = lo/1.15, hi*1.15
}

// logTicks labels a log axis at 1, 2 and 5 times powers of ten (or at
// every integer multiple when the axis spans less than that).
type logTicks struct{ format func(float64) string }

func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, steps := range [][]float64{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		ticks = nil
		labelled := 0
		for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
			for i := 1; i <= 9; i++ {
				v := float64(i) * math.Pow(10, e)
				if v < lo || v > hi {
					continue
				}
				tk := plot.Tick{Value: v}
				for _, s := range steps {
					if float64(i) == s {
						tk.Label = t.format(v)
						labelled++
					}
				}
				ticks = append(ticks, tk)
			}
		}
		if labelled >= 3 {
			return ticks
		}
	}
	if labelled := countLabelled(ticks); labelled >= 2 {
		return ticks
	}
	// A narrow span holds no such value: ordinary ticks read better.
	ticks = plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = t.format(ticks[i].Value)
		}
	}
	return ticks
}

func countLabelled(ticks []plot.Tick) int {
	n := 0
	for _, tk := range ticks {
		if tk.Label != "" {
			n++
		}
	}
	return n
}

// byteTicks labels a log axis of byte counts at powers of two, every
// second or fourth one when they would crowd.
type byteTicks struct{}

func (byteTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(math.Log2(lo)), math.Floor(math.Log2(hi))
	every := 1.0
	for (last-first)/every > 8 {
		every *= 2
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		tk := plot.Tick{Value: math.Exp2(e)}
		if math.Mod(e, every) == 0 {
			tk.Label = formatBytes(tk.Value)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

func formatBytes(b float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.size {
			return fmt.Sprintf("%g %s", b/u.size, u.name)
		}
	}
	return fmt.Sprintf("%g B", b)
}

func formatUS(us float64) string {
	if us >= 1000 {
		return fmt.Sprintf("%gk", us/1000)
	}
	return fmt.Sprintf("%g", us)
}

// formatCount writes a count with an SI suffix (problem sizes m·n·k).
func formatCount(n float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if n >= u.size {
			return fmt.Sprintf("%.3g%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%g", n)
}

// span returns the smallest and largest of xs.
func span(xs ...float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

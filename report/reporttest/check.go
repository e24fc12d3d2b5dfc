// Package reporttest checks a rendered symmtune report against the trial
// logs it was made from, for the tests of the report package and of the
// CLI. It reads the logs with the one trial-log reader (internal/triallog)
// but counts trials, configs and values itself, not through the report's
// model, and counts what the SVG plots draw, so a plot that loses points
// fails.
package reporttest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
)

// Expect is what the report was made from.
type Expect struct {
	Logs []string // the trial log files
	// PeerPoints is how many peer points each latency plot must draw, by
	// "kernel|world"; plots not named draw none.
	PeerPoints map[string]int
}

// Check parses page and checks, for every job of every log: a section
// with a trials plot of one point per correct first-pass trial, a
// distribution plot of one point per distinct such config with the default and the
// winner marked once each, one parameter plot per parameter with more than
// one measured value and one point per value; and per kernel and world, a
// latency plot with one symmtune point per search that chose a winner and
// the expected peer points. Every plot is one <svg>, well-formed XML.
func Check(t testing.TB, page []byte, e Expect) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("report does not parse as HTML: %v", err)
	}
	if n := len(findAll(doc, "body")); n != 1 {
		t.Fatalf("report has %d <body> elements", n)
	}
	checkSVGsWellFormed(t, page)
	figs := findAll(doc, "figure")
	if svgs := len(findAll(doc, "svg")); svgs != len(figs) || svgs == 0 {
		t.Errorf("%d <svg> elements for %d figures; want one per plot", svgs, len(figs))
	}
	for _, f := range figs {
		if n := len(findAll(f, "svg")); n != 1 {
			t.Errorf("figure %s %q holds %d <svg> elements, want 1", attr(f, "data-kind"), attr(f, "data-key"), n)
		}
	}
	jobs := readJobs(t, e.Logs)
	sections := map[string]*html.Node{}
	for _, s := range findAll(doc, "section") {
		if attr(s, "class") == "run" {
			sections[attr(s, "data-log")+"#"+attr(s, "data-job")] = s
		}
	}
	if len(sections) != len(jobs) {
		t.Errorf("report has %d search sections, the logs hold %d jobs", len(sections), len(jobs))
	}
	winners := map[string]int{}
	for _, j := range jobs {
		if j.winner {
			winners[j.kernel+"|"+fmt.Sprint(j.world)]++
		}
		s := sections[j.log+"#"+j.key]
		if s == nil {
			t.Errorf("no section for job %s of %s", j.key, j.log)
			continue
		}
		checkJob(t, s, j)
	}
	latency := map[string]*html.Node{}
	for _, f := range figs {
		if attr(f, "data-kind") == "latency" {
			latency[attr(f, "data-key")] = f
		}
	}
	for key, n := range winners {
		f := latency[key]
		if f == nil {
			t.Errorf("no latency plot for %s", key)
			continue
		}
		var ours, peers int
		for label, c := range legend(f) {
			if strings.HasPrefix(label, "symmtune") {
				ours += glyphs(f, c)
			} else {
				peers += glyphs(f, c)
			}
		}
		if ours != n || peers != e.PeerPoints[key] {
			t.Errorf("latency plot %s draws %d symmtune and %d peer points; want %d (one per search with a winner) and %d", key, ours, peers, n, e.PeerPoints[key])
		}
	}
}

func checkJob(t testing.TB, s *html.Node, j *job) {
	t.Helper()
	byKind := map[string][]*html.Node{}
	for _, f := range findAll(s, "figure") {
		byKind[attr(f, "data-kind")] = append(byKind[attr(f, "data-kind")], f)
	}
	if j.okFirst == 0 {
		if len(byKind) != 0 {
			t.Errorf("%s: plots drawn for a job where nothing ran correctly", j.key)
		}
		return
	}
	if len(byKind["trials"]) != 1 || len(byKind["distribution"]) != 1 {
		t.Fatalf("%s of %s: %d trials and %d distribution plots, want 1 each", j.key, j.log, len(byKind["trials"]), len(byKind["distribution"]))
	}
	tr := byKind["trials"][0]
	lt := legend(tr)
	if n := glyphs(tr, lt["trial"]); n != j.okFirst {
		t.Errorf("%s of %s: trials plot draws %d trials, the log holds %d correct first-pass trials", j.key, j.log, n, j.okFirst)
	}
	// A search's own exhaustive optimum is drawn; another's (an exhaustive
	// search of the same job) only with the caption naming its log.
	_, drawn := lt["exhaustive optimum"]
	borrowed := strings.Contains(text(tr), "is from ")
	if drawn != (j.exhaustive || borrowed) || (j.exhaustive && borrowed) {
		t.Errorf("%s of %s: exhaustive optimum drawn: %v, borrowed: %v; the log says the search was exhaustive: %v", j.key, j.log, drawn, borrowed, j.exhaustive)
	}
	di := byKind["distribution"][0]
	ld := legend(di)
	if n := glyphs(di, ld["config"]); n != j.okConfigs {
		t.Errorf("%s of %s: distribution plot draws %d configs, want %d", j.key, j.log, n, j.okConfigs)
	}
	if n := glyphs(di, ld["default config"]); n != b2i(j.defaultOK) {
		t.Errorf("%s of %s: default marked %d times, want %d", j.key, j.log, n, b2i(j.defaultOK))
	}
	if n := glyphs(di, ld["winner"]); n != b2i(j.winner) {
		t.Errorf("%s of %s: winner marked %d times, want %d", j.key, j.log, n, b2i(j.winner))
	}
	params := map[string]*html.Node{}
	for _, f := range byKind["parameter"] {
		params[attr(f, "data-key")] = f
	}
	want := 0
	for name, values := range j.values {
		if len(values) < 2 {
			continue
		}
		want++
		f := params[name]
		if f == nil {
			t.Errorf("%s of %s: no plot for parameter %s (%d values)", j.key, j.log, name, len(values))
			continue
		}
		l := legend(f)
		if m, b := glyphs(f, l["median"]), glyphs(f, l["best"]); m != len(values) || b != len(values) {
			t.Errorf("%s of %s: parameter %s plot draws %d medians and %d bests, want %d each", j.key, j.log, name, m, b, len(values))
		}
	}
	if len(params) != want {
		t.Errorf("%s of %s: %d parameter plots, want %d", j.key, j.log, len(params), want)
	}
}

// job is what the checker expects of one job, read from the raw log.
type job struct {
	log, key, kernel string
	world            int
	okFirst          int // correct first-pass trials
	okConfigs        int // distinct configs among them
	defaultOK        bool
	winner           bool
	exhaustive       bool
	values           map[string]map[space.Value]bool
}

func readJobs(t testing.TB, logs []string) []*job {
	t.Helper()
	var out []*job
	for _, path := range logs {
		lf, err := triallog.Read(path) // a torn last line: the report skips it too
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]*job{}
		first := map[string]string{} // job → its first config, the default in older logs
		marked := map[string]string{}
		okConfigs := map[string]map[string]bool{}
		configs := map[string]map[string]bool{}
		valid := map[string]int{}
		for _, l := range lf.Results {
			key := fmt.Sprintf("%s|%s|%d|%s|%s", l.Kernel, l.Backend, l.World, l.Dtype, l.Shape)
			j := byKey[key]
			if j == nil {
				j = &job{log: path, key: key, kernel: l.Kernel, world: l.World, values: map[string]map[space.Value]bool{}}
				byKey[key] = j
				out = append(out, j)
				okConfigs[key], configs[key] = map[string]bool{}, map[string]bool{}
			}
			cfg := l.Config.String()
			if l.Refined {
				j.winner = j.winner || l.Status == triallog.StatusOK
				continue
			}
			if _, ok := first[key]; !ok {
				first[key] = cfg
			}
			if l.Default {
				marked[key] = cfg
			}
			configs[key][cfg] = true
			valid[key] = max(valid[key], l.ValidConfigs)
			if l.Status != triallog.StatusOK {
				continue
			}
			j.okFirst++
			okConfigs[key][cfg] = true
			for name, v := range l.Config {
				if j.values[name] == nil {
					j.values[name] = map[space.Value]bool{}
				}
				j.values[name][v] = true
			}
		}
		for key, j := range byKey {
			def := first[key]
			if m, ok := marked[key]; ok {
				def = m
			}
			j.defaultOK = okConfigs[key][def]
			j.okConfigs = len(okConfigs[key])
			j.exhaustive = valid[key] > 0 && len(configs[key]) >= valid[key]
		}
	}
	return out
}

// legend maps a figure's legend labels to their colors.
func legend(fig *html.Node) map[string]string {
	out := map[string]string{}
	for _, key := range findAll(fig, "span") {
		if attr(key, "class") != "key" || key.FirstChild == nil {
			continue
		}
		sw := key.FirstChild
		m := regexp.MustCompile(`border-color: *(#[0-9a-f]{6})`).FindStringSubmatch(attr(sw, "style"))
		if m == nil || sw.NextSibling == nil {
			continue
		}
		out[strings.TrimSpace(sw.NextSibling.Data)] = m[1]
	}
	return out
}

// glyphs counts the circle glyphs (paths drawn with arcs) of color c: one
// per data point.
func glyphs(fig *html.Node, c string) int {
	if c == "" {
		return 0
	}
	n := 0
	for _, p := range findAll(fig, "path") {
		style := strings.ToLower(attr(p, "style"))
		if !strings.Contains(attr(p, "d"), "A") {
			continue
		}
		if strings.Contains(style, "fill:"+c) || (strings.Contains(style, "fill:none") && strings.Contains(style, "stroke:"+c)) {
			n++
		}
	}
	return n
}

// checkSVGsWellFormed decodes every inline SVG as XML: a browser renders
// inline SVG leniently, but a plot that is not well-formed is broken.
func checkSVGsWellFormed(t testing.TB, page []byte) {
	t.Helper()
	for i, rest := 0, page; ; i++ {
		start := bytes.Index(rest, []byte("<svg"))
		if start < 0 {
			return
		}
		end := bytes.Index(rest[start:], []byte("</svg>"))
		if end < 0 {
			t.Fatalf("svg %d is not closed", i)
		}
		svg := rest[start : start+end+len("</svg>")]
		dec := xml.NewDecoder(bytes.NewReader(svg))
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("svg %d is not well-formed XML: %v", i, err)
			}
		}
		rest = rest[start+end:]
	}
}

// WriteFile writes a test input file under dir and returns its path.
func WriteFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func findAll(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

// text is the text n holds.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

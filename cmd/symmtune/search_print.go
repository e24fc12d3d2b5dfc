package main

// What search shows while it runs (the progress line) and when a job ends
// (its summary and best configs).

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"

	"github.com/symmtune/symmtune/tuner"
)

// progressReporter draws a progress line on the terminal: the job, trial
// i/N, the best score so far and the time left.
type progressReporter struct {
	bar   *progressbar.ProgressBar
	label string
}

func (p *progressReporter) Start(job tuner.Job, total int) {
	p.label = fmt.Sprintf("%s w%d %s %s", job.Kernel, job.World, job.Dtype, job.ShapeText)
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(p.label+" | best: none yet"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(20),
		progressbar.OptionClearOnFinish(),
	)
}

func (p *progressReporter) Trial(done, total int, r tuner.Result, best *tuner.Result) {
	if p.bar == nil {
		return
	}
	desc := p.label + " | best: none yet"
	if best != nil {
		desc = fmt.Sprintf("%s | best %.1fµs", p.label, best.Score())
	}
	_ = p.bar.Set(done)
	p.bar.Describe(desc)
}

// Budget is told the budget a job given none has planned: the bar's total
// becomes it, and the note is printed above the bar.
func (p *progressReporter) Budget(total int, note string) {
	if p.bar == nil {
		return
	}
	_ = p.bar.Clear()
	fmt.Fprintf(os.Stderr, "%s: budget: %s\n", p.label, note)
	p.bar.ChangeMax(total)
}

func (p *progressReporter) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}

// printOutcome prints the job's summary and its best configs in two
// groups that are never ranked together: the configs re-measured after the
// search (the winner is the fastest of these), then the best of the rest
// by their first-pass score, taken with fewer iterations. Each group's
// speedup is over the default measured in the same round.
func printOutcome(w io.Writer, o *tuner.Outcome, top int) {
	fmt.Fprintf(w, "\n%s  backend=%s  world=%d  dtype=%s  shape=%s\n", o.Desc.Name, o.Backend, o.Job.World, o.Job.Dtype, o.Shape.Format(o.Desc.Dims...))
	fmt.Fprintf(w, "hardware: %s\n", o.Hardware.ID())
	var counts []string
	for _, st := range tuner.Statuses {
		if n := o.Counts[st]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", st, n))
		}
	}
	fmt.Fprintf(w, "space %d configs, %d valid; trials: %s; %.1fs\n", o.SpaceSize, o.ValidCount, strings.Join(counts, ", "), o.Elapsed.Seconds())
	if o.Budget.Note != "" {
		fmt.Fprintf(w, "budget: %s\n", o.Budget.Note)
	}
	if line := o.Transfer.Line(); line != "" {
		fmt.Fprintf(w, "transfer: %s\n", line)
	}
	if o.Time.Total > 0 {
		fmt.Fprintf(w, "time: %s\n", o.Time)
	}
	if len(o.Startup.Ranks) > 0 {
		ranks := make([]string, len(o.Startup.Ranks))
		for i, d := range o.Startup.Ranks {
			ranks[i] = fmt.Sprintf("%.2f", d.Seconds())
		}
		fmt.Fprintf(w, "start-up: ranks %s s (exec to handshake); setup and connect %.2f s\n", strings.Join(ranks, " "), o.Startup.Setup.Seconds())
	}
	def := o.Desc.Default.Key()
	speedup := func(r tuner.Result) string {
		if s := o.Speedup(r); s > 0 {
			return fmt.Sprintf("%.2fx", s)
		}
		return "-"
	}
	name := func(r tuner.Result) string {
		if r.Config.Key() == def {
			return r.Config.String() + "  (default)"
		}
		return r.Config.String()
	}
	remeasured := o.Remeasured()
	if len(remeasured) > 0 {
		fmt.Fprintf(w, "re-measured after the search, %d iterations each%s: the best first-pass configs (within %.0f%% of the best) and the default%s\n",
			remeasured[0].Iters, remeasured[0].RoundsNote(), 100*(tuner.FinalistsWithin-1), medianRound(remeasured[0]))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tmedian µs\tmin µs\tp90 µs\tfirst pass µs\tvs default re-measured\tconfig")
		for i, r := range remeasured {
			first := "-"
			if f, ok := o.FirstPassOf(r.Config); ok && f.Status == tuner.StatusOK {
				first = fmt.Sprintf("%.1f", f.Score())
			}
			if r.Status != tuner.StatusOK {
				fmt.Fprintf(tw, "  %d\t%s\t\t\t%s\t-\t%s\n", i+1, r.Status, first, name(r))
				continue
			}
			fmt.Fprintf(tw, "  %d\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\n", i+1, r.Score(), deref(r.MinUS), deref(r.P90US), first, speedup(r), name(r))
		}
		tw.Flush()
	}
	if rest := o.FirstPass(top - len(remeasured)); len(rest) > 0 {
		fmt.Fprintf(w, "first pass only (not re-measured), %d iterations each:\n", rest[0].Iters)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tmedian µs\tmin µs\tp90 µs\tvs default first pass\tconfig")
		for i, r := range rest {
			fmt.Fprintf(tw, "  %d\t%.1f\t%.1f\t%.1f\t%s\t%s\n", i+1, r.Score(), deref(r.MinUS), deref(r.P90US), speedup(r), name(r))
		}
		tw.Flush()
	}
	if o.Best != nil {
		fmt.Fprintf(w, "winner: %s  %.1f µs (min %.1f, p90 %.1f over %d iterations%s): %s\n", o.Best.Config, o.Best.Score(),
			deref(o.Best.MinUS), deref(o.Best.P90US), o.Best.Iters, o.Best.RoundsNote(), howChosen(o, len(remeasured)))
	}
	printSetAside(w, o.SetAside, o.SetAsideTo)
	if k, e := o.Kept, o.Entry; k != nil && e != nil && (k.KernelVersion != e.KernelVersion || !k.Config.Equal(e.Config) || k.MedianUS != e.MedianUS) {
		fmt.Fprintf(w, "cache: keeps the better entry it had: %s  %.1f µs (kernel version %s, tuned %s)\n", k.Config, k.MedianUS, k.KernelVersion, k.TunedAt.Format("2006-01-02 15:04"))
	}
}

// howChosen says, for the winner's line, which measurements the winner won.
func howChosen(o *tuner.Outcome, remeasured int) string {
	how := fmt.Sprintf("the fastest of the %d configs re-measured after the search", remeasured)
	if remeasured == 1 {
		how = "the only config re-measured after the search"
	}
	switch s := o.Speedup(*o.Best); {
	case o.Best.Config.Equal(o.Desc.Default):
		// The default may have kept its place over a faster finalist (tuner.Winner).
		if rm := o.Remeasured(); o.Best.Refined && len(rm) > 0 && !rm[0].Config.Equal(o.Desc.Default) {
			return fmt.Sprintf("the default config: the fastest re-measured config is only %.3fx faster, and the default keeps its place unless beaten by %.0f%%",
				o.Speedup(rm[0]), 100*(tuner.DefaultMargin-1))
		}
		return how + "; it is the default config"
	case s > 0:
		return fmt.Sprintf("%s; %.2fx the default's re-measured median", how, s)
	case o.Default == nil:
		return how + "; the default config cannot run this problem, so there is no speedup to report"
	default:
		return how + "; the default config did not run correctly, so there is no speedup"
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// medianRound says which round's figures a re-measurement in rounds shows.
func medianRound(r tuner.Result) string {
	if r.Rounds > 1 {
		return "; each row is that config's median round"
	}
	return ""
}

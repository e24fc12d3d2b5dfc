package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/symmtune/symmtune/report"
)

// newReportCmd is `symmtune report`: one self-contained HTML page of plots
// from trial logs, the cache and peer timings. Bad input (a file that is
// not a trial log, a directory without logs, a malformed peers file)
// exits 2 with one line and writes nothing.
func newReportCmd(g *globals) *cobra.Command {
	var (
		logs, peers []string
		output      string
	)
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write an HTML report with plots of what searches found",
		Long: "Reads trial logs (--log FILE or DIR, several allowed; a directory's *.jsonl and\n" +
			"*.jsonl.gz files; a log named *.gz is read gunzipped) and writes one\n" +
			"self-contained HTML page (inline SVG, no scripts, nothing fetched):\n" +
			"per search, the best score against trial number, the score distribution with the\n" +
			"winner and the default marked, and each parameter's effect; per kernel and world\n" +
			"size, the tuned latency against problem size, beside peer timings given with\n" +
			"--peers (CSV kind,impl,shape,us as peer_baselines.py prints it; the world size is\n" +
			"read from the file name, peers-w4.csv, or given as --peers 4=FILE).\n\n" +
			"Without --log the cache's tuned configs are plotted; with --log the cache is read\n" +
			"only when --cache is given.",
		Example: "  symmtune report --log trials.jsonl -o report.html\n" +
			"  symmtune report --log bench/out/logs --peers bench/out/logs/peers-w4.csv -o bench/out/report.html",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := report.Input{Logs: logs}
			if len(logs) == 0 || cmd.Flags().Changed("cache") {
				st, err := g.openCache()
				if err != nil {
					return err
				}
				defer st.Close()
				in.Cache = st
			}
			for _, p := range peers {
				in.Peers = append(in.Peers, report.ParsePeerArg(p))
			}
			if output != "-" {
				if st, err := os.Stat(filepath.Dir(output)); err != nil || !st.IsDir() {
					return usageError{fmt.Errorf("-o %s: no directory %s to write it in", output, filepath.Dir(output))}
				}
			}
			d, err := report.Load(in)
			if err != nil {
				return err
			}
			for _, n := range d.Notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "symmtune: note: %s\n", n)
			}
			if output == "-" {
				return report.Render(cmd.OutOrStdout(), d, time.Now())
			}
			if err := report.WriteFile(output, d, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s (%s)\n", output, reportCounts(len(d.Runs), len(d.Entries), in.Cache != nil))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&logs, "log", nil, "trial log (.gz: gzipped), or a directory of them (*.jsonl, *.jsonl.gz); repeat for more")
	f.StringArrayVar(&peers, "peers", nil, "peer timings CSV (kind,impl,shape,us), as FILE or WORLD=FILE; repeat for more")
	f.StringVarP(&output, "output", "o", "report.html", "HTML file to write (- for stdout)")
	return cmd
}

// reportCounts says what a report holds: its searches, and its tuned
// configs where the cache was read.
func reportCounts(runs, entries int, cacheRead bool) string {
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	out := plural(runs, "search", "searches")
	if cacheRead {
		out += ", " + plural(entries, "tuned config", "tuned configs")
	}
	return out
}

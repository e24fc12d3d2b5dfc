package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/symmtune/symmtune/tuner/strategy"
)

// newReplayCmd is `symmtune replay`: run a search strategy against a
// recorded landscape (the trial log of an exhaustive search) instead of
// real kernels, to see which configs it would have found in how many
// trials. Bad input (flags, the log, the strategy name) comes back as
// *strategy.InputError, which the root command maps to exit code 2.
func newReplayCmd() *cobra.Command {
	var (
		logPath, name string
		budget        int
		seed          int64
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Replay a search strategy against a recorded trial log",
		Long: "Runs a search strategy against the trial log of an exhaustive search\n" +
			"(symmtune search --strategy exhaustive --log FILE) instead of running kernels:\n" +
			"every proposed config is one trial, answered from the log (configs missing\n" +
			"from it count as invalid). Prints the best config reached and the trials used;\n" +
			"--json prints exactly one JSON object.\n\n" +
			"Strategies: " + strings.Join(strategy.Names(), ", "),
		Example: "  symmtune replay --log tuner/testdata/landscape-cpu-matmulrs-w2-m256n256k256.jsonl --strategy pattern --budget-trials 150 --seed 1 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if logPath == "" {
				return &strategy.InputError{Err: errors.New("replay needs --log, the trial log of an exhaustive search")}
			}
			if budget < 0 {
				return &strategy.InputError{Err: fmt.Errorf("--budget-trials %d: want 0 (every valid config) or more", budget)}
			}
			l, err := strategy.LoadLandscape(logPath)
			if err != nil {
				return err
			}
			if l.Torn > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: line %d is cut short (the search was killed while writing it); skipped\n", logPath, l.Torn)
			}
			res, err := strategy.Replay(l, name, budget, seed)
			if err != nil {
				return err // names the strategy and the log; *InputError for a bad name
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				return enc.Encode(res)
			}
			line := fmt.Sprintf("%s (seed %d): %d/%d trials of %d valid configs (space %d)",
				res.Strategy, res.Seed, res.TrialsUsed, budgetOr(budget, res.ValidConfigs), res.ValidConfigs, res.SpaceSize)
			if res.BestConfig == nil {
				line += ": no config passed"
			} else {
				line += fmt.Sprintf(": best %.1f µs", res.BestScoreUS)
				if opt, ok := l.Optimum(); ok && opt.ScoreUS > 0 {
					line += fmt.Sprintf(" (%+.1f%% vs the exhaustive optimum %.1f µs)", 100*(res.BestScoreUS/opt.ScoreUS-1), opt.ScoreUS)
				}
				cfg, _ := json.Marshal(res.BestConfig)
				line += " " + string(cfg)
			}
			_, err = fmt.Fprintln(out, line)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&logPath, "log", "", "trial log (JSON lines; gzipped when the name ends in .gz) of an exhaustive search: the landscape")
	f.StringVar(&name, "strategy", strategy.Auto, "search strategy ("+strings.Join(strategy.Names(), ", ")+")")
	f.IntVar(&budget, "budget-trials", 0, "at most this many trials (0: every valid config)")
	f.Int64Var(&seed, "seed", 1, "seed for randomized strategies")
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &strategy.InputError{Err: err} })
	return cmd
}

// budgetOr is the budget a replay runs under: b, or all valid configs.
func budgetOr(b, valid int) int {
	if b <= 0 || b > valid {
		return valid
	}
	return b
}

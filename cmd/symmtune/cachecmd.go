package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/cache/storage"
)

func newCacheCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "cache",
		Short: "Work on tuned-config caches (files or Redis) as a whole",
		Args:  cobra.NoArgs,
		// Runnable, so that cobra refuses an unknown subcommand (NoArgs)
		// instead of printing the help and exiting 0.
		RunE: func(*cobra.Command, []string) error {
			return usageError{errors.New("cache needs a command: merge (symmtune cache merge --help)")}
		},
	}
	c.AddCommand(newCacheMergeCmd(g))
	return c
}

func newCacheMergeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT IN...",
		Short: "Merge caches from many nodes into OUT: per slot the better entry wins",
		Long: "Merges the caches IN... into OUT (each a file or a redis:// URL; OUT is created when\n" +
			"missing and may also be one of the INs). Per slot (kernel, backend, hardware, world,\n" +
			"dtype, shape) the entry of the newest kernel version wins and, within a version, the\n" +
			"lowest median. Every entry that did not win is reported: conflicts (another config),\n" +
			"superseded kernel versions, re-measurements of the winner's config. A file OUT is\n" +
			"rewritten atomically; Redis is written entry by entry, each whole. Merging again,\n" +
			"or in another order, gives the same result.",
		Example: "  symmtune cache merge configs.toml node-*/configs.toml\n" +
			"  symmtune cache merge redis://tuning-db:6379/0 node-*/configs.toml",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd, g, args[0], args[1:])
		},
	}
}

func runMerge(cmd *cobra.Command, g *globals, outLoc string, inLocs []string) error {
	ctx := cmd.Context()
	// Every location is checked before anything is read or written.
	out, err := g.open(outLoc)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := out.Check(ctx); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return usageError{fmt.Errorf("output cache: %w", err)}
	}
	ins := make([]cache.Storage, len(inLocs))
	for i, loc := range inLocs {
		if ins[i], err = storage.Open(loc); err != nil {
			return err
		}
		defer ins[i].Close()
		if f, ok := ins[i].(cache.File); ok {
			// A missing file would merge as empty: most likely a typo.
			if _, err := os.Stat(f.Path); err != nil {
				return usageError{fmt.Errorf("input cache %s: %w", f.Path, errors.Unwrap(err))}
			}
		}
	}
	srcs := make([]cache.Source, len(ins))
	total := 0
	for i, in := range ins {
		s, err := in.Load(ctx)
		if err != nil {
			return err
		}
		reportDamage(cmd.ErrOrStderr(), s)
		srcs[i] = cache.Source{Name: in.Location(), Entries: s.Entries()}
		total += len(srcs[i].Entries)
	}
	m, err := out.Put(ctx, srcs...)
	if err != nil {
		return err
	}
	after, err := out.Load(ctx)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "merged %d entries from %d caches into %s, which holds %d entries\n", total, len(ins), out.Location(), len(after.Entries()))
	fmt.Fprintf(w, "%d conflicts, %d superseded kernel versions, %d re-measurements, %d duplicates\n",
		len(m.Conflicts), len(m.Superseded), len(m.Remeasured), m.Duplicates)
	printSetAside(w, m.SetAside, m.SetAsideTo)
	printDrops(w, "conflict", m.Conflicts)
	printDrops(w, "superseded", m.Superseded)
	return nil
}

func printDrops(w io.Writer, what string, ds []cache.Dropped) {
	for _, d := range ds {
		fmt.Fprintf(w, "%s: %s\n", what, strings.TrimSpace(d.String()))
	}
}

// printSetAside says which damaged entries a write moved out of the way,
// and where it kept them.
func printSetAside(w io.Writer, ds []cache.Damage, to string) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(w, "cache: set %d damaged entries aside in %s:\n", len(ds), to)
	for _, d := range ds {
		fmt.Fprintf(w, "  %v\n", d)
	}
}

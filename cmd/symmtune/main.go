// Command symmtune tunes multi-rank kernels (all-reduce, matmul+reduce-
// scatter, all-gather+matmul) and serves the tuned configs: `search` runs a
// tuning job over plugin processes, one per rank; `lookup` and `show` read
// the cache; `cache merge` combines caches from many nodes; `plugins` lists
// what can be tuned; `replay` runs a search strategy against a recorded
// trial log; `report` draws an HTML page of plots from trial logs, the
// cache and peer timings.
//
// Exit codes: 0 success, 1 failure while working, 2 bad input (nothing was
// run or written), 3 lookup found no entry, 130 interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/cache/storage"
	"github.com/symmtune/symmtune/tuner"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// Exit codes.
const (
	exitFailure     = 1
	exitUsage       = 2
	exitNotFound    = 3
	exitInterrupted = 130
)

// usageError marks bad input from the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError carries a specific exit code with its message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// globals are the flags every subcommand shares.
type globals struct {
	pluginDir   string
	cachePath   string
	verbose     bool
	lockTimeout time.Duration
	stderr      io.Writer // for notes while a command waits
	// allowInsecure and pins say which plugin binaries may run (trust).
	allowInsecure bool
	pins          []string
}

// trust is what --allow-insecure-plugins and --pin ask of plugin
// binaries. A malformed --pin is a usage error.
func (g *globals) trust() (tuner.Trust, error) {
	t := tuner.Trust{AllowInsecure: g.allowInsecure, Pins: map[string]string{}}
	for _, p := range g.pins {
		kernel, sum, ok := strings.Cut(p, "=")
		if !ok || kernel == "" {
			return t, usageError{fmt.Errorf("--pin %q: want KERNEL=sha256:HEX", p)}
		}
		if err := tuner.CheckPin(sum); err != nil {
			return t, usageError{fmt.Errorf("--pin %s: %v", kernel, err)}
		}
		t.Pins[kernel] = sum
	}
	return t, nil
}

// cacheLocation is --cache, else $SYMMTUNE_CACHE, else the default file.
func (g *globals) cacheLocation() string {
	if g.cachePath != "" {
		return g.cachePath
	}
	return cache.DefaultPath()
}

// openCache opens the cache that --cache names.
func (g *globals) openCache() (cache.Storage, error) { return g.open(g.cacheLocation()) }

// open opens the cache at loc; a file's writes wait for its lock as
// --lock-timeout says, telling stderr after a while who holds it.
func (g *globals) open(loc string) (cache.Storage, error) {
	st, err := storage.Open(loc)
	if err != nil {
		return nil, err
	}
	if f, ok := st.(cache.File); ok {
		f.Lock = cache.LockWait{Timeout: g.lockTimeout, Waiting: func(holder string) {
			give := "Ctrl-C or --lock-timeout to give up"
			if g.lockTimeout > 0 {
				give = fmt.Sprintf("giving up after --lock-timeout %v", g.lockTimeout)
			}
			fmt.Fprintf(g.stderr, "symmtune: waiting for the lock of cache %s, held by %s (%s)\n", f.Path, holder, give)
		}}
		st = f
	}
	return st, nil
}

// reportDamage says on w what a load of the cache left out, one line each.
func reportDamage(w io.Writer, store *cache.Store) {
	for _, d := range store.Damaged() {
		fmt.Fprintf(w, "symmtune: warning: %v; skipped (the next write to this cache sets it aside)\n", d)
	}
}

func (g *globals) logger() *slog.Logger {
	level := slog.LevelWarn
	if g.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func (g *globals) pluginLogger() hclog.Logger {
	if !g.verbose {
		return hclog.NewNullLogger()
	}
	return hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: os.Stderr, Level: hclog.Debug})
}

func newRootCmd() *cobra.Command { return newRootCmdIO(os.Stderr) }

func newRootCmdIO(stderr io.Writer) *cobra.Command {
	g := &globals{stderr: stderr}
	root := &cobra.Command{
		Use:           "symmtune",
		Short:         "Autotuner for multi-rank communication+compute kernels",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.pluginDir, "plugin-dir", tuner.DefaultPluginDir(), "directory holding symmtune-plugin-* executables (CUDA builds in its cuda/ subdirectory); default $"+tuner.EnvPluginDir+", else the symmtune binary's directory")
	// No default value here: cobra would print $SYMMTUNE_CACHE in --help,
	// and a Redis URL there may hold a password.
	root.PersistentFlags().StringVar(&g.cachePath, "cache", "", "tuned-config cache: a file, or redis://[user:password@]host:port/db (rediss:// for TLS; credentials also from $"+storage.EnvRedisUsername+" and $"+storage.EnvRedisPassword+") (default $SYMMTUNE_CACHE, else $XDG_CACHE_HOME/symmtune/configs.toml)")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log details, plugin output included, to stderr")
	root.PersistentFlags().BoolVar(&g.allowInsecure, "allow-insecure-plugins", false, "run plugin binaries even when they or a directory above them are writable by group or others, or owned by another user (refused by default)")
	root.PersistentFlags().StringArrayVar(&g.pins, "pin", nil, "KERNEL=sha256:HEX: run that kernel's plugin only if its binary has this SHA-256, and run exactly the bytes hashed (repeatable; over a job file's [plugins])")
	root.PersistentFlags().DurationVar(&g.lockTimeout, "lock-timeout", 0, "give up waiting for another writer's lock on the cache file after this long, e.g. 30s (0: wait; Ctrl-C ends any wait)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if g.lockTimeout < 0 {
			return usageError{fmt.Errorf("--lock-timeout %v: must not be negative", g.lockTimeout)}
		}
		return nil
	}
	root.AddCommand(newSearchCmd(g), newLookupCmd(g), newShowCmd(g), newPluginsCmd(g), newReplayCmd(), newReportCmd(g), newCacheCmd(g))
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

// run executes the command line and maps the outcome to an exit code,
// printing one line for any error.
func run(ctx context.Context, args []string) int {
	return runIO(ctx, args, os.Stdout, os.Stderr)
}

// runIO is run with the output streams given, for tests.
func runIO(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmdIO(stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := exitFailure
	var ee exitError
	var ue usageError
	var ie *tuner.InputError
	var se *strategy.InputError
	var ce *cache.FileError
	var le *storage.LocationError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &ue), errors.As(err, &ie), errors.As(err, &se), errors.As(err, &ce), errors.As(err, &le), isCobraUsage(err):
		code = exitUsage
	case errors.Is(err, context.Canceled):
		code = exitInterrupted
	}
	fmt.Fprintf(stderr, "symmtune: %v\n", err)
	return code
}

// isCobraUsage recognizes cobra's own errors for unknown commands and
// wrong argument counts, which do not pass through the flag error hook.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "unknown shorthand flag", "unknown flag", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

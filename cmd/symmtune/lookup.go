package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner"
)

func newLookupCmd(g *globals) *cobra.Command {
	var kernel, shape, dtype, backend string
	var world int
	var asJSON, anyHW bool
	cmd := &cobra.Command{
		Use:   "lookup",
		Short: "Print the tuned config for a kernel, world size, dtype and shape",
		Long: "Prints the cached config for this machine's hardware and the plugin's current kernel\n" +
			"version: the exact shape if tuned, else the nearest tuned shape (saying so on stderr).\n" +
			"The plugin checks the config at the asked shape; an entry it rejects is skipped for the\n" +
			"next best. Exit code 3 when there is none; 2 for a dtype the plugin does not take.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kernel == "" || world == 0 || shape == "" {
				return usageError{errors.New("lookup needs --kernel, --world and --shape")}
			}
			if world < 1 {
				return usageError{fmt.Errorf("world size %d: want at least 1", world)}
			}
			st, err := g.openCache()
			if err != nil {
				return err
			}
			defer st.Close()
			q := cache.Query{Kernel: kernel, World: world, Dtype: dtype}
			ctx, stderr := cmd.Context(), cmd.ErrOrStderr()
			var m cache.Match
			var found bool
			var loaded *cache.Store
			var dims []string
			answer := func(store *cache.Store, ds []string, validate tuner.Validator, sp *space.Space) error {
				loaded, dims = store, ds
				sh, err := space.ParseShape(shape, dims)
				if err != nil {
					return usageError{err}
				}
				q.Shape = sh
				reportDamage(stderr, store)
				m, found, err = lookupChecked(ctx, stderr, store, q, validate, sp)
				return err
			}
			if anyHW {
				store, err := st.Load(ctx)
				if err != nil {
					return err
				}
				if err := answer(store, nil, nil, nil); err != nil {
					return err
				}
			} else {
				// The plugin knows its kernel version and the hardware: an
				// entry tuned for another kernel version or machine is stale
				// (one tuned under another driver of the same hardware is
				// not; Lookup says so). It also checks the config found.
				trust, err := g.trust()
				if err != nil {
					return err
				}
				_, err = tuner.InspectWith(ctx, g.pluginDir, kernel, backend, world, trust, g.pluginLogger(), func(info *tuner.PluginInfo, validate tuner.Validator) error {
					if err := tuner.CheckDtype(kernel, info.Backend, info.Desc.Dtypes, dtype); err != nil {
						return err
					}
					q.KernelVersion, q.Backend, q.Machine = info.Desc.KernelVersion, info.Backend, info.Hardware
					store, err := st.Load(ctx)
					if err != nil {
						return err
					}
					return answer(store, info.Desc.Dims, validate, &info.Desc.Space)
				})
				if err != nil {
					return err
				}
			}
			if !found {
				msg := fmt.Sprintf("no tuned config for %s world %d %s %s in %s", kernel, world, dtype, q.Shape.Format(dims...), st.Location())
				if q.KernelVersion != "" && loaded != nil {
					msg += staleNote(loaded, q, q.Shape, dims)
				}
				return exitError{exitNotFound, msg}
			}
			return printMatch(cmd.OutOrStdout(), stderr, m, q.Shape, q.Machine, asJSON, anyHW)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&kernel, "kernel", "", "kernel name")
	fl.IntVar(&world, "world", 0, "number of ranks")
	fl.StringVar(&shape, "shape", "", "problem shape, e.g. n=1048576")
	fl.StringVar(&dtype, "dtype", "f32", "element type")
	fl.StringVar(&backend, "backend", "auto", "auto, cpu or cuda")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	fl.BoolVar(&anyHW, "any-hardware", false, "match entries of any hardware and kernel version (no plugin needed)")
	return cmd
}

// staleNote says, for a lookup that found nothing at the installed
// plugin's kernel version, whether the cache holds an entry of another
// version for the same hardware (the kernel changed since it was tuned, so
// it is not used) and how to tune the current one; "" when it holds none.
func staleNote(store *cache.Store, q cache.Query, sh space.Shape, dims []string) string {
	old := q
	old.KernelVersion = ""
	m, ok := store.Lookup(old)
	if !ok {
		return ""
	}
	e := m.Entry
	what := "an entry"
	if !m.Exact {
		what = "an entry for the nearest shape " + e.Shape.Format(dims...)
	}
	return fmt.Sprintf("; it has %s tuned %s for kernel version %s, but the installed %s plugin is version %s "+
		"(the kernel changed since, so the entry is not used); re-tune with: symmtune search --kernel %s --world %d "+
		"--shape %s --dtype %s --backend %s", what, e.TunedAt.Format("2006-01-02"), orDash(e.KernelVersion), q.Kernel,
		q.KernelVersion, q.Kernel, q.World, sh.Format(dims...), q.Dtype, q.Backend)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// lookupChecked is store.Lookup that, with the plugin at hand, leaves out
// entries whose config is not in its space (sp) or that it rejects at the
// asked shape (validate), saying so on stderr, and answers with the next
// best entry instead. A nearest-shape entry is otherwise handed out
// unchecked: issue 55 found chunk=65536 handed out for n=1024.
func lookupChecked(ctx context.Context, stderr io.Writer, store *cache.Store, q cache.Query, validate tuner.Validator, sp *space.Space) (cache.Match, bool, error) {
	rejected := map[cache.Slot]bool{}
	q.Skip = func(e *cache.Entry) bool { return rejected[e.Key.Slot()] }
	for {
		m, ok := store.Lookup(q)
		if !ok || sp == nil {
			return m, ok, nil
		}
		e := m.Entry
		why := ""
		if err := sp.Check(e.Config); err != nil && e.KernelVersion == q.KernelVersion {
			why = fmt.Sprintf("its config %s is not in the plugin's space (%v): a damaged entry", e.Config, err)
		} else if validate != nil {
			reason, err := validate(ctx, e.Config, space.Problem{Shape: q.Shape, Dtype: q.Dtype})
			if err != nil {
				return cache.Match{}, false, err
			}
			if reason != "" {
				why = fmt.Sprintf("the plugin rejects its config %s at %s: %s", e.Config, q.Shape, reason)
			}
		}
		if why == "" {
			return m, true, nil
		}
		fmt.Fprintf(stderr, "# skipped the entry tuned for %s: %s\n", e.Shape, why)
		rejected[e.Key.Slot()] = true
	}
}

// printMatch prints the config on w (JSON with --json) and comments about
// how it was found on stderr, so that w holds only the answer.
func printMatch(w, stderr io.Writer, m cache.Match, asked space.Shape, machine *hardware.Fingerprint, asJSON, unchecked bool) error {
	e := m.Entry
	if !m.Exact {
		note := fmt.Sprintf("checked by the plugin at %s", asked)
		if unchecked {
			note = fmt.Sprintf("NOT checked at %s: --any-hardware runs no plugin to validate it", asked)
		}
		fmt.Fprintf(stderr, "# no entry for %s; nearest tuned shape is %s (%s)\n", asked, e.Shape, note)
	}
	if m.OtherDriver && machine != nil {
		fmt.Fprintf(stderr, "# tuned under driver %s; this machine has driver %s (same GPUs, memory and links)\n", e.HardwareInfo.Driver, machine.Driver)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m.JSON(false))
	}
	fmt.Fprintln(w, e.Config)
	return nil
}

// installedVersions asks each installed plugin that an entry names (per
// kernel and backend, once) for its kernel version; a plugin that is not
// installed or does not start is left out. None are asked with noPlugins.
func installedVersions(ctx context.Context, g *globals, entries []cache.Entry, noPlugins bool) map[[2]string]string {
	out := map[[2]string]string{}
	if noPlugins {
		return out
	}
	trust, err := g.trust()
	if err != nil {
		return out // a bad --pin: the versions stay unknown ("?")
	}
	asked := map[[2]string]bool{}
	for _, e := range entries {
		k := [2]string{e.Kernel, e.Backend}
		if asked[k] || (e.Backend != "cpu" && e.Backend != "cuda") {
			continue
		}
		asked[k] = true
		if info, err := tuner.Inspect(ctx, g.pluginDir, e.Kernel, e.Backend, 0, trust); err == nil {
			out[k] = info.Desc.KernelVersion
		}
	}
	return out
}

// currentness is show's "current" column: yes when the entry's kernel
// version is the installed plugin's, "no (plugin: V)" when it is not, "?"
// when no plugin of that kernel and backend could be asked.
func currentness(e cache.Entry, installed map[[2]string]string) string {
	v, ok := installed[[2]string{e.Kernel, e.Backend}]
	switch {
	case !ok:
		return "?"
	case v == e.KernelVersion:
		return "yes"
	default:
		return "no (plugin: " + v + ")"
	}
}

func newShowCmd(g *globals) *cobra.Command {
	var noPlugins bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "List the cached tuned configs as a table",
		Long: "Lists every entry of the cache with its kernel version and whether that is the version of\n" +
			"the plugin installed in the plugin directory (current: yes), another (no: lookup skips the\n" +
			"entry; search re-tunes it) or unknown (?: no such plugin here, or --no-plugins).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := g.openCache()
			if err != nil {
				return err
			}
			defer st.Close()
			store, err := st.Load(cmd.Context())
			if err != nil {
				return err
			}
			reportDamage(cmd.ErrOrStderr(), store)
			w := cmd.OutOrStdout()
			es := store.Entries() // a copy: taken once
			if len(es) == 0 {
				fmt.Fprintf(w, "no entries in %s\n", st.Location())
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "kernel\tbackend\tworld\tdtype\tshape\tmedian µs\tspeedup\tconfig\tversion\tcurrent\thardware\ttuned")
			installed := installedVersions(cmd.Context(), g, es, noPlugins)
			stale := 0
			for _, e := range es {
				sp := "-"
				if e.DefaultMedianUS > 0 && e.MedianUS > 0 {
					sp = fmt.Sprintf("%.2fx", e.DefaultMedianUS/e.MedianUS)
				}
				cur := currentness(e, installed)
				if strings.HasPrefix(cur, "no") {
					stale++
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Kernel, e.Backend, e.World, e.Dtype,
					e.Shape, e.MedianUS, sp, e.Config, orDash(e.KernelVersion), cur, e.Hardware, e.TunedAt.Format("2006-01-02 15:04"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if stale > 0 {
				fmt.Fprintf(w, "%d entries are for another kernel version than the installed plugin's: lookup skips them; "+
					"symmtune search re-tunes them\n", stale)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noPlugins, "no-plugins", false, "do not start the plugins to ask their kernel versions (current shows ?)")
	return cmd
}

func newPluginsCmd(g *globals) *cobra.Command {
	var backend string
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List the plugins found, the backends each serves, and their search spaces",
		Long: "Lists the plugin executables in the plugin directory (cpu builds at its top, cuda builds in\n" +
			"its cuda/ subdirectory). Each plugin is asked what it is: the backends shown are the ones it\n" +
			"serves, not the directory it was found in; a plugin whose directory is not one of its\n" +
			"backends' is listed with a note, since search would not run it from there. A plugin that\n" +
			"fails to start or describe itself is reported on stderr with the last lines of its own\n" +
			"stderr, and the command exits 1; -v logs every plugin's output.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if backend != "" && backend != "cpu" && backend != "cuda" {
				return usageError{fmt.Errorf("--backend %q: want cpu or cuda", backend)}
			}
			trust, err := g.trust()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			found := 0
			var failed []string
			// The directories search looks in, one per backend.
			for _, dirBackend := range []string{"cpu", "cuda"} {
				names, err := tuner.ListPlugins(g.pluginDir, dirBackend)
				if err != nil {
					continue
				}
				for _, name := range names {
					info, err := tuner.InspectLogged(cmd.Context(), g.pluginDir, name, dirBackend, 0, trust, g.pluginLogger())
					if err != nil {
						// What it serves is unknown: shown with the filter of
						// its directory's backend, on stderr with the end of
						// its own stderr, and the command fails.
						if backend == "" || backend == dirBackend {
							fmt.Fprintf(cmd.ErrOrStderr(), "%s (in %s): %v\n", name, tuner.BackendDir(g.pluginDir, dirBackend), err)
							failed = append(failed, name)
						}
						continue
					}
					d := info.Desc
					if backend != "" && !slices.Contains(d.Backends, backend) {
						continue
					}
					found++
					printPlugin(w, info, dirBackend, g.pluginDir)
				}
			}
			if len(failed) > 0 {
				more := ""
				if !g.verbose {
					more = " (-v shows their whole output)"
				}
				return fmt.Errorf("%d plugin(s) failed to load: %s%s", len(failed), strings.Join(failed, ", "), more)
			}
			if found == 0 {
				if backend != "" {
					return fmt.Errorf("no plugins that serve %s in %s", backend, g.pluginDir)
				}
				return fmt.Errorf("no plugins in %s", g.pluginDir)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&backend, "backend", "", "list only the plugins that serve this backend (cpu or cuda)")
	return cmd
}

// printPlugin prints one plugin: its name, the backends it says it serves,
// its version, dims and dtypes, then its summary, path and space. A plugin
// found in the directory of a backend it does not serve gets a note saying
// where search looks for it instead.
func printPlugin(w io.Writer, info *tuner.PluginInfo, dirBackend, pluginDir string) {
	d := info.Desc
	served := strings.Join(d.Backends, ",")
	if served == "" {
		served = "no backend"
	}
	fmt.Fprintf(w, "%s  [%s]  version %s  dims %s  dtypes %s\n  %s\n  %s\n", d.Name, served, d.KernelVersion,
		strings.Join(d.Dims, ","), strings.Join(d.Dtypes, ","), d.Summary, info.Path)
	if !slices.Contains(d.Backends, dirBackend) {
		var where []string
		for _, b := range d.Backends {
			where = append(where, fmt.Sprintf("search --backend %s looks in %s", b, tuner.BackendDir(pluginDir, b)))
		}
		fmt.Fprintf(w, "  note: search does not run it from here, where the %s backend's plugins are", dirBackend)
		if len(where) > 0 {
			fmt.Fprintf(w, "; %s", strings.Join(where, ", "))
		}
		fmt.Fprintln(w)
	}
	for _, p := range d.Space.Params {
		vals := make([]string, len(p.Values))
		for i, v := range p.Values {
			vals[i] = v.String()
		}
		fmt.Fprintf(w, "    %-14s %s\n", p.Name, strings.Join(vals, " "))
	}
	fmt.Fprintf(w, "    default        %s\n    space          %d configs\n", d.Default, d.Space.Size())
}

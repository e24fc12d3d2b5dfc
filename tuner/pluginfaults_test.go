package tuner

// A plugin's own mistakes (issue 55, items 1-3): each must become the
// status of one config, or a describe that fails naming the mistake, never
// a search that dies with a message about something else. Real searches
// over the Go fault-injection plugin, its faults switched on through its
// environment (internal/faultplugin/knobs.go).

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cache"
)

func TestPluginMistakes(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	for _, tc := range []struct {
		name  string
		env   map[string]string
		where string
		// wantErr: the search fails with these words (and, when set, is an
		// InputError); else it succeeds and slow ends with wantSlow.
		wantErr   []string
		wantInput bool
		wantSlow  Status
		// wantLog: words the host's log must hold.
		wantLog []string
		// never: words that must appear nowhere (a panic's later lines).
		never string
	}{
		{name: "verify NaN", env: map[string]string{"SYMMTUNE_FAULTY_RELERR": "NaN"}, wantSlow: StatusWrong},
		{name: "verify +Inf", env: map[string]string{"SYMMTUNE_FAULTY_RELERR": "+Inf"}, wantSlow: StatusWrong},
		{name: "verify -Inf", env: map[string]string{"SYMMTUNE_FAULTY_RELERR": "-Inf"}, wantSlow: StatusWrong},
		{name: "bench NaN", env: map[string]string{"SYMMTUNE_FAULTY_BENCH_TIME": "NaN"}, wantSlow: StatusFailed},
		{name: "bench negative", env: map[string]string{"SYMMTUNE_FAULTY_BENCH_TIME": "-1"}, wantSlow: StatusFailed},
		{name: "validate panics", env: map[string]string{"SYMMTUNE_FAULTY_PANIC_VALIDATE": "slow"}, wantSlow: StatusInvalid,
			wantLog: []string{"validate mode=slow panicked: faulty plugin: simulated panic in Validate"}, never: "second line"},
		{name: "validate of the default panics", env: map[string]string{"SYMMTUNE_FAULTY_PANIC_VALIDATE": "medium"}, where: "mode=medium",
			wantErr: []string{"no config can run", "panicked: faulty plugin: simulated panic in Validate"}, wantInput: true, never: "second line"},
		{name: "describe panics", env: map[string]string{"SYMMTUNE_FAULTY_PANIC_DESCRIBE": "1"},
			wantErr: []string{"describe panicked: faulty plugin: simulated panic in Describe"}, never: "second line"},
		{name: "parameter twice", env: map[string]string{"SYMMTUNE_FAULTY_DUPLICATE": "param"},
			wantErr: []string{`parameter "mode" is listed twice`}},
		{name: "value twice", env: map[string]string{"SYMMTUNE_FAULTY_DUPLICATE": "value"},
			wantErr: []string{`parameter "mode" lists the value slow twice`}},
		// Names and values config text cannot hold (configs are keyed,
		// logged and cached by it): refused at describe.
		{name: "value with a comma", env: map[string]string{"SYMMTUNE_FAULTY_BAD_TEXT": "comma"},
			wantErr: []string{`parameter "mode": value "slow,fast"`, "comma"}},
		{name: "name with an equals sign", env: map[string]string{"SYMMTUNE_FAULTY_BAD_TEXT": "name"},
			wantErr: []string{`parameter name "a=b"`}},
		{name: "a number and a string alike", env: map[string]string{"SYMMTUNE_FAULTY_BAD_TEXT": "numstr"},
			wantErr: []string{`parameter "numstr" lists 1 both as a number and as a string`}},
		// A space too large to enumerate, or whose size overflows an
		// int: refused as the plugin's mistake, before any allocation
		// in proportion to it.
		{name: "space too large", env: map[string]string{"SYMMTUNE_FAULTY_EXTRA_PARAMS": "40"},
			wantErr: []string{"plugin", "more than 4194304 configs"}},
		{name: "space size overflows", env: map[string]string{"SYMMTUNE_FAULTY_EXTRA_PARAMS": "63"},
			wantErr: []string{"plugin", "more than 4194304 configs"}},
		// Item 12: shared memory that cannot fit fails the group's setup,
		// naming the shortfall, before any trial (it crashed every one).
		{name: "shared memory short", env: map[string]string{"SYMMTUNE_FAULTY_SYMMETRIC_BYTES": "1125899906842624"},
			wantErr: []string{"shared memory: 2 ranks need 2.0 PiB", "free:", "short"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tmp := t.TempDir()
			log, err := OpenTrialLog(filepath.Join(tmp, "trials.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			var logged bytes.Buffer
			s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Log: log,
				Logger: slog.New(slog.NewTextHandler(&logged, nil))}
			job := faultyJob(2)
			job.Where = "mode=slow"
			if tc.where != "" {
				job.Where = tc.where
			}
			o, err := s.Search(context.Background(), job)
			all := logged.String()
			if err != nil {
				all += err.Error()
			}
			if tc.never != "" && strings.Contains(all, tc.never) {
				t.Errorf("the panic's second line %q reached the user:\n%s", tc.never, all)
			}
			for _, w := range tc.wantLog {
				if !strings.Contains(logged.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, logged.String())
				}
			}
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("search succeeded; want an error with %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				var ie *InputError
				if tc.wantInput != errors.As(err, &ie) {
					t.Errorf("error %q: InputError %v, want %v", err, !tc.wantInput, tc.wantInput)
				}
				if n := countLines(log.Path()); n != 0 {
					t.Errorf("%d trials ran; want none", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			if o.Best == nil || o.Best.Config["mode"].Str != "medium" {
				t.Errorf("winner %v, want the default, mode=medium", o.Best)
			}
			rs := readLog(t, log.Path())
			got := StatusInvalid
			for _, r := range firstPass(rs)["slow"] {
				got = r.Status
				if r.Status != StatusOK && r.Error == "" {
					t.Errorf("slow ended %s with no error named", r.Status)
				}
			}
			if got != tc.wantSlow {
				t.Errorf("mode=slow ended %s, want %s (log %+v)", got, tc.wantSlow, rs)
			}
			if tc.wantSlow == StatusInvalid && o.ValidCount != 1 {
				t.Errorf("%d valid configs, want 1 (the default)", o.ValidCount)
			}
		})
	}
}

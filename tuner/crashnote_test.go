package tuner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/symmtune/symmtune/cache"
)

// TestCrashRecord: a crash record names how the plugin process ended (its
// exit status) and what it last wrote to stderr (a Go panic's first line),
// and so does a plugin that dies before go-plugin's handshake, whose
// message from go-plugin alone says neither.
func TestCrashRecord(t *testing.T) {
	dir, exe := faultyPluginDir(t)
	for _, tc := range []struct {
		name string
		// mode is searched (with the default); "" launches one process
		// that refuses to start instead.
		mode string
		want []string
	}{
		{name: "exit mid-bench", mode: "crash_bench", want: []string{"exit status 3", "faulty: rank 1 dies mid-bench with exit code 3"}},
		{name: "panic mid-verify", mode: "panic_verify", want: []string{"exit status 2", "panic: faulty plugin: simulated illegal memory access mid-verify"}},
		{name: "dies before the handshake", want: []string{"exited before go-plugin's handshake (exit status 4", "faulty: refusing to start once after a crash"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			var msg string
			if tc.mode == "" {
				marker := filepath.Join(tmp, "refuse")
				if err := os.WriteFile(marker, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				t.Setenv("SYMMTUNE_FAULTY_BREAK_RESTART", marker)
				r, err := launch(launchSpec{Path: exe, Logger: hclog.NewNullLogger(), Start: fastTimeouts.Setup}, 0)
				if err == nil {
					r.kill()
					t.Fatal("the plugin started; want it to refuse")
				}
				msg = err.Error()
			} else {
				log, err := OpenTrialLog(filepath.Join(tmp, "trials.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				defer log.Close()
				s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Log: log, Logger: quietLogger()}
				job := faultyJob(2)
				job.Where = "mode=" + tc.mode
				if _, err := s.Search(context.Background(), job); err != nil {
					t.Fatalf("search: %v", err)
				}
				for _, r := range readLog(t, log.Path()) {
					if r.Config["mode"].Str == tc.mode {
						if r.Status != StatusCrash {
							t.Errorf("%s ended %s, want crash", tc.mode, r.Status)
						}
						msg = r.Error
					}
				}
			}
			t.Logf("message: %s", msg)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestStderrTail(t *testing.T) {
	long := strings.Repeat("x", 2*tailLineMax)
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"nothing", nil, ""},
		{"blank lines", []string{"\n", "  \n"}, ""},
		{"last lines", []string{"a", "\n", "b\nc\nd\n"}, "stderr: b | c | d"},
		{"unfinished last line", []string{"a\nb"}, "stderr: a | b"},
		{"go panic first", []string{"panic: boom\n\ngoroutine 1 [running]:\nmain.f()\n\t/x.go:3\nexit status 2\n"}, "stderr: panic: boom | main.f() | /x.go:3 | exit status 2"},
		{"long line cut", []string{long + "\n"}, "stderr: " + long[:tailLineMax]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tail stderrTail
			for _, w := range tc.writes {
				if _, err := tail.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			if got := tail.note(); got != tc.want {
				t.Errorf("note %q, want %q", got, tc.want)
			}
		})
	}
}

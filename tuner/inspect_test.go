package tuner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A plugin that dies before the handshake is reported with the end of its
// stderr, which names the cause, rather than go-plugin's generic guesses.
func TestInspectQuotesAFailedPluginsStderr(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo noise $i >&2; done\necho 'ImportError: no module named grpc' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, PluginPrefix+"broken"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Inspect(context.Background(), dir, "broken", "cpu", 0, Trust{AllowInsecure: true})
	if err == nil {
		t.Fatal("a plugin that exits at once was inspected")
	}
	msg := err.Error()
	// The launch quotes the stderr of a plugin that exited before the
	// handshake (crashNote); an Inspect error never says it wrote nothing.
	if !strings.Contains(msg, "ImportError: no module named grpc") || strings.Contains(msg, "wrote nothing") {
		t.Errorf("error does not quote the plugin's stderr:\n%s", msg)
	}
	if strings.Contains(msg, "noise 4 ") || strings.Contains(msg, "noise 4\n") || !strings.Contains(msg, "noise 12") {
		t.Errorf("want the last %d lines only:\n%s", stderrTailLines, msg)
	}
	if strings.Contains(msg, "This usually means") {
		t.Errorf("go-plugin's generic causes kept beside the real one:\n%s", msg)
	}
}

func TestLineTailKeepsTheLastLines(t *testing.T) {
	tail := &lineTail{max: 2}
	for _, s := range []string{"a\nb", "\n\nc\r\n", "d"} {
		tail.Write([]byte(s))
	}
	got := tail.annotate(errors.New("e")).Error()
	if want := "e; its stderr ends:\n    c\n    d"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (&lineTail{max: 2}).annotate(errors.New("e")).Error(); got != "e (it wrote nothing to stderr)" {
		t.Errorf("empty: %q", got)
	}
}

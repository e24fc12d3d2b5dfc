package tuner

import (
	"bytes"
	"strings"
	"sync"
)

// tailLines is how many of a plugin's last stderr lines a crash record
// keeps, and tailLineMax how long each may be: enough for a Python
// traceback's exception or a CUDA error, short enough for one log line.
const (
	tailLines   = 3
	tailLineMax = 240
)

// stderrTail keeps the last lines a plugin process wrote to stderr and the
// first line of a Go panic (a Go panic's last lines are its stack, which
// say less than its first line). A process has two: go-plugin's Stderr
// writer gets what the process writes to its stderr before it serves, and
// what the Go runtime writes there (panics, fatal errors); its SyncStderr
// writer gets what a Go plugin writes to os.Stderr while it serves (the
// go-plugin server forwards that over gRPC, which may lose the last
// lines of a process that exits at once). go-plugin writes a line's text
// and its newline in separate calls, from its own goroutine, and has
// finished writing Stderr before it reports the exit.
type stderrTail struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	panic   string
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rest := p
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(t.partial) < tailLineMax {
				t.partial = append(t.partial, rest[:min(len(rest), tailLineMax-len(t.partial))]...)
			}
			return len(p), nil
		}
		t.partial = append(t.partial, rest[:min(i, max(0, tailLineMax-len(t.partial)))]...)
		t.add(string(t.partial))
		t.partial = t.partial[:0]
		rest = rest[i+1:]
	}
}

func (t *stderrTail) add(line string) {
	line = strings.TrimSpace(line)
	// go-plugin's own server log (JSON at debug or trace: "plugin address")
	// says nothing about why a plugin died.
	if line == "" || strings.HasPrefix(line, `{"@level":"debug"`) || strings.HasPrefix(line, `{"@level":"trace"`) {
		return
	}
	if t.panic == "" && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
		t.panic = line
	}
	if len(t.lines) == tailLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

// note is what the process left on stderr, for an error message: the
// panic line if there was one, then the last lines ("" if nothing).
func (t *stderrTail) note() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		lines = append(lines[:len(lines):len(lines)], strings.TrimSpace(string(t.partial)))
	}
	var parts []string
	if t.panic != "" {
		parts = append(parts, t.panic)
	}
	for _, l := range lines {
		if l != t.panic {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "stderr: " + strings.Join(parts, " | ")
}

// exitNote says how a plugin process ended, for a crash record: its exit
// status ("exit status 3", "signal: segmentation fault") and the end of its
// stderr. Empty while the process runs and has said nothing.
func (r *rankProc) exitNote() string {
	var parts []string
	// go-plugin sets Exited under its lock after cmd.Wait has filled
	// ProcessState, so reading it afterwards is safe.
	if r.client.Exited() && r.cmd != nil && r.cmd.ProcessState != nil {
		parts = append(parts, r.cmd.ProcessState.String())
	}
	for _, t := range r.stderr {
		if n := t.note(); n != "" {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "; ")
}

//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/symmtune/symmtune/cuda/cu"
)

// A tracer times the steps of one call with CUDA events, for developers
// asking where a call's time goes (GPU profilers are not on every
// machine). Bench traces one extra call after its timed ones when
// $SYMMTUNE_TRACE names a folder, and appends the steps to
// trace-<kernel>-w<world>-r<rank>.txt there: per step its stream, start
// and duration in µs from the call's start.
type tracer struct {
	t0    cu.Event
	steps []traceStep
}

type traceStep struct {
	label      string
	stream     string
	start, end cu.Event
}

// span records the start of a step on s and returns what records its end;
// name gives the step's label and stream's name. A nil tracer records
// nothing and never calls name: the untraced call formats nothing.
func (tr *tracer) span(name func() (label, stream string), s cu.Stream) (func() error, error) {
	if tr == nil {
		return noSpan, nil
	}
	var st traceStep
	st.label, st.stream = name()
	var err error
	if st.start, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
		return nil, err
	}
	if st.end, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
		return nil, err
	}
	tr.steps = append(tr.steps, st)
	if err := st.start.Record(s); err != nil {
		return nil, err
	}
	return func() error { return st.end.Record(s) }, nil
}

// noSpan ends an untraced step.
func noSpan() error { return nil }

// write appends the steps, once the call has completed, and frees the events.
func (tr *tracer) write(dir, header string, name string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "== %s\n", header)
	var errs []error
	for _, st := range tr.steps {
		s, err1 := tr.t0.Elapsed(st.start)
		e, err2 := tr.t0.Elapsed(st.end)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(&b, "%9.1f %8.1f %-8s %s\n", s*1000, (e-s)*1000, st.stream, st.label)
		errs = append(errs, cu.DestroyEvent(&st.start), cu.DestroyEvent(&st.end))
	}
	errs = append(errs, cu.DestroyEvent(&tr.t0))
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	_, werr := f.WriteString(b.String())
	return errors.Join(append(errs, werr, f.Close())...)
}

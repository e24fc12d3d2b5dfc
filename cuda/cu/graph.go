package cu

/*
#include "driver.h"
*/
import "C"

import "fmt"

// CaptureMode is a CUstreamCaptureMode.
type CaptureMode int

// Capture modes (values from cuda.h).
const (
	CaptureGlobal      CaptureMode = 0
	CaptureThreadLocal CaptureMode = 1
	// CaptureRelaxed lets other threads make calls that are unsafe during
	// capture (library calls inside a capture may).
	CaptureRelaxed CaptureMode = 2
)

// Graph is an instantiated CUDA graph: a captured launch sequence, replayed
// with one launch.
type Graph struct {
	exec  C.CUgraphExec
	graph C.CUgraph
}

// BeginCapture starts recording stream's work (and that of the streams it
// forks and joins back) into a graph instead of running it.
func (s Stream) BeginCapture(mode CaptureMode) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuStreamBeginCapture_v2", C.cu_stream_begin_capture(s.s, C.int(mode)))
}

// EndCapture ends the capture BeginCapture started and instantiates the
// graph. On error nothing is left to free.
func (s Stream) EndCapture() (*Graph, error) {
	if err := ensure(); err != nil {
		return nil, err
	}
	g := &Graph{}
	if err := check("cuStreamEndCapture", C.cu_stream_end_capture(s.s, &g.graph)); err != nil {
		if g.graph != nil {
			C.cu_graph_destroy(g.graph)
		}
		return nil, err
	}
	if err := check("cuGraphInstantiateWithFlags", C.cu_graph_instantiate(&g.exec, g.graph, 0)); err != nil {
		C.cu_graph_destroy(g.graph)
		return nil, err
	}
	return g, nil
}

// Launch enqueues one replay of the graph on stream.
func (g *Graph) Launch(stream Stream) error {
	if err := ensure(); err != nil {
		return err
	}
	return check("cuGraphLaunch", C.cu_graph_launch(g.exec, stream.s))
}

// Destroy frees the graph; a second call does nothing.
func (g *Graph) Destroy() error {
	if err := ensure(); err != nil {
		return err
	}
	var errs []error
	if g.exec != nil {
		errs = append(errs, check("cuGraphExecDestroy", C.cu_graph_exec_destroy(g.exec)))
	}
	if g.graph != nil {
		errs = append(errs, check("cuGraphDestroy", C.cu_graph_destroy(g.graph)))
	}
	g.exec, g.graph = nil, nil
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("destroy graph: %w", err)
		}
	}
	return nil
}

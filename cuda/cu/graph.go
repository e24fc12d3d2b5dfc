package cu

/*
#include <stdlib.h>
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

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

// CaptureGraph is the capture state of s (cuStreamGetCaptureInfo): whether
// it is being captured, and then the capture's sequence id (unique within
// the process) and the graph it builds, as a handle for HoldCounter.
func (s Stream) CaptureGraph() (capturing bool, id uint64, graph CapturingGraph, err error) {
	if err := ensure(); err != nil {
		return false, 0, CapturingGraph{}, err
	}
	var st C.int
	var cid C.ulonglong
	var g C.CUgraph
	if err := check("cuStreamGetCaptureInfo_v2", C.cu_stream_capture_graph(s.s, &st, &cid, &g)); err != nil {
		return false, 0, CapturingGraph{}, err
	}
	return st == 1, uint64(cid), CapturingGraph{g}, nil
}

// CapturingGraph is the graph a stream capture is building (CaptureGraph).
type CapturingGraph struct{ g C.CUgraph }

// HoldCounter makes the graph being captured (a handle from CaptureGraph)
// hold a reference on counter: it adds 1 to *counter now, and a CUDA user
// object the graph keeps takes 1 off once that graph and every executable
// graph made from it are destroyed (on a driver thread, atomically). So a
// runner's memory that the graph's kernels use can be freed when the count
// is back to 0, and not before. counter must live outside Go's heap (C
// memory) for as long as any graph may hold it.
func HoldCounter(graph CapturingGraph, counter unsafe.Pointer) error {
	if err := ensure(); err != nil {
		return err
	}
	if graph.g == nil {
		return fmt.Errorf("hold counter: no graph is being captured")
	}
	return check("cuUserObjectCreate", C.cu_graph_hold_counter(graph.g, (*C.int)(counter)))
}

// Counter is an int32 in C memory, for HoldCounter: the driver's thread
// changes it, Go reads it atomically.
type Counter struct{ p *C.int }

// NewCounter allocates a zeroed Counter.
func NewCounter() *Counter {
	p := (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))
	return &Counter{p}
}

// Load reads the count.
func (c *Counter) Load() int32 {
	if c.p == nil {
		return 0 // freed: nothing holds it
	}
	return atomic.LoadInt32((*int32)(unsafe.Pointer(c.p)))
}

// Ptr is the count's address, for HoldCounter.
func (c *Counter) Ptr() unsafe.Pointer { return unsafe.Pointer(c.p) }

// Free frees the count's memory; only once no graph holds it (Load is 0).
func (c *Counter) Free() {
	if c.p != nil {
		C.free(unsafe.Pointer(c.p))
		c.p = nil
	}
}

// Package cu is symmtune's binding of the CUDA driver API: device and
// context queries, memory, streams and events, modules and kernel launches
// (programmatic dependents included), stream memory operations, IPC, graph
// capture and Hopper tensor maps. Its API is the subset of gorgonia.org/cu
// that symmtune used, with the same names and signatures, plus the few
// calls that package lacked.
//
// Why its own binding, loaded with dlopen: libcuda.so.1 is opened on the
// first call (or $SYMMTUNE_LIBCUDA), its entry points are resolved by name
// with dlsym, and cuInit runs then, once. So a binary or c-shared library
// containing this package builds with no CUDA headers or link stub, loads on
// a machine without a GPU or driver (gorgonia.org/cu links -lcuda and calls
// cuInit in an init function), and answers every call there with an error
// instead of dying. Each entry point is named by the versioned symbol that
// CUDA 12/13's cuda.h maps the plain name to (cuMemAlloc_v2,
// cuStreamBeginCapture_v2, ...), so the ABI a call assumes is pinned by its
// name; driver.h lists them all. Entry points a driver lacks (the CUDA 12
// ones on an older driver) fail alone, naming themselves.
//
// Errors are *Error values: the entry point and its CUresult, printed with
// the driver's name and description of the code.
package cu

"""A call captured once into a CUDA graph and replayed with new pointers,
through the driver (as the Go plugins' graph=1 replays a trial's call):
capture on a stream (cuStreamBeginCapture, relaxed mode, so the work of
other threads is not disturbed), instantiate, and before each replay give
the kernel nodes whose arguments changed their new values
(cuGraphExecKernelNodeSetParams copies them then), and the copies that read
a caller's tensor that has moved their new source
(cuGraphExecMemcpyNodeSetParams). A call then costs the host one
cuGraphLaunch and one update per changed node, instead of every copy, flag,
event and launch it holds."""

from __future__ import annotations

import ctypes
import weakref
from typing import Callable, Protocol

from ._cuda import _check, _fn, graph_launch

_CAPTURE_MODE_RELAXED = 2
_NODE_KERNEL = 0
_NODE_MEMCPY = 1
_P = ctypes.c_void_p


class _KernelNodeParams(ctypes.Structure):
    # CUDA_KERNEL_NODE_PARAMS (the v1 layout the unsuffixed entry points take).
    _fields_ = [("func", ctypes.c_void_p), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared_mem_bytes", ctypes.c_uint), ("kernel_params", ctypes.c_void_p), ("extra", ctypes.c_void_p)]


class _Memcpy3D(ctypes.Structure):
    # CUDA_MEMCPY3D.
    _fields_ = [("src_x", ctypes.c_size_t), ("src_y", ctypes.c_size_t), ("src_z", ctypes.c_size_t),
                ("src_lod", ctypes.c_size_t), ("src_type", ctypes.c_int), ("src_host", ctypes.c_void_p),
                ("src_device", ctypes.c_uint64), ("src_array", ctypes.c_void_p), ("reserved0", ctypes.c_void_p),
                ("src_pitch", ctypes.c_size_t), ("src_height", ctypes.c_size_t),
                ("dst_x", ctypes.c_size_t), ("dst_y", ctypes.c_size_t), ("dst_z", ctypes.c_size_t),
                ("dst_lod", ctypes.c_size_t), ("dst_type", ctypes.c_int), ("dst_host", ctypes.c_void_p),
                ("dst_device", ctypes.c_uint64), ("dst_array", ctypes.c_void_p), ("reserved1", ctypes.c_void_p),
                ("dst_pitch", ctypes.c_size_t), ("dst_height", ctypes.c_size_t),
                ("width", ctypes.c_size_t), ("height", ctypes.c_size_t), ("depth", ctypes.c_size_t)]


class Launch(Protocol):
    def node_params(self) -> tuple: ...


def _node_params(launch: Launch) -> _KernelNodeParams:
    fn, grid, threads, smem, params = launch.node_params()
    return _KernelNodeParams(ctypes.cast(fn, ctypes.c_void_p).value, (ctypes.c_uint * 3)(grid, 1, 1),
                             (ctypes.c_uint * 3)(threads, 1, 1), smem, ctypes.cast(params, ctypes.c_void_p).value, None)


def _captured_arg(p: _KernelNodeParams, i: int) -> int:
    """Argument i (8 bytes) of a captured kernel node, as the driver holds it."""
    ptrs = ctypes.cast(p.kernel_params, ctypes.POINTER(ctypes.c_void_p))
    return ctypes.c_uint64.from_address(ptrs[i]).value


def _destroy(exec_: int, graph: int) -> None:
    _fn("cuGraphExecDestroy", _P)(exec_)
    _fn("cuGraphDestroy", _P)(graph)


class Graph:
    """enqueue(stream) captured on stream; launches is every launch of it
    whose arguments may change between replays, each with match(func,
    arg) telling whether a captured kernel node is its launch (arg(i): that
    node's argument i)."""

    def __init__(self, enqueue: Callable[[int], None], stream: int,
                 launches: list[tuple[Launch, Callable[[int, Callable[[int], int]], bool]]]) -> None:
        _check("cuStreamBeginCapture", _fn("cuStreamBeginCapture_v2", _P, ctypes.c_int)(stream, _CAPTURE_MODE_RELAXED))
        graph = ctypes.c_void_p()
        try:
            enqueue(stream)
        finally:
            r = _fn("cuStreamEndCapture", _P, ctypes.POINTER(ctypes.c_void_p))(stream, ctypes.byref(graph))
        _check("cuStreamEndCapture", r)
        self._graph = graph.value
        n = ctypes.c_size_t()
        get_nodes = _fn("cuGraphGetNodes", _P, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t))
        _check("cuGraphGetNodes", get_nodes(self._graph, None, ctypes.byref(n)))
        nodes = (ctypes.c_void_p * n.value)()
        _check("cuGraphGetNodes", get_nodes(self._graph, nodes, ctypes.byref(n)))
        self._nodes: list[tuple[int, Launch]] = []
        self._copies: list[tuple[int, _Memcpy3D]] = []
        for node in nodes:
            t = ctypes.c_int()
            _check("cuGraphNodeGetType", _fn("cuGraphNodeGetType", _P, ctypes.POINTER(ctypes.c_int))(node, ctypes.byref(t)))
            if t.value == _NODE_MEMCPY:
                c = _Memcpy3D()
                _check("cuGraphMemcpyNodeGetParams",
                       _fn("cuGraphMemcpyNodeGetParams", _P, ctypes.POINTER(_Memcpy3D))(node, ctypes.byref(c)))
                self._copies.append((node, c))
            if t.value != _NODE_KERNEL:
                continue
            p = _KernelNodeParams()
            _check("cuGraphKernelNodeGetParams",
                   _fn("cuGraphKernelNodeGetParams", _P, ctypes.POINTER(_KernelNodeParams))(node, ctypes.byref(p)))
            for launch, match in launches:
                if match(p.func, lambda i, p=p: _captured_arg(p, i)):
                    self._nodes.append((node, launch))
        if len(self._nodes) != len(launches):
            raise RuntimeError(f"CUDA graph: found {len(self._nodes)} of the {len(launches)} kernel launches to update")
        ex = ctypes.c_void_p()
        _check("cuGraphInstantiateWithFlags", _fn("cuGraphInstantiateWithFlags", ctypes.POINTER(ctypes.c_void_p), _P,
                                                  ctypes.c_uint64)(ctypes.byref(ex), self._graph, 0))
        self._exec = ex.value
        self._set = _fn("cuGraphExecKernelNodeSetParams", _P, _P, ctypes.POINTER(_KernelNodeParams))
        # A pipeline laid out again (its workspace grew) drops its graph.
        weakref.finalize(self, _destroy, self._exec, self._graph)

    def update(self, launch: Launch) -> None:
        """Gives launch's node the launch's current arguments."""
        for node, l in self._nodes:
            if l is launch:
                r = self._set(self._exec, node, ctypes.byref(_node_params(launch)))
                if r:
                    _check("cuGraphExecKernelNodeSetParams", r)

    def move_copies(self, old: int, new: int, nbytes: int) -> bool:
        """Points every copy reading from [old, old + nbytes) at the same
        offset from new; False when the driver refuses (the graph must then
        be captured again)."""
        ctx = ctypes.c_void_p()
        _check("cuCtxGetCurrent", _fn("cuCtxGetCurrent", ctypes.POINTER(ctypes.c_void_p))(ctypes.byref(ctx)))
        set_params = _fn("cuGraphExecMemcpyNodeSetParams", _P, _P, ctypes.POINTER(_Memcpy3D), _P)
        for node, c in self._copies:
            if old <= c.src_device + c.src_x < old + nbytes:
                c.src_device += new - old
                if set_params(self._exec, node, ctypes.byref(c), ctx):
                    return False
        return True

    def __call__(self, stream: int) -> None:
        graph_launch(self._exec, stream)

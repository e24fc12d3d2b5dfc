"""What symmtune.torch's kernels share: the group's name, rank and size, the
raw current stream, symmetric buffers on torch symmetric memory, side
streams, the cross-GPU barrier, and replaying a call from a CUDA graph."""

from __future__ import annotations

import warnings
from typing import Callable

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d
import torch.distributed._symmetric_memory as symm_mem

from . import _cuda
from . import kernels
from .kernels import kernel_sources

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


# (rank, world size) of each process group this process called with, by the
# group's name: a group keeps its name and members for the process's life.
_groups: dict[str, tuple[int, int]] = {}


def group_name(group) -> str:
    """The name of group: a ProcessGroup, its name, or None for the default
    group (the form torch's ops take a group in)."""
    if isinstance(group, str):
        return group
    return (group or dist.group.WORLD).group_name


def group_info(group) -> tuple[str, int, int]:
    """(name, this process's rank, world size) of group (see group_name)."""
    name = group_name(group)
    rw = _groups.get(name)
    if rw is None:
        pg = c10d._resolve_process_group(name)
        rw = _groups[name] = (dist.get_rank(pg), dist.get_world_size(pg))
    return name, rw[0], rw[1]


def capturing() -> bool:
    """Whether the current stream is being captured into a CUDA graph (the
    caller's, or torch.compile's): then every call enqueues its work as it
    is, since a graph may neither be captured nor launched inside a capture."""
    return torch.cuda.is_current_stream_capturing()


try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # one C call; what Triton's launcher uses
except AttributeError:  # pragma: no cover - older torch
    def _raw_stream(index: int) -> int:
        return torch.cuda.current_stream(index).cuda_stream


def raw_stream(index: int) -> int:
    """The current stream of device index, as a CUstream handle."""
    return _raw_stream(index)


def allocate(group_name: str, numel: int, dtype: torch.dtype, device: torch.device, zero_bytes: int = 0):
    """numel elements of symmetric memory with signal pads the kernels'
    barriers fit in, rendezvoused over the group: (buffer, handle). The
    first zero_bytes are zeroed on every rank before any rank returns.
    Not while the current stream is being captured: the rendezvous is a
    collective on the host, so a call that needs a new workspace must come
    once before the capture (its warm-up)."""
    if capturing():
        raise RuntimeError(f"symmtune.torch: this call needs {numel} elements of symmetric memory, which cannot be "
                           "allocated while a CUDA graph is being captured; make the same call once before the capture "
                           "(a warm-up, as torch.cuda.graph's documentation asks)")
    try:
        if symm_mem.get_signal_pad_size() < kernels._PAD_BYTES:
            symm_mem.set_signal_pad_size(kernels._PAD_BYTES)
    except AttributeError:
        pass  # older torch: the size is checked below
    buf = symm_mem.empty(numel, dtype=dtype, device=device)
    if zero_bytes:
        buf.view(torch.uint8)[:zero_bytes].zero_()
        torch.cuda.synchronize(device)
    hdl = symm_mem.rendezvous(buf, group_name)
    if hdl.signal_pad_size < kernels._PAD_BYTES:
        raise RuntimeError(f"symmtune.torch: signal pads of {hdl.signal_pad_size} bytes, the kernels need "
                           f"{kernels._PAD_BYTES}: call torch.distributed._symmetric_memory.set_signal_pad_size({kernels._PAD_BYTES}) "
                           "before allocating symmetric memory")
    return buf, hdl


class Symmetric:
    """A symmetric allocation of nbytes per rank with its signal pads: this
    rank's buffer (uint8), every rank's buffer pointer, and the device table
    [buffer pointers..., pad pointers...] the kernels take. The first
    zero_bytes are zeroed on every rank before any rank returns (rendezvous
    is collective), so flags there start clear."""

    def __init__(self, group_name: str, nbytes: int, device: torch.device, zero_bytes: int = 0) -> None:
        self.nbytes = nbytes
        self.buf, self.hdl = allocate(group_name, nbytes, torch.uint8, device, zero_bytes)
        self.ptrs = list(self.hdl.buffer_ptrs)
        self.table = _cuda.Buffer.of_u64(self.ptrs + list(self.hdl.signal_pad_ptrs))
        self.world, self.rank = self.hdl.world_size, self.hdl.rank

    def view(self, q: int, offset: int, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """numel elements of dtype at byte offset of rank q's buffer (this
        rank's own, or a peer's mapped here)."""
        b = self.buf if q == self.rank else self.hdl.get_buffer(q, (self.nbytes,), torch.uint8)
        elt = torch.empty((), dtype=dtype).element_size()
        return b[offset:offset + numel * elt].view(dtype)


_sides: dict[int, list[torch.cuda.Stream]] = {}


def side_streams(device: torch.device, k: int) -> list[torch.cuda.Stream]:
    """k streams of device besides the caller's, made once per process."""
    s = _sides.setdefault(device.index, [])
    while len(s) < k:
        s.append(torch.cuda.Stream(device))
    return s[:k]


def barrier_fn(device: torch.device):
    """The team barrier kernel (symm/cudamem/barrier.cuh's symm_barrier):
    one block of 32 threads on the pads' last slot."""
    barrier = kernel_sources()[0]
    cc = torch.cuda.get_device_capability(device)
    return _cuda.module(barrier, "symm_barrier.cu", [], device.index, cc).function("symm_barrier")


class Replay:
    """call(stream, x) captured in a CUDA graph (nothing runs while
    capturing, so no rank is out of step), replayed on the current stream
    with one driver call (cuGraphLaunch on the graph's executable: torch's
    replay() also launches two kernels to refill its random generators'
    state per call). The graph holds the addresses of the x it was captured
    with: the caller keeps one Replay per address. It is captured at the
    first call made outside a capture; a call made while the current stream
    is being captured (a user's CUDA graph, torch.compile's) enqueues
    call's work itself, which that graph then holds. Where capture fails,
    call runs directly and a warning says why."""

    def __init__(self, call: Callable[[int, torch.Tensor], None], device: torch.device, what: str) -> None:
        self.device, self._call, self._what = device.index, call, what
        self._g: torch.cuda.CUDAGraph | None = None
        self._exec = 0
        self._direct = False

    def _capture(self, x: torch.Tensor) -> None:
        try:
            self._g, self._exec = capture(lambda stream: self._call(stream, x), self.device)
        except RuntimeError as e:
            warnings.warn(f"symmtune.torch: running {self._what} without a CUDA graph ({e})", stacklevel=4)
            self._direct = True

    def __call__(self, x: torch.Tensor) -> None:
        if self._direct or capturing():
            self._call(raw_stream(self.device), x)
            return
        if self._g is None:
            self._capture(x)
            if self._direct:
                self._call(raw_stream(self.device), x)
                return
        _cuda.graph_launch(self._exec, raw_stream(self.device))


# A stream per device that symmtune captures its own graphs on, made once.
_capture_streams: dict[int, torch.cuda.Stream] = {}


def capture(enqueue: Callable[[int], None], device: int) -> tuple[torch.cuda.CUDAGraph, int]:
    """enqueue(stream) captured into a CUDA graph on a stream of its own,
    the current stream meanwhile (torch's ops in it land there too): the
    graph, which owns the executable, and the executable's handle for
    cuGraphLaunch. Thread-local capture mode, so other threads' CUDA calls
    go on; and without torch.cuda.graph's device synchronisation and cache
    emptying, since nothing runs while capturing and the captured calls
    allocate nothing."""
    stream = _capture_streams.get(device)
    if stream is None:
        stream = _capture_streams[device] = torch.cuda.Stream(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        graph.capture_begin(capture_error_mode="thread_local")
        try:
            enqueue(stream.cuda_stream)
        finally:
            graph.capture_end()
    raw = graph.raw_cuda_graph_exec()  # torch >= 2.9
    if not raw:
        raise RuntimeError("torch gave no executable for a captured graph")
    return graph, raw

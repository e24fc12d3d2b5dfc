"""What symmtune.torch's kernels share: the group's name, rank and size, the
raw current stream, symmetric buffers on torch symmetric memory, side
streams, the cross-GPU barrier, and replaying a call from a CUDA graph."""

from __future__ import annotations

import warnings

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

from . import _cuda
from .kernels import _PAD_BYTES, kernel_sources

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


def group_info(group) -> tuple[str, int, int]:
    group = group or dist.group.WORLD
    return group.group_name, dist.get_rank(group), dist.get_world_size(group)


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
    first zero_bytes are zeroed on every rank before any rank returns."""
    try:
        if symm_mem.get_signal_pad_size() < _PAD_BYTES:
            symm_mem.set_signal_pad_size(_PAD_BYTES)
    except AttributeError:
        pass  # older torch: the size is checked below
    buf = symm_mem.empty(numel, dtype=dtype, device=device)
    if zero_bytes:
        buf.view(torch.uint8)[:zero_bytes].zero_()
        torch.cuda.synchronize(device)
    hdl = symm_mem.rendezvous(buf, group_name)
    if hdl.signal_pad_size < _PAD_BYTES:
        raise RuntimeError(f"symmtune.torch: signal pads of {hdl.signal_pad_size} bytes, the kernels need "
                           f"{_PAD_BYTES}: call torch.distributed._symmetric_memory.set_signal_pad_size({_PAD_BYTES}) "
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
        self.table = torch.tensor(self.ptrs + list(self.hdl.signal_pad_ptrs), dtype=torch.int64, device=device)
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
    """call captured in a CUDA graph (nothing runs while capturing, so no
    rank is out of step), replayed on the current stream with one driver
    call (cuGraphLaunch on the graph's executable: torch's replay() also
    launches two kernels to refill its random generators' state per call).
    Where capture fails, call runs directly and a warning says why."""

    def __init__(self, call, device: torch.device, what: str) -> None:
        self.device, self._call, self._exec = device.index, call, None
        self._g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(self._g):
                call(raw_stream(device.index))
        except RuntimeError as e:
            warnings.warn(f"symmtune.torch: running {what} without a CUDA graph ({e})", stacklevel=5)
            self._g = None
            return
        try:
            raw = self._g.raw_cuda_graph_exec()  # torch >= 2.9
        except (AttributeError, RuntimeError):
            raw = None
        if isinstance(raw, int) and raw:
            self._exec = raw

    def __call__(self) -> None:
        if self._exec:
            _cuda.graph_launch(self._exec, raw_stream(self.device))
        elif self._g is not None:
            self._g.replay()
        else:
            self._call(raw_stream(self.device))

"""symmtune's tuned kernels, run from PyTorch.

    import torch.distributed as dist
    import symmtune.torch as st

    x = st.empty(n, dtype=torch.bfloat16)   # optional: input already in symmetric memory
    st.all_reduce(x)                         # in place, sum, like dist.all_reduce(x)

``all_reduce`` looks the tuned config up once per (size, dtype, group) in the
cache ``symmtune search`` writes (symmtune.lookup, this machine's
fingerprint) and runs it through libsymmtune (symmtune._native's
allreduce_open and allreduce_enqueue): kernels/allreduce's Runner, in Go,
compiles the CUDA C the Go plugin embeds with NVRTC for the device and the
config and enqueues the call on torch's current stream, on torch symmetric
memory that this module owns (one staging workspace per group and dtype,
grown as needed). The call at a (tensor address, size) seen before replays
a CUDA graph the runner captured; inside a capture it is enqueued as it is.
A tensor from ``empty`` lives in a symmetric workspace of its own: with the
push two-shot (compiled with PUSH_OUT=0, the sum in place over its input)
its all_reduce is one kernel launch, nothing copied. Any other tensor is
copied in (and, for the algorithms whose result lands in symmetric memory,
back). With no tuned entry, or one tuned for another version of the kernel
sources, the plugin's default config runs and a warning says how to tune.
Any size and alignment runs: like the Go plugin, the kernels work on the
size padded with zeros to whole 16-byte vectors on every rank.

``all_gather_matmul`` and ``matmul_reduce_scatter`` run the GPU GEMM
plugins' own launch sequence, in Go, through libsymmtune (see
symmtune._torch_gemm); ``all_gather_scaled_matmul`` and
``scaled_matmul_reduce_scatter`` are their FP8 forms (float8_e4m3fn
operands with float32 scales, bf16 results, torch._scaled_mm's conventions:
see symmtune._torch_fp8).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import torch

from . import _native, _ops, record as _record
from ._torch_fp8 import all_gather_scaled_matmul, scaled_matmul_reduce_scatter
from ._torch_gemm import all_gather_matmul, matmul_reduce_scatter
from ._torchrt import DTYPES as _DTYPES, Symmetric, group_info as _group_info, group_name as _group_name
from ._torchrt import capturing, raw_stream
from .cache import NoTunedConfig, lookup
from .kernels import _NOT_RUN, Choice, default_config, kernel_version, padded

__all__ = ["Choice", "all_gather_matmul", "all_gather_scaled_matmul", "all_reduce", "choose", "empty",
           "matmul_reduce_scatter", "record", "scaled_matmul_reduce_scatter"]

# Start recording the (kernel, world, dtype, shape) of each call into a job
# file that `symmtune search --config FILE` takes (symmtune.record).
record = _record.record


@torch.compiler.assume_constant_result
def _constant_group_name(group) -> str:
    """The group's name, a constant of a traced graph (dynamo does not trace
    into the default group's lookup)."""
    return _group_name(group)


def _cache_arg(cache: str | os.PathLike | None) -> str | None:
    return None if cache is None else os.fspath(cache)


class _Workspace:
    """One group's symmetric buffer for one dtype ([input | scratch | output]
    of n elements each, for any n up to capacity), its signal pads, the
    device table of every rank's buffer and pad pointers, and the Go
    all-reduce runners opened on it, by config."""

    def __init__(self, group_name: str, dtype: torch.dtype, capacity: int, device: torch.device) -> None:
        self.capacity, self.device = capacity, device
        self.sym = Symmetric(group_name, 3 * capacity * torch.empty((), dtype=dtype).element_size(), device)
        self.buf = self.sym.buf.view(dtype)
        self.world, self.rank = self.sym.world, self.sym.rank
        self.runners: dict[tuple, int] = {}

    def runner(self, cfg: dict, dtype: torch.dtype, n: int) -> int:
        """The handle of cfg's runner on this workspace, opened at its first
        call (which must not come during a capture: it compiles)."""
        key = tuple(sorted(cfg.items()))
        h = self.runners.get(key)
        if h is None:
            if capturing():
                raise RuntimeError(f"symmtune.torch.all_reduce: the first call of {n} {_DTYPES[dtype]} elements came "
                                   "during a CUDA graph capture, where its kernel cannot be compiled and loaded; make the "
                                   "same call once before the capture (a warm-up)")
            h = self.runners[key] = _native.allreduce_open(
                {"region_bytes": self.sym.nbytes, "world": self.world, "rank": self.rank, "dtype": _DTYPES[dtype],
                 "device": self.device.index, "config": cfg},
                list(self.sym.ptrs), self.sym.table.data_ptr())
        return h

    def close(self) -> None:
        """Frees the runners (the library waits for the GPU first)."""
        for h in self.runners.values():
            _native.allreduce_close(h)
        self.runners.clear()


_workspaces: dict[tuple[str, torch.dtype, int], _Workspace] = {}
# Workspaces of the tensors `empty` made, by the tensor's address.
_owned: dict[int, _Workspace] = {}
_choices: dict[tuple[str, torch.dtype, int], Choice] = {}


def _workspace(group_name: str, dtype: torch.dtype, n: int, device: torch.device) -> _Workspace:
    key = (group_name, dtype, device.index)
    ws = _workspaces.get(key)
    if ws is None or ws.capacity < n:
        # Every rank asks for the same sizes in the same order (the calls
        # are collective), so every rank grows at the same call.
        cap = max(n, 2 * ws.capacity if ws else 1 << 20)
        old, ws = ws, _Workspace(group_name, dtype, cap, device)
        _workspaces[key] = ws
        if old is not None:
            old.close()  # its calls are laid out again (all_reduce)
    return ws


def empty(n: int, dtype: torch.dtype = torch.bfloat16, group=None, device: torch.device | None = None) -> torch.Tensor:
    """A tensor of n elements in symmetric memory of its own (with the
    kernels' scratch and output regions: 3x its padded size): all_reduce of
    it needs no staging copy, and with the push two-shot no copy at all.
    Collective: every rank of the group calls it with the same n. The
    memory lives as long as the process."""
    device = device or torch.device("cuda", torch.cuda.current_device())
    name, _, world = _group_info(group)
    ws = _Workspace(name, dtype, padded(n, torch.empty((), dtype=dtype).element_size(), world), device)
    t = ws.buf[:n]
    _owned[t.data_ptr()] = ws
    return t


def choose(n: int, dtype: torch.dtype, world: int, cache: str | os.PathLike | None = None) -> Choice:
    """The config all_reduce runs for n elements on world ranks: the cache's
    answer for this machine if it was tuned for these kernel sources, else
    the default (with a warning saying how to tune)."""
    dt = _DTYPES.get(dtype)
    if dt is None:
        raise TypeError(f"symmtune.torch.all_reduce: dtype {dtype}; the CUDA all-reduce takes {list(_DTYPES)}")
    _record.note("allreduce", world, dt, {"n": n})  # with SYMMTUNE_RECORD or record(FILE): for symmtune search
    how = (f"tune it with: symmtune search --backend cuda --kernel allreduce --world {world} "
           f"--shape n={n} --dtype {dt}")
    try:
        m = lookup("allreduce", world, dt, {"n": n}, backend="cuda", cache=cache, kernel_version=kernel_version())
    except NoTunedConfig:
        warnings.warn(f"symmtune: no tuned all-reduce for {world} ranks, {dt}, n={n} (for these kernel sources, "
                      f"version {kernel_version()}); running the default config; {how}", stacklevel=3)
        return Choice(default_config(n, torch.empty((), dtype=dtype).element_size(), world), "default")
    source = "tuned" if m.exact else "nearest"
    if m.other_driver:
        source = "other-driver"
    algo = m.entry.config.get("algorithm")
    if algo in _NOT_RUN:
        warnings.warn(f"symmtune: the tuned all-reduce for {world} ranks, {dt}, n={n} is algorithm={algo}, which "
                      f"symmtune.torch does not run ({_NOT_RUN[str(algo)]}); running the default config; to get a config it "
                      f"runs, {how} --where algorithm=<another>", stacklevel=3)
        return Choice(default_config(n, torch.empty((), dtype=dtype).element_size(), world), "default")
    return Choice(dict(m.entry.config), source, m.entry.median_us)


def all_reduce(tensor: torch.Tensor, group=None, cache: str | os.PathLike | None = None) -> torch.Tensor:
    """Sums tensor over the group's ranks, in place (every rank gets the
    sum), with the tuned kernel; returns tensor. tensor: contiguous, on this
    rank's current CUDA device, bf16, f16 or f32. group: a ProcessGroup, its
    name, or None (the default group). Collective: every rank calls it
    with the same size, in the same order. torch.ops.symmtune.all_reduce_
    is the same call as a registered op (CUDA graphs, torch.compile)."""
    if torch.compiler.is_compiling():
        # A node of the traced graph (see symmtune._ops); eagerly, the
        # implementation below runs without the dispatcher's cost.
        torch.ops.symmtune.all_reduce_(tensor, _constant_group_name(group), _cache_arg(cache))
        return tensor
    if not tensor.is_cuda or not tensor.is_contiguous():
        raise ValueError("symmtune.torch.all_reduce: tensor must be a contiguous CUDA tensor")
    # Everything but the launch itself is settled once per tensor: the
    # time a call takes includes the host's, and a kernel of a few µs must
    # not wait for Python.
    key = (tensor.data_ptr(), tensor.numel(), tensor.dtype, group if isinstance(group, str) else id(group))
    c = _calls.get(key)
    # A call laid out on a workspace that a larger call has since replaced
    # is laid out again.
    if c is None or (_owned.get(c.ws_key) if isinstance(c.ws_key, int) else _workspaces.get(c.ws_key)) is not c.ws:
        c = _calls[key] = _prepare(tensor, group, cache)
    _native.allreduce_enqueue(c.handle, raw_stream(c.ws.device.index), tensor.data_ptr(), c.n)
    return tensor


@dataclass
class _Call:
    ws_key: tuple[str, torch.dtype, int] | int  # the group workspace's key, or the address of a tensor from `empty`
    ws: "_Workspace"
    handle: int  # the Go runner's (symmtune._native.allreduce_open)
    n: int


_calls: dict[tuple, _Call] = {}


def _prepare(tensor: torch.Tensor, group, cache) -> _Call:
    """Looks up the config, picks the workspace and opens its runner for
    all_reduce of tensor. The runner (kernels/allreduce's Runner) does the
    rest per call: the copy in unless the tensor is the workspace's input
    region, the padding zeroed, the kernel, the copy out unless the sum
    landed in the tensor."""
    name, rank, world = _group_info(group)
    n, dtype, device = tensor.numel(), tensor.dtype, tensor.device
    ckey = (name, dtype, n)
    choice = _choices.get(ckey)
    if choice is None:
        choice = _choices[ckey] = choose(n, dtype, world, cache)
    # The kernels run on npad elements (zeros past n, see kernels.padded):
    # [input | scratch | output] of npad elements each in the workspace.
    npad = padded(n, tensor.element_size(), world)
    ws_key: tuple[str, torch.dtype, int] | int = tensor.data_ptr()
    ws = _owned.get(tensor.data_ptr())
    if ws is None or ws.buf.dtype != dtype or ws.capacity < npad or ws.world != world:
        ws_key = (name, dtype, device.index)
        ws = _workspace(name, dtype, npad, device)
    return _Call(ws_key, ws, ws.runner(choice.config, dtype, n), n)


_ops.register(all_reduce, all_gather_matmul, matmul_reduce_scatter)
_ops.register_scaled(all_gather_scaled_matmul, scaled_matmul_reduce_scatter)

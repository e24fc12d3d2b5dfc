"""symmtune's tuned kernels, run from PyTorch.

    import torch.distributed as dist
    import symmtune.torch as st

    x = st.empty(n, dtype=torch.bfloat16)   # optional: input already in symmetric memory
    st.all_reduce(x)                         # in place, sum, like dist.all_reduce(x)

``all_reduce`` looks the tuned config up once per (size, dtype, group) in the
cache ``symmtune search`` writes (symmtune.lookup, this machine's
fingerprint), compiles the very CUDA C files the Go plugin embeds
(kernels/allreduce/kernels, symm/cudamem/barrier.cuh) with NVRTC for the
device and the config, and runs them on torch symmetric memory that this
module owns (one staging workspace per group and dtype, grown as needed).
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
symmtune._torch_gemm).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Callable

import torch

from . import _cuda, _ops, record as _record
from ._torch_gemm import all_gather_matmul, matmul_reduce_scatter
from ._torchrt import DTYPES as _DTYPES, Replay, allocate, group_info as _group_info, group_name as _group_name
from ._torchrt import capturing, raw_stream, side_streams
from .cache import NoTunedConfig, lookup
from . import kernels
from .kernels import _NOT_RUN, Choice, default_config, kernel_sources, kernel_version, macros, padded

__all__ = ["Choice", "all_gather_matmul", "all_reduce", "choose", "empty", "matmul_reduce_scatter", "record"]

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
    of n elements each, for any n up to capacity), its signal pads, and the
    device table of every rank's buffer and pad pointers."""

    def __init__(self, group_name: str, dtype: torch.dtype, capacity: int, device: torch.device) -> None:
        self.capacity = capacity
        self.buf, self.hdl = allocate(group_name, 3 * capacity, dtype, device)
        ptrs = list(self.hdl.buffer_ptrs) + list(self.hdl.signal_pad_ptrs)
        self.table = _cuda.Buffer.of_u64(ptrs)
        self.world, self.rank = self.hdl.world_size, self.hdl.rank

    def peer(self, q: int) -> torch.Tensor:
        return self.hdl.get_buffer(q, (3 * self.capacity,), self.buf.dtype)


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
        ws = _Workspace(group_name, dtype, cap, device)
        _workspaces[key] = ws
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


class _Kernel:
    """The compiled all-reduce for one config on one device and world."""

    def __init__(self, cfg: dict, dtype: str, world: int, device: torch.device) -> None:
        algo = cfg["algorithm"]
        if algo not in kernels._ALGOS:
            raise ValueError(f"symmtune.torch: unknown all-reduce algorithm {algo!r}")
        self.algo, self.threads, self.blocks = kernels._ALGOS[algo], int(cfg["threads"]), int(cfg["blocks"])
        barrier, common, ar, _ = kernel_sources()
        opts = macros(dtype, world) + [f"-DALGO={self.algo}", f"-DTHREADS={self.threads}", f"-DUNROLL={int(cfg['unroll'])}"]
        if _in_place(self.algo):
            opts.append("-DPUSH_OUT=0")  # the sum in place over the input region: no copy back
        cc = torch.cuda.get_device_capability(device)
        self.fn = _cuda.module(barrier + common + ar, "allreduce.cu", opts, device.index, cc).function("allreduce")
        self.barrier = _cuda.module(barrier, "symm_barrier.cu", [], device.index, cc).function("symm_barrier")
        sms = torch.cuda.get_device_properties(device).multi_processor_count
        if self.blocks > kernels._MAX_BLOCKS or _cuda.resident_blocks(self.fn, self.threads) * sms < self.blocks:
            raise ValueError(f"symmtune.torch: {self.blocks} blocks of {self.threads} threads cannot all be resident "
                             f"on {sms} SMs (the per-block barriers need the whole grid)")


_kernels: dict[tuple, _Kernel] = {}


def _in_place(algo: int) -> bool:
    """Whether the algorithm (ALGO number) sums in place over the input
    region: the push two-shots (PUSH_OUT=0)."""
    return algo in (kernels._ALGOS["two_shot_push"], kernels._ALGOS["two_shot_overlap"])


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
    c.run(tensor.view(-1))
    return tensor


@dataclass
class _Call:
    ws_key: tuple[str, torch.dtype, int] | int  # the group workspace's key, or the address of a tensor from `empty`
    ws: "_Workspace"
    run: Callable[[torch.Tensor], None]  # takes the caller's tensor, flat


_calls: dict[tuple, _Call] = {}


def _prepare(tensor: torch.Tensor, group, cache) -> _Call:
    """Looks up, compiles and lays out all_reduce of tensor."""
    name, rank, world = _group_info(group)
    n, dtype, device = tensor.numel(), tensor.dtype, tensor.device
    ckey = (name, dtype, n)
    choice = _choices.get(ckey)
    if choice is None:
        choice = _choices[ckey] = choose(n, dtype, world, cache)
    cfg = choice.config
    kkey = (tuple(sorted(cfg.items())), dtype, world, device.index)
    k = _kernels.get(kkey)
    if k is None:
        if capturing():
            raise RuntimeError(f"symmtune.torch.all_reduce: the first call of {n} {_DTYPES[dtype]} elements came during "
                               "a CUDA graph capture, where its kernel cannot be compiled and loaded; make the same call "
                               "once before the capture (a warm-up)")
        k = _kernels[kkey] = _Kernel(cfg, _DTYPES[dtype], world, device)
    kernel: _Kernel = k  # what the call below closes over
    # The kernels run on npad elements (zeros past n, see kernels.padded):
    # [input | scratch | output] of npad elements each in the workspace.
    npad = padded(n, tensor.element_size(), world)
    ws_key: tuple[str, torch.dtype, int] | int = tensor.data_ptr()
    ws = _owned.get(tensor.data_ptr())
    if ws is None or ws.buf.dtype != dtype or ws.capacity < npad or ws.hdl.world_size != world:
        ws_key = (name, dtype, device.index)
        ws = _workspace(name, dtype, npad, device)
    space: _Workspace = ws
    inp, pad = ws.buf[:n], ws.buf[n:npad]
    staged = tensor.data_ptr() != inp.data_ptr()
    nbytes = npad * tensor.element_size()
    # one_shot and two_shot write the sum to `out`; peers read this rank's
    # input region meanwhile, so `out` is the tensor itself only when the
    # input was staged and the tensor can take npad 16-byte-aligned
    # elements. The push two-shot sums in place in the input region, the
    # copy-engine two-shot into the output region.
    direct = staged and k.algo in (1, 2) and npad == n and tensor.data_ptr() % 16 == 0
    out = tensor.data_ptr() if direct else ws.buf[2 * npad:].data_ptr()
    out_region = inp if _in_place(k.algo) else ws.buf[2 * npad:2 * npad + n]
    launch = _cuda.Launcher(k.fn, k.blocks, k.threads, [ws.table.data_ptr(), out, nbytes // 16, ws.rank, nbytes])

    # The call takes the caller's tensor each time and keeps none: a kept
    # tensor would pin its memory, and inside torch.compile's CUDA graphs
    # the memory at this address belongs to a later tensor.
    def call(stream: int, flat: torch.Tensor) -> None:
        if staged:
            inp.copy_(flat)
        if npad > n:
            pad.zero_()  # a larger call may have left data there
        if kernel.algo == 4:
            _two_shot_ce(kernel, space, npad, nbytes // 16, stream)
        else:
            launch(stream)
        if not direct and flat.data_ptr() != out_region.data_ptr():
            flat.copy_(out_region)

    if not staged and npad == n and _in_place(k.algo):
        # The whole call is one kernel: launched directly (one driver
        # call), cheaper than any graph.
        index = device.index
        return _Call(ws_key, ws, lambda flat: launch(raw_stream(index)))
    return _Call(ws_key, ws, Replay(call, device, "all_reduce"))


def _barrier(k: _Kernel, ws: _Workspace, stream: int) -> None:
    _cuda.launch(k.barrier, 1, 32, [ws.table.data_ptr(), ws.rank, ws.world], stream)


def _two_shot_ce(k: _Kernel, ws: _Workspace, n: int, nvec: int, stream: int) -> None:
    """The copy-engine two-shot, as kernels/allreduce's launchCE runs it:
    scatter chunks into their owners' scratch slots on one stream per peer,
    barrier, reduce the own chunk locally, copy it into every peer's output
    region, barrier."""
    r, w = ws.rank, ws.world
    chunk = n // w
    main = torch.cuda.current_stream()
    side = side_streams(ws.buf.device, w - 1)

    def copies(dst, src):
        fork = torch.cuda.Event()
        fork.record(main)
        for i in range(1, w):
            q, s = (r + i) % w, side[i - 1]
            s.wait_event(fork)
            with torch.cuda.stream(s):
                dst(q).copy_(src(q), non_blocking=True)
            join = torch.cuda.Event()
            join.record(s)
            main.wait_event(join)

    mine = ws.buf
    copies(lambda q: ws.peer(q)[n + r * chunk:n + (r + 1) * chunk], lambda q: mine[q * chunk:(q + 1) * chunk])
    _barrier(k, ws, stream)
    _cuda.launch(k.fn, k.blocks, k.threads, [ws.table.data_ptr(), 0, nvec, r, n * mine.element_size()], stream)
    copies(lambda q: ws.peer(q)[2 * n + r * chunk:2 * n + (r + 1) * chunk],
           lambda q: mine[2 * n + r * chunk:2 * n + (r + 1) * chunk])
    _barrier(k, ws, stream)


_ops.register(all_reduce, all_gather_matmul, matmul_reduce_scatter)

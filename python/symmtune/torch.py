"""symmtune's tuned kernels, run from PyTorch.

    import torch.distributed as dist
    import symmtune.torch as st

    x = st.empty(n, dtype=torch.bfloat16)   # optional: input already in symmetric memory
    st.all_reduce(x)                         # in place, sum, like dist.all_reduce(x)

``all_reduce`` looks the tuned config up once per (size, dtype, group) in the
cache ``symmtune search`` writes (one request to libsymmtune,
allreduce.choose: symmtune.lookup's rules, this machine's fingerprint,
the default where nothing runs), runs rank 0's choice on every rank of the group (agreed
through the group's store, a round of symmtune._group), and runs it through libsymmtune (symmtune._native's
allreduce_open and allreduce_enqueue): kernels/allreduce's Runner, in Go,
compiles the CUDA C the Go plugin embeds with NVRTC for the device and the
config and enqueues the call on torch's current stream, on torch symmetric
memory that this module owns (one staging workspace per group and dtype,
grown as needed, in eager calls only; memory a captured CUDA graph may
replay is never freed: symmtune._arena). The call at a (tensor address, size) seen before replays
a CUDA graph the runner captured; inside a capture it is enqueued as it is.
A tensor from ``empty`` lives in a symmetric workspace of its own: with the
push two-shot (compiled with PUSH_OUT=0, the sum in place over its input)
its all_reduce is one kernel launch, nothing copied. With the push
two-shots any other 16-byte-aligned tensor is one kernel launch too: their
direct entry reads the tensor and writes the sum into it, the workspace
taking only the exchange. Any other tensor is copied in (and, for the
algorithms whose result lands in symmetric memory, back). The Lamport algorithms, one_shot_lamport (messages up to 4 MiB) and
two_shot_lamport (up to 16 MiB), are one kernel launch on any tensor: each
reads the tensor and writes the sum into it, its Lamport buffers in a
workspace of the group's own, and needs no barrier. With no tuned entry, or one tuned for another version of the kernel
sources, the plugin's default config runs and a warning says how to tune.
Any size and alignment runs: like the Go plugin, the kernels work on the
size padded with zeros to whole 16-byte vectors on every rank.

``all_gather_matmul`` and ``matmul_reduce_scatter`` run the GPU GEMM
plugins' own launch sequence, in Go, through libsymmtune (see
symmtune._torch_gemm); ``all_gather_scaled_matmul`` and
``scaled_matmul_reduce_scatter`` are their FP8 forms (float8_e4m3fn
operands with float32 scales, bf16 results, torch._scaled_mm's conventions:
see symmtune._torch_fp8).

Serving programs: one eager call per (op, shape), in any order, is enough
before a capture; a call that cannot run inside one (its first, or one that
needs more memory) raises CaptureError before enqueuing anything.
``memory_stats()`` says what the process holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from typing import Any, Callable

import torch

from . import _native, _ops, _torch_gemm, record as _record
from ._arena import Arena, CaptureError, Generation
from ._torch_fp8 import all_gather_scaled_matmul, scaled_matmul_reduce_scatter
from ._torch_gemm import all_gather_matmul, matmul_reduce_scatter
from ._torchrt import DTYPES as _DTYPES, group_info as _group_info, group_name as _group_name
from ._torchrt import Symmetric, capturing, first_call, group_of, new_arena, note, raw_stream, reap_all
from .kernels import Choice, padded

__all__ = ["CaptureError", "Choice", "all_gather_matmul", "all_gather_scaled_matmul", "all_reduce", "choose", "empty",
           "matmul_reduce_scatter", "memory_stats", "record", "scaled_matmul_reduce_scatter"]

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


# The all-reduce's workspaces, one per (group, dtype, device, kind):
# "staging", [input | scratch | output] of npad elements each, for any npad
# up to what the arena holds, the first sized for a 2^20-element call; or a
# Lamport algorithm's buffers, named after it (the library's
# allreduce.choose answers which, and its size). Each is an
# arena (symmtune._arena: grown by generations, never freed while a graph
# may replay it).
_arenas: dict[tuple[str, torch.dtype, int, str], Arena] = {}
# The workspaces of the tensors `empty` made, by the tensor's address (the
# memory lives as long as the process, so the address is never reused).
_owned: dict[int, Arena] = {}
# The group's choice (allreduce.choose's answer, rank 0's) by (group, dtype, n).
_choices: dict[tuple[str, torch.dtype, int], dict] = {}
_MIN_ELEMENTS = 1 << 20


def _arena(group_name: str, dtype: torch.dtype, device: torch.device, kind: str = "staging") -> Arena:
    key = (group_name, dtype, device.index, kind)
    a = _arenas.get(key)
    if a is None:
        what = "all-reduce workspace" if kind == "staging" else f"{kind} buffers"
        a = _arenas[key] = new_arena(f"the {_DTYPES[dtype]} {what} of group {group_name}", group_name, device)
    return a


def _opener(cfg: dict, dtype: torch.dtype, device: torch.device) -> Callable[[Symmetric, int | None], int]:
    """Opens the all-reduce runner of cfg on a generation's region (one
    runner serves every size: nothing to take from the one it replaces)."""
    def open_on(region: Symmetric, prev: int | None) -> int:
        return _native.allreduce_open(
            {"region_bytes": region.nbytes, "world": region.world, "rank": region.rank, "dtype": _DTYPES[dtype],
             "device": device.index, "config": cfg},
            list(region.ptrs), region.table.data_ptr())
    return open_on


def empty(n: int, dtype: torch.dtype = torch.bfloat16, group=None, device: torch.device | None = None) -> torch.Tensor:
    """A tensor of n elements in symmetric memory of its own (with the
    kernels' scratch and output regions: 3x its padded size): all_reduce of
    it needs no staging copy, and with the push two-shot no copy at all.
    Collective: every rank of the group calls it with the same n. The
    memory lives as long as the process. Not inside a CUDA graph capture."""
    device = device or torch.device("cuda", torch.cuda.current_device())
    name, _, world = _group_info(group)
    elt = torch.empty((), dtype=dtype).element_size()
    a = new_arena(f"symmtune.torch.empty's memory of {n} elements", name, device)
    gen = a.fit(3 * padded(n, elt, world) * elt, f"empty({n})")
    t = gen.region.buf.view(dtype)[:n]
    _owned[t.data_ptr()] = a
    return t


# Benchmarks' hook (bench/ar_force.py), as _torch_gemm.forced is the
# GEMMs': "config", a config laid over each size's default (where it
# cannot run, the default runs, with a warning), or "cache", a cache file
# read instead of the caller's. Empty: the usual choice.
forced: dict[str, Any] = {}


def _choose(n: int, dtype: torch.dtype, world: int, cache: str | os.PathLike | None) -> dict:
    """The library's allreduce.choose answer for n elements on world
    ranks, its warnings given and its error raised (_native.chosen): config,
    source, median_us and n padded as the kernels run it. Records the call
    first (with SYMMTUNE_RECORD or record(FILE): for symmtune search)."""
    dt = _DTYPES.get(dtype)
    if dt is None:
        raise TypeError(f"symmtune.torch.all_reduce: dtype {dtype}; the CUDA all-reduce takes {list(_DTYPES)}")
    note("allreduce", world, dt, {"n": n})
    cache = forced.get("cache", cache)
    over = {"config": forced["config"]} if "config" in forced else {}
    return _native.chosen(_native.call("allreduce.choose", n=n, dtype=dt, world=world, env=dict(os.environ),
                               cache="" if cache is None else os.fspath(cache), **over), stacklevel=None)


def choose(n: int, dtype: torch.dtype, world: int, cache: str | os.PathLike | None = None) -> Choice:
    """The config all_reduce runs for n elements on world ranks: the cache's
    answer for this machine if it was tuned for these kernel sources, else
    the default (with a warning saying how to tune)."""
    c = _choose(n, dtype, world, cache)
    return Choice(c["config"], c["source"], c["median_us"])


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
    # not wait for Python. The key holds the group as given (None, a name,
    # or the ProcessGroup itself, whose id cannot be reused while it is
    # held here).
    key = (tensor.data_ptr(), tensor.numel(), tensor.dtype, group)
    c = _calls.get(key)
    if c is None:
        c = _calls[key] = _prepare(tensor, group, cache)
    elif c.gen is not c.arena.current:
        c.move()  # the workspace grew: the arena opened the runner on the new memory
    _native.allreduce_enqueue(c.handle, raw_stream(c.device), tensor.data_ptr(), c.n)
    return tensor


@dataclass
class _Call:
    """An all-reduce call laid out: its arena (the group's staging
    workspace, or the tensor's own from `empty`), the runner's key there
    and handle on the generation it was taken from, and the size."""
    arena: Arena
    key: tuple
    gen: Generation
    handle: int
    device: int
    n: int

    def move(self) -> None:
        """Takes the runner on the arena's current generation (opened there
        when it grew: nothing is opened here, so it may run in a capture)."""
        gen = self.arena.current
        assert gen is not None
        self.handle, self.gen = gen.runners[self.key], gen


_calls: dict[tuple, _Call] = {}


def _prepare(tensor: torch.Tensor, group, cache) -> _Call:
    """Agrees on the config with the group, picks the workspace and opens
    its runner for all_reduce of tensor. The runner (kernels/allreduce's
    Runner) does the rest per call: the copy in unless the tensor is the
    workspace's input region or the kernel reads it directly, the padding
    zeroed, the kernel, the copy out unless the sum landed in the tensor.
    A first call is a round of the group (symmtune._group): rank 0's
    choice, every rank at the same call, every rank's layout made before
    any enqueues. In a capture it neither allocates nor opens:
    CaptureError."""
    name, rank, world = _group_info(group)
    n, dtype = tensor.numel(), tensor.dtype
    ckey = (name, dtype, n)
    choice = _choices.get(ckey)
    if choice is not None:
        return _open_call(tensor, name, choice)
    what = f"the all-reduce of {n} {dtype} elements"
    if capturing():
        # A round's open that fails fails the group: refuse before it.
        raise CaptureError(f"symmtune.torch: the first {what} came during a CUDA graph capture, where its "
                           "workspace and runner cannot be made nor its config agreed by the group; make the same "
                           "call once before the capture (a warm-up)")
    grp = group_of(name, rank, world)
    grp.check(what=what)
    with grp.lock:
        choice = _choices.get(ckey)
        if choice is not None:  # another thread's first call agreed it
            return _open_call(tensor, name, choice)
        reap_all()
        opened: list[_Call] = []

        def open_(got: dict) -> dict:
            opened.append(_open_call(tensor, name, got))
            return got
        # Every rank lays the call out (workspace growth, the runner) before
        # any rank enqueues: a failure anywhere raises on every rank.
        choice = _choices[ckey] = first_call(name, rank, world, f"allreduce/{_DTYPES.get(dtype, dtype)}", f"n={n}",
                                             what, lambda: _choose(n, dtype, world, cache), open_)
        return opened[0]


def _open_call(tensor: torch.Tensor, name: str, choice: dict) -> _Call:
    """The call on tensor laid out with the group's choice: its workspace
    (grown if need be) and runner (opened at the config's first call)."""
    n, dtype, device = tensor.numel(), tensor.dtype, tensor.device
    # The staged kernels run on npad elements (zeros past n, see
    # kernels.padded): [input | scratch | output] of npad elements each in
    # the workspace. A Lamport algorithm reads and writes the tensor itself,
    # wherever it lives (one kernel, nothing staged): its runner takes the
    # group's workspace of that algorithm, even for a tensor from `empty`.
    elt = tensor.element_size()
    kind, need = choice["workspace"], choice["region_bytes"]
    owned = _owned.get(tensor.data_ptr()) if kind == "staging" else None
    own = owned.current if owned is not None else None
    if owned is not None and own is not None and own.nbytes >= need and own.region.group_name == name:
        a = owned
    else:
        a = _arena(name, dtype, device, kind)
        if kind == "staging":
            need = max(need, 3 * _MIN_ELEMENTS * elt)
    what = f"all_reduce of {n} {_DTYPES[dtype]} elements"
    gen = a.fit(need, what)
    rkey = tuple(sorted(choice["config"].items()))
    h = a.runner(rkey, _opener(choice["config"], dtype, device), what)
    return _Call(a, rkey, gen, h, device.index, n)


def memory_stats() -> dict[str, int]:
    """What symmtune.torch holds on this rank's device, after freeing what
    destroyed graphs no longer hold (an eager call; not in a capture):
    symmetric_bytes (every workspace and the memory of `empty` tensors;
    retired_bytes of it kept only because a captured CUDA graph may replay
    it), device_bytes beyond them (the library's: engine_bytes, its shared
    streams, workspaces and kernels, and pool_bytes, what its memory pool
    holds: runner_bytes, its runners' tables and staging, graph_held_bytes
    of them kept only for graphs, and freed blocks it keeps for the next
    runners, up to 32 MiB), the handles open and retired but kept for
    graphs, and the runners (units) open. In a capture: CaptureError (it
    frees what graphs no longer hold, which a capture must not)."""
    if capturing():
        raise CaptureError("symmtune.torch: memory_stats() came during a CUDA graph capture, where it would free "
                           "memory and synchronize; call it outside the capture")
    reap_all()
    arenas = list(_arenas.values()) + list(_owned.values()) + list(_torch_gemm.arenas.values())
    held = [a.held_bytes() for a in arenas]
    counts = [a.runner_counts() for a in arenas]
    rt = _native.call("runtime.stats")
    return {"symmetric_bytes": sum(h for h, _ in held), "retired_bytes": sum(r for _, r in held),
            "runners": sum(c for c, _ in counts), "retired_runners": sum(r for _, r in counts),
            "device_bytes": rt["device_bytes"], "engine_bytes": rt["engine_bytes"],
            "pool_bytes": rt["pool_bytes"], "runner_bytes": rt["unit_bytes"] + rt["zombie_bytes"],
            "graph_held_bytes": rt["zombie_bytes"],
            "units": rt["units"], "graph_held_units": rt["graph_held"]}


_ops.register(all_reduce, all_gather_matmul, matmul_reduce_scatter)
_ops.register_scaled(all_gather_scaled_matmul, scaled_matmul_reduce_scatter)

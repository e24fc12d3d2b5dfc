"""symmtune.torch's all-gather + matmul and matmul + reduce-scatter: the GPU
GEMM plugins' launch sequence (kernels/gemm/gpu's Runner) run from PyTorch
with the tuned config, through libsymmtune (symmtune._native's gemm_open and
gemm_enqueue): the copies, flags, cuBLASLt products, reductions, the fused
Hopper GEMM and graph=1's graphs exist once, in Go.

What stays here: the argument checks, the group's rank and size, the
library's choice (one gemm.choose request: the cache's config, or the
GPU's default; a fused config gives way to the default pipeline config on
a GPU that is not sm_90, with a warning), agreed by the group (rank 0's,
through the group's store), recording the problem, the
group's symmetric workspace (torch symm_mem, the layout of layout.go: flag
words, then the payload; its flags zeroed on every rank at the rendezvous;
grown by generations that a captured graph keeps alive: symmtune._arena),
and the outputs, which torch allocates. A runner is opened
once per (kernel, problem, dtype, group, device) with the workspace's region
pointers and pointer table; each call enqueues on torch's current stream
with the tensors' addresses. The products read B stored [N, K], as the
plugins tuned them: b.t() of an nn.Linear-style weight as it is, any other b
through a transposed copy per call (a fused tile that is not K-major reads
B [K, N]). A tuned algo that this process's cuBLASLt does not rank (another
library version) gives way to its first, with a warning.

graph=1 (either impl) replays the call from a CUDA graph per set of operand
addresses, captured in Go at the second call with them; inside a capture
(the caller's torch.cuda.graph, torch.compile's) every call enqueues its
work as it is, and the caller's graph holds it.

The eager functions here are also the CUDA implementations of the
registered ops torch.ops.symmtune.all_gather_matmul, all_gather_matmul_a
and matmul_reduce_scatter (symmtune._ops); under torch.compile the public
functions call the ops. The FP8 forms (symmtune._torch_fp8) run on the same
runners, keyed by the dtype's name (e4m3, e4m3_row), through _Gemm.scaled_call.
"""

from __future__ import annotations

import os
import warnings

import torch

from . import _native
from ._arena import Arena, CaptureError
from .gemm import AGMM, MATMULRS, SCALED_DTYPES
from .kernels import Choice
from ._torchrt import Symmetric, capturing, first_call, group_info, group_name, group_of, new_arena, note, raw_stream
from ._torchrt import reap_all

GEMM_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}

# The group's GEMM workspace on each device (both kernels, every shape:
# calls are collective and in order, and each ends with the barrier), by
# (group, device): grown by generations (symmtune._arena), its flag words
# clear in each.
arenas: dict[tuple[str, int], Arena] = {}


def arena(group_name: str, device: torch.device) -> Arena:
    key = (group_name, device.index)
    a = arenas.get(key)
    if a is None:
        # The flag words before the payload (layout.go) start clear.
        a = arenas[key] = new_arena(f"the GEMM workspace of group {group_name}", group_name, device,
                                    zero_bytes=_native.constants()["gemm"]["payload_offset"])
    return a


# The warnings of runner opens already given (a runner reopened when the
# workspace grows says nothing new).
_warned: set[tuple] = set()


@torch.compiler.assume_constant_result
def _constant_group_name(group) -> str:
    """The group's name, a constant of a traced graph."""
    return group_name(group)


def _check(what: str, x: torch.Tensor, name: str, dtype: torch.dtype | None = None) -> None:
    if x.dim() != 2:
        raise ValueError(f"symmtune.torch.{what}: {name} has shape {tuple(x.shape)}; want a 2-D matrix")
    if x.dtype not in GEMM_DTYPES:
        raise TypeError(f"symmtune.torch.{what}: {name} is {x.dtype}; the GPU GEMM kernels take bf16 or f16")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(f"symmtune.torch.{what}: {name} is {x.dtype}, the other operand {dtype}")


def _check_device(what: str, *named: tuple[str, torch.Tensor]) -> None:
    """After every operand's shape and dtype: a dtype error names the
    mismatch even when the operands are also on the wrong device."""
    for name, x in named:
        if not x.is_cuda or x.device.index != torch.cuda.current_device():
            raise ValueError(f"symmtune.torch.{what}: {name} is on {x.device}; want this rank's current CUDA device")


def _dense(x: torch.Tensor) -> torch.Tensor:
    """x with dense rows and a 16-byte aligned start, as the copies and TMA
    read it: x itself when it is so, else a copy."""
    if not x.is_contiguous():
        x = x.contiguous()
    return x if x.data_ptr() % 16 == 0 else x.clone()


class _Gemm:
    """One (kernel, row bucket, N, K, dtype, group, device): the config the
    group agreed for the bucket and the Go op opened for it on the group's
    workspace. The op runs any row count m of the bucket (lo, top]: the
    library opens a small runner per m at its first call (tables, plans),
    on the device's shared engine. dt is the dtype's name (gemm.DTYPES):
    for the FP8 ones (scaled) the operands are float8_e4m3fn, the output
    bf16, and every call carries the scales."""

    def __init__(self, kernel: str, n: int, k: int, world: int, dtype: torch.dtype, group_name: str, rank: int,
                 device: torch.device, answer: dict, dt: str) -> None:
        """The problem is (top, n, k) on world ranks, top being the
        bucket's rows; answer: the group's gemm.choose answer (config,
        source, median_us, symmetric_bytes, b_kn, m, m_lo)."""
        self.kernel, self.n, self.k, self.world = kernel, n, k, world
        self.dtype, self.rank, self.device, self.dt = dtype, rank, device, dt
        self.out_dtype = torch.bfloat16 if dt in SCALED_DTYPES else dtype
        self.group_name = group_name
        self.lo, self.top = int(answer["m_lo"]), int(answer["m"])
        self.config: dict = dict(answer["config"])
        self.source: str = answer["source"]
        self.median_us: float | None = answer["median_us"]
        # B as the products read it: [N, K] (b.t()), but [K, N] for a fused
        # tile that is not K-major (never FP8: Validate refuses such a tile).
        self.b_kn: bool = answer["b_kn"]
        self.arena = arena(group_name, device)
        self.key = (kernel, self.top, n, k, world, dt, tuple(sorted(self.config.items())))
        what = f"the first {kernel} call with m={self.top},n={n},k={k} on {world} ranks ({dt})"
        self.gen = self.arena.fit(answer["symmetric_bytes"], what)
        self.handle = self.arena.runner(self.key, self._open, what)

    @property
    def choice(self) -> Choice:
        """The agreed config and where it came from (what benchmarks report)."""
        return Choice(dict(self.config), self.source, self.median_us)

    def _open(self, region: Symmetric, prev: int | None) -> int:
        """Opens this bucket's op on a generation of the workspace; with
        prev, the op it replaces, whose row counts open here at once (they
        were warmed up: a capture after the growth needs them)."""
        req = {"kernel": self.kernel, "m": self.top, "n": self.n, "k": self.k, "world": self.world,
               "rank": self.rank, "dtype": self.dt, "device": self.device.index, "config": dict(self.config)}
        if prev is not None:
            req["warm_from"] = prev
        handle, warning = _native.gemm_open(req, list(region.ptrs), region.table.data_ptr())
        self._warn(warning)
        return handle

    def _warn(self, warning: str) -> None:
        if warning and (self.key, warning) not in _warned:
            _warned.add((self.key, warning))
            warnings.warn(f"symmtune.torch: {warning}", stacklevel=_native.user_stacklevel())

    def move(self) -> None:
        """Takes the op on the workspace's current generation (opened
        there when it grew: nothing is opened here, so it may run in a
        capture)."""
        gen = self.arena.current
        assert gen is not None
        self.handle, self.gen = gen.runners[self.key], gen

    def b_operand(self, b: torch.Tensor) -> torch.Tensor:
        """B [k, n] as the runner reads it (see b_kn): b.t() as it is when
        dense, as an nn.Linear weight's .t() is; else a copy."""
        return _dense(b if self.b_kn else b.t())

    def _enqueue(self, fn, *args: int) -> None:
        """One library call; a first call of a row count inside a capture
        raises CaptureError."""
        try:
            self._warn(fn(self.handle, raw_stream(self.device.index), *args))
        except _native.CaptureNeedsWarmup as e:
            raise CaptureError(str(e)) from None

    def __call__(self, a: torch.Tensor, b: torch.Tensor, m: int, return_a: bool = False):
        """agmm: C, or (A, C) with A a new tensor of the gathered rows.
        matmulrs: this rank's rows of the sum. m: the call's rows (of the
        bucket)."""
        a = _dense(a)
        bt = self.b_operand(b)  # held until the call is enqueued: it may be a copy
        rows = m if self.kernel == AGMM else m // self.world
        out = torch.empty(rows, self.n, dtype=self.dtype, device=self.device)
        gathered = torch.empty(m, self.k, dtype=self.dtype, device=self.device) if return_a else None
        self._enqueue(_native.gemm_enqueue, m, a.data_ptr(), bt.data_ptr(), out.data_ptr(),
                      0 if gathered is None else gathered.data_ptr())
        return (gathered, out) if gathered is not None else out

    def scaled_call(self, a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor,
                    b_scale: torch.Tensor, m: int) -> torch.Tensor:
        """An FP8 call (symmtune._torch_fp8 checked the operands): agmm, C
        [M, N]; matmulrs, this rank's rows of the sum [M/W, N]; bf16."""
        a, bt = _dense(a), _dense(b.t())  # b.t() is [N, K] dense: the caller checked
        a_scale, b_scale = _dense(a_scale), _dense(b_scale)
        rows = m if self.kernel == AGMM else m // self.world
        out = torch.empty(rows, self.n, dtype=self.out_dtype, device=self.device)
        self._enqueue(_native.gemm_enqueue_scaled, m, a.data_ptr(), bt.data_ptr(), out.data_ptr(), 0,
                      a_scale.data_ptr(), b_scale.data_ptr())
        return out


# The ops by (kernel, n, k, world, dtype, group, device, forced): one per
# row bucket, each serving m in (lo, top].
_pipes: dict[tuple, list[_Gemm]] = {}

# Configs to run instead of choosing, by kernel (benchmarks that measure
# given configs): the library checks each on the call's problem (a
# ValueError where it cannot run) and the group runs it as source "forced".
# Each forced config gets an op of its own, kept beside the chosen one
# and the other forced ones, so a benchmark can interleave several.
forced: dict[str, dict] = {}


def opened(kernel: str | None = None, m: int | None = None, n: int | None = None,
           k: int | None = None) -> list[_Gemm]:
    """The ops opened so far, oldest first, of kernel whose bucket holds m
    rows and whose n and k are these (None: any): what benchmarks report
    as the config a call ran."""
    out = []
    for key, pipes in _pipes.items():
        for pipe in pipes:
            if ((kernel is None or key[0] == kernel) and (n is None or key[1] == n) and (k is None or key[2] == k)
                    and (m is None or pipe.lo < m <= pipe.top)):
                out.append(pipe)
    return out


def choose(kernel: str, m: int, n: int, k: int, world: int, dtn: str, device: torch.device, cache,
           over: dict | None = None, bucket: bool = False) -> dict:
    """The library's gemm.choose answer for kernel at (m, n, k) on world
    ranks, of dtype dtn on device's GPU: the cache's config (cache None: the
    default cache), else the GPU-aware default; over, where given, is
    checked and run instead. bucket: for m's row bucket (the answer's m_lo
    and m). Its error and warnings are the caller's (_native.chosen)."""
    major, minor = torch.cuda.get_device_capability(device)
    return _native.call("gemm.choose", kernel=kernel, m=m, n=n, k=k, world=world, dtype=dtn,
                        cache="" if cache is None else os.fspath(cache), env=dict(os.environ), major=major,
                        minor=minor, sms=torch.cuda.get_device_properties(device).multi_processor_count,
                        bucket=bucket, **({"config": over} if over is not None else {}))


def _pipeline(kernel: str, m: int, n: int, k: int, dtype: torch.dtype, group, cache, dt: str | None = None) -> _Gemm:
    """The op of (kernel, m's row bucket, n, k, dtype) on group, m being
    the call's rows in all, opened at the bucket's first call with the
    config the group agreed on. dt: the dtype's name (gemm.DTYPES) where
    the torch dtype does not say it (FP8: e4m3 or e4m3_row, by the
    scales). Inside a capture a first call raises CaptureError before
    anything is enqueued.

    A bucket's first call asks the library once (gemm.choose for the
    bucket's top rows: ParseProblem's rules, a ValueError before anything
    else; the cache's config for this machine and these kernel sources if
    it runs there, else the GPU's default, with a warning; the
    workspace's size), records the bucket's problem, and runs a round of
    the group (symmtune._group: rank 0's choice, every rank at the same
    call, every rank's open done before any enqueues)."""
    name, rank, world = group_info(group)
    device = torch.device("cuda", torch.cuda.current_device())
    dtn: str = dt or GEMM_DTYPES[dtype]
    over = forced.get(kernel)
    key = (kernel, n, k, world, dtn, name, device.index, None if over is None else tuple(sorted(over.items())))
    for pipe in _pipes.get(key, ()):
        if pipe.lo < m <= pipe.top:
            if pipe.gen is not pipe.arena.current:
                pipe.move()  # the workspace grew: the arena opened the op on the new memory
            return pipe
    what = f"{kernel} with m={m},n={n},k={k} on {world} ranks ({dtn})"
    if capturing():
        raise CaptureError(f"symmtune.torch: the first {what} came during a CUDA graph capture, where its layout "
                           "(symmetric memory, kernels, buffers) cannot be made nor its config agreed by the group; "
                           "make the same call once before the capture (a warm-up)")
    grp = group_of(name, rank, world)
    grp.check(what=f"the {what}")
    with grp.lock:
        for pipe in _pipes.get(key, ()):  # another thread's first call may have opened it
            if pipe.lo < m <= pipe.top:
                return pipe
        reap_all()
        answer = choose(kernel, m, n, k, world, dtn, device, cache, over, bucket=True)
        top = int(answer.get("m", m))
        note(kernel, world, dtn, {"m": top, "n": n, "k": k})
        # chosen's warnings name the public function's line that called here.
        pipe = first_call(name, rank, world, f"{kernel}/{dtn}", f"m<={top},n={n},k={k}", f"the {what}",
                          lambda: _native.chosen(answer, stacklevel=None),
                          lambda got: _Gemm(kernel, n, k, world, dtype, name, rank, device, got, dtn))
        _pipes.setdefault(key, []).append(pipe)
    return pipe


def reset() -> None:
    """Forgets every GEMM runner, so that the next call of each problem
    chooses its config again (benchmarks that force configs): the runners
    are retired, kept only where a captured graph may replay them."""
    for a in arenas.values():
        a.forget()
    _pipes.clear()


def all_gather_matmul(a_shard: torch.Tensor, b: torch.Tensor, group=None, *, return_a: bool = False,
                      cache: str | os.PathLike | None = None):
    """C = all_gather(a_shard) @ b, as
    torch.ops.symm_mem.fused_all_gather_matmul(a_shard, [b], 0, group_name)
    computes it for 2-D operands, with the tuned agmm config.

    a_shard: [M/W, K], this rank's rows of A (rank q holds rows
    [q*M/W, (q+1)*M/W)); b: [K, N], this rank's (the product uses each rank's
    own b, as torch's op does); bf16 or f16, on this rank's current CUDA
    device. group: a ProcessGroup, its name, or None (the default group).
    Returns C [M, N], a new tensor; with return_a=True, (A, C) with A
    [M, K] the gathered rows (a new tensor too). Collective: every rank
    calls it with the same shapes, in the same order. As registered ops:
    torch.ops.symmtune.all_gather_matmul (C) and all_gather_matmul_a ((A, C))."""
    if torch.compiler.is_compiling():
        name, c = _constant_group_name(group), None if cache is None else os.fspath(cache)
        if return_a:
            return torch.ops.symmtune.all_gather_matmul_a(a_shard, b, name, c)
        return torch.ops.symmtune.all_gather_matmul(a_shard, b, name, c)
    _check("all_gather_matmul", a_shard, "a_shard")
    _check("all_gather_matmul", b, "b", a_shard.dtype)
    _check_device("all_gather_matmul", ("a_shard", a_shard), ("b", b))
    _, _, world = group_info(group)
    rows, k = a_shard.shape
    if b.shape[0] != k:
        raise ValueError(f"symmtune.torch.all_gather_matmul: a_shard is [{rows}, {k}] but b is {list(b.shape)}; "
                         f"want b [{k}, N]")
    m = rows * world
    return _pipeline(AGMM, m, b.shape[1], k, a_shard.dtype, group, cache)(a_shard, b, m, return_a)


def matmul_reduce_scatter(a: torch.Tensor, b: torch.Tensor, group=None, *,
                          cache: str | os.PathLike | None = None) -> torch.Tensor:
    """Rank r's rows [r*M/W, (r+1)*M/W) of the sum over ranks of a @ b, as
    torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0,
    group_name) computes it for 2-D operands, with the tuned matmulrs
    config.

    a: [M, K], this rank's (M divisible by the world size); b: [K, N]; bf16
    or f16, on this rank's current CUDA device. Returns [M/W, N], a new
    tensor (fp32 accumulation in each product and in the reduction).
    group: a ProcessGroup, its name, or None (the default group).
    Collective: every rank calls it with the same shapes, in the same order.
    As a registered op: torch.ops.symmtune.matmul_reduce_scatter."""
    if torch.compiler.is_compiling():
        return torch.ops.symmtune.matmul_reduce_scatter(a, b, _constant_group_name(group),
                                                        None if cache is None else os.fspath(cache))
    _check("matmul_reduce_scatter", a, "a")
    _check("matmul_reduce_scatter", b, "b", a.dtype)
    _check_device("matmul_reduce_scatter", ("a", a), ("b", b))
    _, _, world = group_info(group)
    m, k = a.shape
    if b.shape[0] != k:
        raise ValueError(f"symmtune.torch.matmul_reduce_scatter: a is [{m}, {k}] but b is {list(b.shape)}; "
                         f"want b [{k}, N]")
    if m % world:
        raise ValueError(f"symmtune.torch.matmul_reduce_scatter: a has {m} rows, not divisible by the {world} "
                         "ranks: every rank gets the same number of rows")
    return _pipeline(MATMULRS, m, b.shape[1], k, a.dtype, group, cache)(a, b, m)

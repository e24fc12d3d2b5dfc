"""symmtune.torch's all-gather + matmul and matmul + reduce-scatter: the GPU
GEMM plugins' pipelines (kernels/gemm/gpu: agmm_cuda.go, matmulrs_cuda.go,
pipeline_cuda.go) run from PyTorch with the tuned config.

What the Go pipeline does, this does, step for step: the plan of
symmtune.gemm (plan.go's, held to it by a parity test) orders the chunks;
chunks move between ranks' symmetric buffers (torch symmetric memory, the
layout of layout.go: flag words, then the payload) by the copy engines
(cuMemcpyDtoDAsync) or the SM copy kernel, on one side stream per peer;
readiness is a flag in the consumer's buffer that the producer's stream sets
(cuStreamWriteValue32, after its data) and the consumer's stream waits for
and clears (cuStreamWaitValue32), or an event within a rank; the products
are cuBLASLt's, planned and chosen as the plugins plan and choose them
(_cublaslt), on the product streams; matmulrs's reduction is the
reduce_chunk kernel of kernels/gemm/gpu/kernels/gemm_util.cu, compiled from
that file with NVRTC; every call ends with the team barrier, so no rank's
next call overwrites what a peer still reads.

The tuned config's chunks, streams, batch (one batched product per step),
algo (the index into cuBLASLt's ranked algorithms), sm_reserve (its SM count
target), direction, copy, copy_blocks, push and reduce_blocks are honoured.
The products read B stored [N, K], as the plugins tuned them: b.t() of an
nn.Linear-style weight as it is, any other b through a transposed copy per
call. A tuned algo that this process's cuBLASLt does not rank (another
library version) gives way to its first, with a warning.

A tuned config of impl=fused runs the persistent Hopper GEMM
(kernels/gemm/hopper) with the same copies, flags and reductions
(_torch_fused), sm_reserve and reduce (the epilogue's reduction) included;
on a GPU that is not sm_90 such a config gives way to the default pipeline
config, with a warning naming it (gemm.choose_runnable).

graph=1 (either impl) replays the call from a CUDA graph per set of operand
addresses (_torch_pipeline.PointerGraphs), as the Go plugins replay a
trial's call: one driver call instead of dozens. Inside a capture (the
caller's torch.cuda.graph, torch.compile's) every call enqueues its work as
it is, and the caller's graph holds it.

The eager functions here are also the CUDA implementations of the
registered ops torch.ops.symmtune.all_gather_matmul, all_gather_matmul_a
and matmul_reduce_scatter (symmtune._ops); under torch.compile the public
functions call the ops.
"""

from __future__ import annotations

import os
from typing import Callable, TypeVar, cast

import torch

from . import _cuda, _torch_fused, gemm, record as _record
from ._torch_pipeline import GEMM_DTYPES, Pipeline, util_fn, workspaces
from ._torchrt import capturing, group_info, group_name, raw_stream


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
    if not x.is_cuda or x.device.index != torch.cuda.current_device():
        raise ValueError(f"symmtune.torch.{what}: {name} is on {x.device}; want this rank's current CUDA device")


class _AllGatherMatmul(Pipeline):
    def __init__(self, *args) -> None:
        super().__init__(gemm.AGMM, *args)
        p, r = self.p, self.rank
        self.plan = gemm.plan_ag(self.cfg.plan(p, r))
        self.push = self.cfg.direction == "push"
        self.a = self.ws.view(r, gemm.PAYLOAD_OFFSET, p.m * p.k, self.dtype).view(p.m, p.k)
        if not self.fused:
            self.prepare_products(self.plan.products)
        self.row_bytes = p.k * self.elt
        self.copy_fn = util_fn("copy_chunk", GEMM_DTYPES[self.dtype], self.device) if self.cfg.copy == "sm" else None
        # The pushes and the products read the caller's shard where it is
        # (gemm.shard_in_place says when), or it is copied into the
        # workspace before each call.
        self.in_place = gemm.shard_in_place(self.cfg, p, r)
        self.shard = 0  # the caller's shard the enqueued copies read (in place)
        if self.fused:
            self.fused_call = _torch_fused.ag_call(self, self.status)

    def copy(self, stream: int, sp: gemm.Span, src: int, dst: int) -> None:
        off = sp.start * self.row_bytes
        d, s, n = self.payload(dst) + off, self.payload(src) + off, sp.rows * self.row_bytes
        if src == self.rank and self.in_place:
            s = self.shard + (sp.start - self.rank * self.p.rows) * self.row_bytes
        if self.copy_fn is None:
            _cuda.memcpy(d, s, n, stream)
        else:
            _cuda.launch(self.copy_fn, self.cfg.copy_blocks, gemm.COPY_THREADS, [d, s, n], stream)

    def __call__(self, a_shard: torch.Tensor, b: torch.Tensor, return_a: bool = False):
        """C, or (A, C) with A a new tensor of the gathered rows."""
        p, me = self.p, self.rank
        rows = p.rows
        main = raw_stream(self.device.index)
        if self.fused:
            # Before anything reaches a peer: a broken group stops here.
            self.status.check(self.kernel)
            b = _torch_fused.b_operand(self.tile, b)
        else:
            b = _torch_fused.dense(b.t())
        if self.in_place:
            # Dense rows at a 16-byte aligned start (TMA's and the copies').
            a_shard = _torch_fused.dense(a_shard)
            self.shard = a_shard.data_ptr()
        elif self.fused:
            # Before the call, in stream order: a copy within one GPU runs
            # as a kernel, and a persistent GEMM waiting on it could hold
            # every SM (bench/results/2026-11-23-h200x2-torch-fused.md).
            self.a[me * rows:(me + 1) * rows].copy_(a_shard)
        c = torch.empty(p.m, p.n, dtype=self.dtype, device=self.device)
        if self.fused:
            fptrs = (self.a.data_ptr(), b.data_ptr(), c.data_ptr(), a_shard.data_ptr())

            def enqueue(s: int) -> None:
                self.fused_call.set(*fptrs)  # the tensor maps and arguments of these operands
                self.enqueue_fused(s)
            self.run(main, fptrs, enqueue)
            return self.gathered(a_shard, c) if return_a else c
        ptrs = (a_shard.data_ptr(), b.data_ptr(), c.data_ptr())
        # The shard's strides too: a captured copy of it reads by them.
        self.run(main, ptrs + a_shard.stride(), lambda s: self.enqueue_pipeline(s, a_shard, *ptrs))
        return self.gathered(a_shard, c) if return_a else c

    def enqueue_pipeline(self, main: int, a_shard: torch.Tensor, a_ptr: int, b_ptr: int, c_ptr: int) -> None:
        """The pipelined call on stream main (torch's current stream): the
        own shard into the workspace unless read in place, the copies, each
        product once its rows are here, the join and the end barrier."""
        p, me, plan = self.p, self.rank, self.plan
        rows = p.rows
        if not self.in_place:
            self.a[me * rows:(me + 1) * rows].copy_(a_shard)
        self.enqueue_copies(main)
        for st in plan.products:
            gs = self.gemm_streams[st.stream].cuda_stream
            for sp in st.spans(rows):
                if sp.owner == me:
                    continue
                if self.push:
                    self.consume(gs, gemm.partial_flag(sp.owner, sp.index))
                else:
                    _cuda.wait_event(gs, self.chunk_ev[self.peer_index(sp.owner) * gemm.MAX_CHUNKS + sp.index])
            sp = st.span
            a = self.a.data_ptr() + sp.start * self.row_bytes
            if sp.owner == me and self.in_place:  # the own product is one step of the own rows
                a = a_ptr + (sp.start - me * rows) * self.row_bytes
            self.product(st, a, b_ptr, c_ptr + sp.start * p.n * self.elt)
        self.end(main)

    def gathered(self, a_shard: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(A, c): A a new tensor of the gathered rows, the own ones from
        a_shard where the call read them in place."""
        a = self.a.clone()
        if self.in_place:
            rows = self.p.rows
            a[self.rank * rows:(self.rank + 1) * rows].copy_(a_shard)
        return a, c

    def enqueue_copies(self, main: int) -> None:
        """Pull: announce the own shard to every peer (after the caller's
        copy of it: the write is ordered after it), then pull each peer's
        chunks on that peer's stream once it announced its shard. Push:
        write the own chunks into every peer's buffer, flagging each there.
        A pulled chunk is announced to the products by an event, or to the
        fused GEMM by this rank's flag."""
        me, plan = self.rank, self.plan
        if not self.push:
            for q in plan.peers:
                _cuda.write_value(main, self.flag(q, gemm.ready_flag(me)), 1)
        self.begin(main)
        for i, q in enumerate(plan.peers):
            s = self.side[i]
            if self.push:
                for sp in plan.own:
                    self.copy(s, sp, me, q)
                    _cuda.write_value(s, self.flag(q, gemm.partial_flag(me, sp.index)), 1)
            else:
                self.consume(s, gemm.ready_flag(q))
                for sp in plan.pulls[i]:
                    self.copy(s, sp, q, me)
                    if self.fused:
                        _cuda.write_value(s, self.flag(me, gemm.partial_flag(q, sp.index)), 1)
                    else:
                        _cuda.record(self.chunk_ev[i * gemm.MAX_CHUNKS + sp.index], s)

    def enqueue_fused(self, main: int) -> None:
        """The copies, then the persistent GEMM on the first product stream
        (its arguments as fused_call holds them), then the clearing of the
        flags it waited on (clear_flags)."""
        self.enqueue_copies(main)
        gs = self.gemm_streams[0].cuda_stream
        self.signal_start(gs)
        self.fused_call.launch(gs)
        self.clear_flags(gs)
        self.end(main)


class _MatmulReduceScatter(Pipeline):
    def __init__(self, *args) -> None:
        super().__init__(gemm.MATMULRS, *args)
        p, r = self.p, self.rank
        self.plan = gemm.plan_rs(self.cfg.plan(p, r))
        self.slot_elems = gemm.slot_elems(p)
        self.gemm_push = self.cfg.push == "gemm"
        self.red_fn = util_fn("reduce_chunk", GEMM_DTYPES[self.dtype], self.device)
        self.fused_call: _torch_fused.Call | None = None
        self.staging: _cuda.Buffer | None = None
        if not self.fused:
            self.prepare_products(self.plan.products)
        if self.fused:
            ce = self.cfg.push == "ce" and p.world > 1
            # push=ce: peers' rows staged here, each chunk flagged in a word
            # of local_flags that the copy engine's stream waits for.
            self.fused_staging = _cuda.Buffer(p.m * p.n * self.elt) if ce else None
            self.local_flags = _cuda.Buffer(gemm.MAX_WORLD * gemm.MAX_CHUNKS * gemm.FLAG_STRIDE, zero=True) if ce else None
            self.fused_plan = _torch_fused.rs_plan(self)
            self.fused_call = _torch_fused.rs_call(self, self.fused_plan, self.status, self.fused_staging,
                                                   self.local_flags)
            self.fused_shards = gemm.shards(p.m, p.world, self.cfg.chunks)
            self.epilogue = self.cfg.reduce == "epilogue"
            # One launch of the reduction per own chunk (none when the
            # epilogue reduces), whose output (argument 0) is each call's.
            self.fused_reduces = []
            for sp in [] if self.epilogue else self.fused_shards[r]:
                start = (sp.start - r * p.rows) * p.n
                self.fused_reduces.append((sp, _cuda.Launcher(self.red_fn, self.cfg.reduce_blocks, gemm.REDUCE_THREADS,
                                                              [0, self.slot(r, 0), self.slot_elems, p.world, start,
                                                               sp.rows * p.n])))

    def slot(self, q: int, src: int) -> int:
        """Where rank src's partial of owner q's rows lives, as mapped here."""
        return self.payload(q) + src * self.slot_elems * self.elt

    def reduce_span(self, out: int, sp: gemm.Span) -> None:
        p, me = self.p, self.rank
        for src in range(p.world):
            self.consume(self.reduce, gemm.partial_flag(src, sp.index))
        start = (sp.start - me * p.rows) * p.n
        _cuda.launch(self.red_fn, self.cfg.reduce_blocks, gemm.REDUCE_THREADS,
                     [out, self.slot(me, 0), self.slot_elems, p.world, start, sp.rows * p.n], self.reduce)

    def __call__(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        p = self.p
        main = raw_stream(self.device.index)
        out = torch.empty(p.rows, p.n, dtype=self.dtype, device=self.device)
        if self.fused:
            self.status.check(self.kernel)
            a = _torch_fused.dense(a)
            b = _torch_fused.b_operand(self.tile, b)
            fptrs = (a.data_ptr(), b.data_ptr(), out.data_ptr())

            def enqueue(s: int) -> None:
                # The GEMM's arguments (C only with the epilogue's
                # reduction) and each reduction's output, for these operands.
                assert self.fused_call is not None
                self.fused_call.set(fptrs[0], fptrs[1], fptrs[2] if self.epilogue else 0)
                for _, ln in self.fused_reduces:
                    ln.set_arg(0, fptrs[2])
                self.enqueue_fused(s)
            self.run(main, fptrs, enqueue)
            return out
        a = _torch_fused.dense(a)
        bt = _torch_fused.dense(b.t())  # held until the call is enqueued: it may be a copy
        ptrs = (a.data_ptr(), bt.data_ptr(), out.data_ptr())
        self.run(main, ptrs, lambda s: self.enqueue_pipeline(s, *ptrs))
        return out

    def enqueue_pipeline(self, main: int, a_ptr: int, bt: int, out_ptr: int) -> None:
        """The pipelined call on stream main: each product into its owner's
        slot (the own and, with push=gemm, every one) or into the staging
        rows, from which a copy engine pushes it; each flagged; the own rows
        reduced once every rank's partial is flagged; the join and the end
        barrier."""
        p, me, plan = self.p, self.rank, self.plan
        rows, row_bytes = p.rows, p.n * self.elt
        staging = self.staging_ptr()
        a_row = p.k * self.elt
        self.begin(main)
        for i, st in enumerate(plan.products):
            q, g, sp = st.span.owner, self.gemm_streams[st.stream].cuda_stream, st.span
            if q == me or self.gemm_push:  # straight into the owner's slot (never batched)
                dst = self.slot(q, me) + (sp.start - q * rows) * row_bytes
                self.product(st, a_ptr + sp.start * a_row, bt, dst)
                _cuda.write_value(g, self.flag(q, gemm.partial_flag(me, sp.index)), 1)
                if q == me:
                    self.reduce_span(out_ptr, sp)
                continue
            self.product(st, a_ptr + sp.start * a_row, bt, staging + sp.start * row_bytes)
            ev = self.chunk_ev[i]
            _cuda.record(ev, g)
            for sp in st.spans(rows):
                s = self.side[self.peer_index(sp.owner)]
                _cuda.wait_event(s, ev)
                _cuda.memcpy(self.slot(sp.owner, me) + (sp.start - sp.owner * rows) * row_bytes,
                             staging + sp.start * row_bytes, sp.rows * row_bytes, s)
                _cuda.write_value(s, self.flag(sp.owner, gemm.partial_flag(me, sp.index)), 1)
        self.end(main)

    def staging_ptr(self) -> int:
        """Where products of peers' rows land before a copy engine pushes
        them ([M, N]; none with push=gemm or one rank): made at the first
        call and kept, so a captured call's addresses stay valid (the end
        barrier and the streams' joins order each call's use after the
        last's)."""
        if self.gemm_push or self.p.world == 1:
            return 0
        if self.staging is None:
            self.staging = _cuda.Buffer(self.p.m * self.p.n * self.elt)
        return self.staging.data_ptr()

    def enqueue_fused(self, main: int) -> None:
        """The persistent GEMM on the first product stream (sm_reserve SMs
        left to the reductions; its arguments as fused_call holds them);
        with push=ce, each peer's chunks pushed by the copy engine of its
        stream once staged (the GEMM's local flag, cleared for the next
        call); the reduction of every own chunk once every rank's partial of
        it is flagged, or (reduce=epilogue) the clearing of this rank's
        partial flags after the GEMM, which waited for all of them (the
        end barrier keeps the next call's sets after the clear)."""
        p, me, plan, call = self.p, self.rank, self.fused_plan, self.fused_call
        assert call is not None
        self.begin(main)
        gs = self.gemm_streams[0].cuda_stream
        if call.gated:
            self.signal_start(gs)
        call.launch(gs)
        if self.epilogue:
            self.clear_flags(gs)
        sh = self.fused_shards
        row_bytes = p.n * self.elt
        if self.local_flags is not None and self.fused_staging is not None:
            for i, q in enumerate(plan.owner):
                if q == me:
                    continue
                s, sp = self.side[self.peer_index(q)], sh[q][plan.index[i]]
                local = self.local_flags.data_ptr() + i * gemm.FLAG_STRIDE
                _cuda.wait_value(s, local, 1)
                _cuda.write_value(s, local, 0)
                _cuda.memcpy(self.slot(q, me) + (sp.start - q * p.rows) * row_bytes,
                             self.fused_staging.data_ptr() + sp.start * row_bytes, sp.rows * row_bytes, s)
                _cuda.write_value(s, self.flag(q, gemm.partial_flag(me, sp.index)), 1)
        for sp, ln in self.fused_reduces:
            for src in range(p.world):
                self.consume(self.reduce, gemm.partial_flag(src, sp.index))
            ln(self.reduce)
        self.end(main)


_pipes: dict[tuple, Pipeline] = {}


def _no_fused(device: torch.device) -> str | None:
    """Why the fused GEMM cannot run on device (None: it can)."""
    major, minor = torch.cuda.get_device_capability(device)
    return None if major == 9 else f"the fused GEMM needs an sm_90 GPU (wgmma, TMA); this one is sm_{major}{minor}"


_Pipe = TypeVar("_Pipe", bound=Pipeline)


def _pipeline(cls: Callable[..., _Pipe], kernel: str, p: gemm.Problem, dtype: torch.dtype, group, cache) -> _Pipe:
    name, rank, world = group_info(group)
    device = torch.device("cuda", torch.cuda.current_device())
    key = (kernel, p, dtype, name, device.index)
    pipe = _pipes.get(key)
    # A pipeline laid out on a workspace that a larger problem has since
    # replaced is laid out again.
    if pipe is None or workspaces.get((name, device.index)) is not pipe.ws:
        gemm.check_problem(kernel, p)
        if capturing():
            raise RuntimeError(f"symmtune.torch: the first {kernel} call with m={p.m},n={p.n},k={p.k} on {p.world} ranks "
                               "came during a CUDA graph capture, where its layout (symmetric memory, kernels, buffers) "
                               "cannot be made; make the same call once before the capture (a warm-up)")
        _record.note(kernel, p.world, GEMM_DTYPES[dtype], {"m": p.m, "n": p.n, "k": p.k})
        choice = gemm.choose_runnable(kernel, p, GEMM_DTYPES[dtype], cache, no_fused=_no_fused(device))
        pipe = _pipes[key] = cls(p, dtype, name, rank, device, choice)
    return cast(_Pipe, pipe)


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
    _, _, world = group_info(group)
    rows, k = a_shard.shape
    if b.shape[0] != k:
        raise ValueError(f"symmtune.torch.all_gather_matmul: a_shard is [{rows}, {k}] but b is {list(b.shape)}; "
                         f"want b [{k}, N]")
    p = gemm.Problem(rows * world, b.shape[1], k, world)
    return _pipeline(_AllGatherMatmul, gemm.AGMM, p, a_shard.dtype, group, cache)(a_shard, b, return_a)


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
    _, _, world = group_info(group)
    m, k = a.shape
    if b.shape[0] != k:
        raise ValueError(f"symmtune.torch.matmul_reduce_scatter: a is [{m}, {k}] but b is {list(b.shape)}; "
                         f"want b [{k}, N]")
    if m % world:
        raise ValueError(f"symmtune.torch.matmul_reduce_scatter: a has {m} rows, not divisible by the {world} "
                         "ranks: every rank gets the same number of rows")
    p = gemm.Problem(m, b.shape[1], k, world)
    return _pipeline(_MatmulReduceScatter, gemm.MATMULRS, p, a.dtype, group, cache)(a, b)

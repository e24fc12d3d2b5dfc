"""What symmtune.torch's two GEMM pipelines (_torch_gemm) share: the group's
symmetric workspace, the helper kernels of gemm_util.cu, and Pipeline, one
(kernel, problem, dtype, group, device) made once: its config and plan
inputs, streams, events, flags and the cuBLASLt products (_cublaslt) as the
Go plugins' pipeline_cuda.go runs them."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Callable

import torch

from . import _cublaslt, _cuda, _torch_fused, gemm, hopper
from ._torchrt import Symmetric, barrier_fn, capture, capturing, side_streams

GEMM_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}

workspaces: dict[tuple[str, int], Symmetric] = {}


def workspace(group_name: str, nbytes: int, device: torch.device) -> Symmetric:
    """The group's GEMM workspace (both kernels, every shape: calls are
    collective and in order, and each ends with the barrier), grown as
    needed; its flag words start clear."""
    key = (group_name, device.index)
    ws = workspaces.get(key)
    if ws is None or ws.nbytes < nbytes:
        ws = Symmetric(group_name, max(nbytes, 2 * ws.nbytes if ws else 0), device, zero_bytes=gemm.PAYLOAD_OFFSET)
        workspaces[key] = ws
    return ws


def util_fn(name: str, dtype: str, device: torch.device):
    """A kernel of gemm_util.cu (the Go pipelines' own file) for dtype."""
    cc = torch.cuda.get_device_capability(device)
    m = _cuda.module(gemm.util_source(), "gemm_util.cu", [f"-DDTYPE_BF16={int(dtype == 'bf16')}"], device.index, cc)
    return m.function(name)


class Pipeline:
    """One (kernel, problem, dtype, group, device): the config, the plan of
    this rank, the workspace, streams, events and pointers, made once."""

    def __init__(self, kernel: str, p: gemm.Problem, dtype: torch.dtype, group_name: str, rank: int,
                 device: torch.device, choice) -> None:
        self.kernel, self.p, self.dtype, self.rank, self.device = kernel, p, dtype, rank, device
        self.group_name, self.choice = group_name, choice
        self.cfg = gemm.parse_config(kernel, self.choice.config)
        self.fused = self.cfg.impl == gemm.IMPL_FUSED
        gemm.validate(self.cfg, p)
        self.ws = workspace(group_name, gemm.symmetric_bytes(kernel, p), device)
        w = p.world
        streams = side_streams(device, gemm.MAX_STREAMS + (w - 1) + 1)
        self.gemm_streams = streams[:gemm.MAX_STREAMS]
        self.side = [s.cuda_stream for s in streams[gemm.MAX_STREAMS:gemm.MAX_STREAMS + w - 1]]
        self.reduce = streams[-1].cuda_stream
        used = [s.cuda_stream for s in self.gemm_streams[:self.cfg.streams]] + self.side
        if kernel == gemm.MATMULRS:
            used.append(self.reduce)
        self.used = used
        self.fork = _cuda.event()
        self.joins = [_cuda.event() for _ in used]
        self.chunk_ev = [_cuda.event() for _ in range(gemm.MAX_WORLD * gemm.MAX_CHUNKS)]
        self.barrier = _cuda.Launcher(barrier_fn(device), 1, 32, [self.ws.table.data_ptr(), rank, w])
        self.elt = torch.empty((), dtype=dtype).element_size()
        self.status = _torch_fused.status(group_name, device)
        self.plans: dict[tuple[int, int], _cublaslt.Plan] = {}
        self.graphs = PointerGraphs(device) if self.cfg.graph else None
        self.algo = self.cfg.algo
        if not self.fused:
            self.lt_ws = [_cuda.Buffer(_cublaslt.WORKSPACE_BYTES)
                          for _ in range(self.cfg.streams)]
            sms = torch.cuda.get_device_properties(device).multi_processor_count
            self.sm_target = sms - self.cfg.sm_reserve if self.cfg.sm_reserve else 0

    def prepare_products(self, steps) -> None:
        """Plans every product of steps (the plan's) and checks the tuned
        algo against each, as the plugin's prepare does."""
        plans = [self.product_plan(st) for st in steps]
        short = min((pl.algos for pl in plans), default=self.algo + 1)
        if self.algo >= short:
            warnings.warn(f"symmtune.torch: the tuned {self.kernel} config's algo {self.algo} is not among the "
                          f"{short} algorithms this cuBLASLt ({_cublaslt.version()}) ranks for every product; "
                          "running its first", stacklevel=4)
            self.algo = 0

    def product_plan(self, st: gemm.Step) -> _cublaslt.Plan:
        """The cuBLASLt plan of step st's product (pipeline_cuda.go's plan):
        its rows, batched over st.batch ranks' rows (M/W rows apart in A
        and D)."""
        key = (st.span.rows, st.batch)
        pl = self.plans.get(key)
        if pl is None:
            p = self.p
            pl = self.plans[key] = _cublaslt.Plan(
                self.device.index, st.span.rows, p.n, p.k, GEMM_DTYPES[self.dtype], batch=st.batch,
                stride_a=p.rows * p.k, stride_d=p.rows * p.n, sm_target=self.sm_target)
        return pl

    def product(self, st: gemm.Step, a: int, bt: int, d: int) -> None:
        """Enqueues step st's product on its stream: D = A·B from A's and
        D's first row (a, d), B stored [N, K] at bt."""
        self.product_plan(st).run(self.gemm_streams[st.stream].cuda_stream, self.algo, a, bt, d,
                                  self.lt_ws[st.stream].data_ptr())

    def flag(self, q: int, i: int) -> int:
        """The address of flag i in rank q's buffer."""
        return self.ws.ptrs[q] + i * gemm.FLAG_STRIDE

    def payload(self, q: int) -> int:
        return self.ws.ptrs[q] + gemm.PAYLOAD_OFFSET

    def peer_index(self, q: int) -> int:
        return (q - self.rank - 1 + self.p.world) % self.p.world

    def consume(self, stream: int, i: int) -> None:
        """stream waits for this rank's flag i and clears it for the next call."""
        _cuda.wait_value(stream, self.flag(self.rank, i), 1)
        _cuda.write_value(stream, self.flag(self.rank, i), 0)

    def start_gate(self) -> tuple[int, int]:
        """The fused kernel's start gate (hopper_comm.cuh's Wait;
        fusedrun_cuda.go's startGate): this rank's start flags, and every
        peer."""
        return self.flag(self.rank, gemm.start_flag(0)), ((1 << self.p.world) - 1) & ~(1 << self.rank)

    def signal_start(self, stream: int) -> None:
        """Tells every peer, on stream, that this rank's call has reached its
        fused GEMM (gemm.start_flag), which that peer's kernel waits for,
        unbounded, before its first wait for this rank's data: the kernel's
        bounded waits then measure the copies, not how far a peer's host
        lags behind (a rank may reach a collective seconds after its peers).
        Nothing waits here: the own tiles start at once."""
        for q in range(self.p.world):
            if q != self.rank:
                _cuda.write_value(stream, self.flag(q, gemm.start_flag(self.rank)), 1)

    def clear_flags(self, stream: int) -> None:
        """Zeroes, on stream after the fused GEMM, every flag of this rank's
        region (fusedrun_cuda.go's clearFlags): the GEMM saw each one set
        this call (a chunk's, or a peer's start flag before its first wait
        for that peer's data; a pull's ready flag is consumed before its
        chunk is flagged), and the call's end barrier keeps the next call's
        sets after the clear."""
        _cuda.memset_d8(self.flag(self.rank, 0), 0, gemm.PAYLOAD_OFFSET, stream)

    @property
    def tile(self) -> hopper.Tile:
        """The fused config's tile (impl=fused only)."""
        assert self.cfg.tile is not None, "a fused config names its tile"
        return self.cfg.tile

    def run(self, main: int, ptrs: tuple[int, ...], enqueue: Callable[[int], None]) -> None:
        """One call on stream main: enqueue(stream) enqueues its work,
        reading and writing the operands at ptrs. With graph=1 (the tuned
        config's, as the Go plugin replays a trial's call) the call for ptrs
        is replayed from a CUDA graph (PointerGraphs)."""
        if self.graphs is None:
            enqueue(main)
        else:
            self.graphs.run(main, ptrs, enqueue)

    def begin(self, main: int) -> None:
        _cuda.record(self.fork, main)
        for s in self.used:
            _cuda.wait_event(s, self.fork)

    def end(self, main: int) -> None:
        for s, ev in zip(self.used, self.joins):
            _cuda.record(ev, s)
            _cuda.wait_event(main, ev)
        self.barrier(main)


class PointerGraphs:
    """A call (pipelined or fused) captured in a CUDA graph per set of operand
    addresses, and replayed with one driver call (cuGraphLaunch) when the
    same addresses come again: a call enqueues dozens of copies, flags,
    events and cuBLASLt products, costing the host several times a
    product's GPU time, and a program's steady state passes the same few
    addresses again and again (torch's caching allocator). A graph holds
    its addresses, so a graph serves only the call with the same ones: an
    address seen once runs directly, the second time it is captured (once),
    and at most SIZE graphs are kept, the least recently used dropped.
    Inside a capture (the caller's CUDA graph, torch.compile's) the work is
    enqueued as it is, since that graph holds it then."""

    SIZE = 8
    SEEN = 64  # addresses seen once that are remembered

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.graphs: OrderedDict[tuple[int, ...], tuple[torch.cuda.CUDAGraph, int]] = OrderedDict()
        self.seen: OrderedDict[tuple[int, ...], None] = OrderedDict()

    def run(self, main: int, ptrs: tuple[int, ...], enqueue: Callable[[int], None]) -> None:
        if capturing():
            enqueue(main)
            return
        g = self.graphs.get(ptrs)
        if g is None:
            if ptrs not in self.seen:
                self.seen[ptrs] = None
                if len(self.seen) > self.SEEN:
                    self.seen.popitem(last=False)
                enqueue(main)
                return
            del self.seen[ptrs]
            g = self.graphs[ptrs] = capture(enqueue, self.device.index)
            if len(self.graphs) > self.SIZE:
                self.graphs.popitem(last=False)
        else:
            self.graphs.move_to_end(ptrs)
        _cuda.graph_launch(g[1], main)

"""Issue 43's "Done when", checked the way a serving program runs symmtune.torch
on W GPUs, not the way a test finds convenient.

    PYTHONPATH=python torchrun --nproc-per-node W bench/serving_check.py [--quick] [--out FILE]
        [--only serving,layers,...] [--orders rotations|all] [--budget-scale F] [--timeout S]

(bench/serving-check.sh W [ARGS] unpacks the .gpu bundle and sets the
environment first.) bench/torch_ops.py warms every call up twice and drops
each graph before capturing the next, which hid the bugs of issue 43; here
every graph stays alive while the others are captured and replayed, each
(op, shape) gets ONE eager warm-up, ops and sizes are mixed, sizes grow after
the captures, and the ranks read different caches. The checks:

serving        80-layer decode steps (one all-reduce of [B, 8192] bf16 and two
               small matmuls per layer) on plain tensors and on a tensor from
               st.empty, and a TP-MLP layer (agmm, matmulrs, all-reduce, x
               [B, 4096] per rank), captured for B = 1, 2, 4, ..., 256 in
               increasing order into one shared graph pool, one warm-up each,
               all kept; then eager prefills of 512, 8192 and 32768 tokens
               (all-reduces up to 256 MiB, agmm/matmulrs at prefill sizes:
               every workspace grows); then every graph replayed 20 times in
               a random order (the same seed on every rank) on new inputs,
               interleaved with more prefills (some of sizes not seen
               before). Every replay and prefill checked.
layers         the bf16 layer (agmm -> matmulrs -> all_reduce), the FP8 pair
               (agmm + matmulrs) with tensor-wise and with row-wise scales,
               and all-reduces of 3,000 and 3*2^20 elements: each warmed up
               ONCE, in a given order, then all captured and replayed 100
               times each on new inputs. Each order runs in a process group
               of its own (nothing warmed, every workspace fresh, so the
               order decides which warm-up grows what) with shapes of its
               own. Orders: the 5 rotations of one order and of its reverse
               (every op in every position, every pair both ways); --orders
               all runs all 120 permutations.
retired        in a fresh group: graphs of each op captured and replayed,
               then larger eager calls of each op (every workspace grows,
               twice), then the graphs replayed 20 times each, synchronised
               after every replay so a fault is reported at the replay that
               made it. st.memory_stats() before and after.
capture_error  in a fresh group: the first call of each op inside
               torch.cuda.graph raises st.CaptureError (a RuntimeError) that
               names the fix (a warm-up); the next eager call is right, and
               the call then captures and replays right. A first call of a new
               size that fits what earlier calls made may instead simply be
               captured: then its replay must be right.
disagree       per-rank cache files written for this machine's fingerprint
               (case A: rank 0 tuned, a fused agmm/matmulrs tile and a
               one_shot all-reduce, the other ranks empty; B: the other
               ranks tuned differently; C: rank 0 empty, the others tuned),
               shapes unique per case: all_reduce, agmm and matmulrs right on
               every rank, no hang, and (where symmtune's internals can be
               read) one config on every rank, rank 0's.
compile        torch.compile(mode="reduce-overhead", fullgraph=True) of a
               4-layer TP model (agmm + matmulrs + all_reduce per layer) in a
               fresh group at three sequence lengths, with large eager calls
               between that grow every workspace, each length called again
               after each growth; each call checked; no cudagraph skips.
memory         a table: st.memory_stats() and the device's / torch's memory
               after the serving scenario, beside what symmtune, NCCL and
               torch symm_mem hold for the same all-reduce sizes in fresh
               groups (max over ranks).
timing         not pass/fail: per-all-reduce cost in a graphed 80-layer
               decode step at B = 1 and 16 ((step - step without all-reduces)
               / 80) for symmtune in place (st.empty), symmtune on a plain
               tensor, NCCL and torch symm_mem; and the host time of a call
               (median of back-to-back eager calls) of all_reduce 4 KiB and
               agmm / matmulrs 4096x1792x4096.

Correctness: fresh random inputs for every call (never zeros), outputs
poisoned with NaN before each replay, relative error ||got - ref|| / ||ref||
against references computed with torch ops and NCCL: float64 for small
shapes, float32 for prefill sizes; 1e-2 for one op, 2e-2 for FP8 and chains.

Each check prints `CHECK name: PASS|FAIL detail` on rank 0 (failures are
also printed on the rank that saw them) and the run ends with `N passed, M
failed`; --out FILE gets everything as JSON. A check that raises is a FAIL
and the next one runs; after a CUDA fault (a sticky error) the rest are
reported as skipped. Nothing hangs: torch.distributed's timeout (--timeout),
symmtune's agreement timeout (SYMMTUNE_AGREE_TIMEOUT, set here unless given)
and a watchdog per check that, past its budget, prints every thread's stack,
reports the check as a hang with the summary and ends the process.

--quick (for compute-sanitizer): 8 layers, B = 1, 16, 256, 3 replays, two
orders, 10 replays per layer graph, two compile lengths. Use --budget-scale
10 under the sanitizer.
"""
from __future__ import annotations

import argparse
import datetime
import faulthandler
import gc
import itertools
import json
import logging
import os
import random
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

# Before torch and symmtune load: never multicast (forbidden on the shared
# machines), and a bounded wait for the group's config agreement (seconds).
for _k, _v in (("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NCCL_NVLS_ENABLE", "0"), ("NVSHMEM_DISABLE_NVLS", "1"),
               ("SYMMTUNE_AGREE_TIMEOUT", "60"), ("PYTHONUNBUFFERED", "1")):
    os.environ.setdefault(_k, _v)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.distributed._symmetric_memory as symm_mem  # noqa: E402

import symmtune.torch as st  # noqa: E402
from symmtune import cache as st_cache, gemm as st_gemm, hardware as st_hw, kernels as st_kernels  # noqa: E402
from peer_method import host_time, time_replays, warm_and_capture  # noqa: E402

BF16, F32, F64 = torch.bfloat16, torch.float32, torch.float64
FP8 = torch.float8_e4m3fn
TOL, TOL_CHAIN = 1e-2, 2e-2

ARGS: argparse.Namespace = argparse.Namespace()
RANK, W = 0, 1
CTL: Any = None  # a gloo group: the checks' verdicts travel there, whatever state the GPUs are in
TIMEOUT = datetime.timedelta(seconds=600)
RESULTS: list[dict[str, Any]] = []
MEM: dict[str, Any] = {}
SAME: Optional[torch.Generator] = None  # draws the same values on every rank (called in the same order)


# ------------------------------------------------------------------ helpers
def log(msg: str) -> None:
    if RANK == 0:
        print(msg, flush=True)


def gen(seed: int) -> torch.Generator:
    """A generator of this rank's own values for seed."""
    return torch.Generator(device="cuda").manual_seed(seed * 1009 + RANK)


def randn(shape: tuple[int, ...], g: torch.Generator, scale: float = 1.0, dtype: torch.dtype = BF16) -> torch.Tensor:
    """Fresh normal values times scale (drawn in fp32, then cast)."""
    return (torch.randn(shape, generator=g, device="cuda", dtype=F32) * scale).to(dtype)


def fill(x: torch.Tensor, g: torch.Generator, scale: float = 1.0) -> None:
    x.copy_(torch.randn(x.shape, generator=g, device="cuda", dtype=F32) * scale)


def fp8_fill(x: torch.Tensor, g: torch.Generator) -> None:
    """e4m3 over its whole range, subnormals included (as bench/torch_fp8.py)."""
    u = torch.rand(x.shape, generator=g, device="cuda", dtype=F32) * 2 - 1
    x.copy_((u * 448).to(FP8))


def scale_fill(x: torch.Tensor, g: torch.Generator) -> None:
    x.copy_(2.0 ** -9 * (1 + torch.rand(x.shape, generator=g, device="cuda", dtype=F32)))


def rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    """||got - ref|| / ||ref|| in ref's precision; inf when got has a NaN or Inf."""
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    d = (got.to(ref.dtype) - ref).norm().item()
    n = ref.norm().item()
    return d / n if n > 0 else d


def ref_all_reduce(x: torch.Tensor, dt: torch.dtype = F64) -> torch.Tensor:
    r = x.to(dt, copy=True).contiguous()
    dist.all_reduce(r)
    return r


def gather(x: torch.Tensor, dt: torch.dtype = F64) -> torch.Tensor:
    x = x.to(dt, copy=True).contiguous()
    out = torch.empty((W * x.shape[0],) + tuple(x.shape[1:]), dtype=dt, device=x.device)
    dist.all_gather_into_tensor(out, x)
    return out


def ref_agmm(a_shard: torch.Tensor, b: torch.Tensor, dt: torch.dtype = F64) -> torch.Tensor:
    return gather(a_shard, dt) @ b.to(dt)


def ref_mmrs(a: torch.Tensor, b: torch.Tensor, dt: torch.dtype = F64) -> torch.Tensor:
    full = a.to(dt) @ b.to(dt)
    dist.all_reduce(full)
    rows = a.shape[0] // W
    return full[RANK * rows:(RANK + 1) * rows]


def linear_weight(n: int, k: int, g: torch.Generator, scale: float) -> torch.Tensor:
    """b [k, n] as the .t() of a contiguous nn.Linear-style weight [n, k]."""
    return randn((n, k), g, scale).t()


def new_group() -> Any:
    """A process group of every rank: symmtune keys its workspaces, runners
    and agreements by group, so everything starts fresh in it."""
    pg = dist.new_group(timeout=TIMEOUT)
    try:
        symm_mem.enable_symm_mem_for_group(pg.group_name)
    except Exception:  # noqa: BLE001 - deprecated or not needed in newer torch
        pass
    return pg


def st_stats() -> Optional[dict[str, int]]:
    f = getattr(st, "memory_stats", None)
    return None if f is None else {k: int(v) for k, v in dict(f()).items()}


def mem_snapshot() -> dict[str, Any]:
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return {"device_used": total - free, "torch_allocated": torch.cuda.memory_allocated(),
            "torch_reserved": torch.cuda.memory_reserved(), "st": st_stats()}


def mib(x: Optional[float]) -> str:
    return "-" if x is None else f"{x / (1 << 20):.1f}"


def agree_max(x: float) -> float:
    """The max over ranks (on the control group: valid whatever the GPUs do)."""
    t = torch.tensor([x], dtype=F64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=CTL)
    return float(t.item())


def rank0_says(flag: bool) -> bool:
    """Rank 0's flag on every rank (decisions that must be collective)."""
    t = torch.tensor([1 if flag else 0], dtype=torch.int32)
    dist.broadcast(t, 0, group=CTL)
    return bool(t.item())


class Check:
    """One check's failures, notes and data on this rank."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.fails: list[str] = []
        self.notes: list[str] = []
        self.data: dict[str, Any] = {}
        self.detail = ""

    def fail(self, msg: str) -> None:
        self.fails.append(msg)
        if len(self.fails) <= 6:
            print(f"[rank {RANK}] {self.name}: FAIL {msg}", flush=True)

    def close(self, what: str, got: torch.Tensor, ref: torch.Tensor, tol: float = TOL) -> float:
        err = rel_err(got, ref)
        if not err <= tol:
            self.fail(f"{what}: rel err {err:.3g} > {tol:g}")
        return err


# ------------------------------------------------------------ graphed calls
@dataclass
class Graphed:
    """A call a serving program captures: run() on static inputs, refill()
    puts fresh values in them, ref() the references of the values they hold
    (one per output), outs() the outputs of what run() returned."""

    name: str
    run: Callable[[], Any]
    refill: Callable[[torch.Generator], None]
    ref: Callable[[], list[torch.Tensor]]
    outs: Callable[[Any], list[torch.Tensor]]
    inputs: list[torch.Tensor]
    tol: float = TOL
    graph: Optional[torch.cuda.CUDAGraph] = None
    static_out: list[torch.Tensor] = field(default_factory=list)
    worst: float = 0.0
    bad: int = 0
    count: int = 0

    def record(self, c: Check, when: str, got: list[torch.Tensor], want: list[torch.Tensor]) -> None:
        self.count += 1
        for i, (o, r) in enumerate(zip(got, want)):
            err = rel_err(o, r)
            self.worst = max(self.worst, err)
            if not err <= self.tol:
                self.bad += 1
                if self.bad <= 2:
                    c.fail(f"{self.name} {when}: output {i} rel err {err:.3g} > {self.tol:g}")

    def warm_up(self, c: Check, g: torch.Generator) -> None:
        """The ONE eager call before the capture, on fresh inputs, checked."""
        self.refill(g)
        want = self.ref()
        self.record(c, "warm-up (eager)", self.outs(self.run()), want)

    def capture(self, pool: Any = None) -> None:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool):
            out = self.run()
        self.graph, self.static_out = graph, self.outs(out)

    def poison(self) -> None:
        ins = {x.data_ptr() for x in self.inputs}
        for o in self.static_out:
            if o.data_ptr() not in ins:  # an in-place result: the new input is its poison
                o.fill_(float("nan"))

    def replay(self, c: Check, g: torch.Generator, when: str) -> None:
        """New inputs copied into the static ones, outputs poisoned, replayed, checked."""
        assert self.graph is not None
        self.refill(g)
        want = self.ref()
        self.poison()
        self.graph.replay()
        self.record(c, when, self.static_out, want)

    def make_sets(self, g: torch.Generator, k: int) -> list[tuple[list[torch.Tensor], list[torch.Tensor]]]:
        """k sets of fresh inputs with their references, for many cheap replays."""
        sets = []
        for _ in range(k):
            self.refill(g)
            sets.append(([x.clone() for x in self.inputs], self.ref()))
        return sets

    def replay_set(self, c: Check, s: tuple[list[torch.Tensor], list[torch.Tensor]], when: str) -> None:
        assert self.graph is not None
        for x, v in zip(self.inputs, s[0]):
            x.copy_(v)
        self.poison()
        self.graph.replay()
        self.record(c, when, self.static_out, s[1])

    def drop(self) -> None:
        self.graph, self.static_out = None, []


def ar_item(name: str, n: int, group: Any = None, on_empty: bool = False) -> Graphed:
    """all_reduce of n bf16 elements in place, on a plain tensor or one from st.empty."""
    x = st.empty(n, BF16, group) if on_empty else torch.empty(n, dtype=BF16, device="cuda")

    def run() -> torch.Tensor:
        st.all_reduce(x, group)
        return x
    return Graphed(name, run, lambda g: fill(x, g), lambda: [ref_all_reduce(x)], lambda o: [o], [x])


def gemm_item(name: str, kernel: str, m: int, n: int, k: int, group: Any, g: torch.Generator) -> Graphed:
    """agmm (a_shard [m/W, k]) or matmulrs (a [m, k]) with b = w.t(), bf16."""
    rows = m // W if kernel == "agmm" else m
    a = torch.empty(rows, k, dtype=BF16, device="cuda")
    b = linear_weight(n, k, g, k ** -0.5)

    def run() -> torch.Tensor:
        if kernel == "agmm":
            return st.all_gather_matmul(a, b, group)
        return st.matmul_reduce_scatter(a, b, group)

    def ref() -> list[torch.Tensor]:
        return [ref_agmm(a, b) if kernel == "agmm" else ref_mmrs(a, b)]
    return Graphed(name, run, lambda gg: fill(a, gg), ref, lambda o: [o], [a])


class FP8Op:
    """One FP8 GEMM's operands on this rank, refilled in place: a (agmm: the
    shard [m/W, k]; matmulrs: [m, k]) and b = w.t() of a contiguous w [n, k],
    e4m3, with float32 scales (tensor-wise: one element; row-wise: [rows, 1]
    and [1, n]; agmm tensor-wise: the same a_scale on every rank)."""

    def __init__(self, kernel: str, m: int, n: int, k: int, row: bool, group: Any) -> None:
        self.kernel, self.row, self.group = kernel, row, group
        rows = m // W if kernel == "agmm" else m
        self.a = torch.empty(rows, k, dtype=FP8, device="cuda")
        self.w = torch.empty(n, k, dtype=FP8, device="cuda")
        self.b = self.w.t()
        self.sa = torch.empty((rows, 1) if row else (), dtype=F32, device="cuda")
        self.sb = torch.empty((1, n) if row else (), dtype=F32, device="cuda")

    def inputs(self) -> list[torch.Tensor]:
        return [self.a, self.w, self.sa, self.sb]

    def refill(self, g: torch.Generator) -> None:
        assert SAME is not None
        fp8_fill(self.a, g)
        fp8_fill(self.w, g)
        scale_fill(self.sa, SAME if (self.kernel == "agmm" and not self.row) else g)
        scale_fill(self.sb, g)

    def run(self) -> torch.Tensor:
        if self.kernel == "agmm":
            return st.all_gather_scaled_matmul(self.a, self.b, self.sa, self.sb, group=self.group)
        return st.scaled_matmul_reduce_scatter(self.a, self.b, self.sa, self.sb, group=self.group)

    def ref(self, dt: torch.dtype = F64) -> torch.Tensor:
        """Of the dequantized operands (q * scale)."""
        a = self.a.to(dt) * self.sa.to(dt)
        b = self.b.to(dt) * self.sb.to(dt)
        if self.kernel == "agmm":
            return gather(a, dt) @ b
        full = a @ b
        dist.all_reduce(full)
        rows = self.a.shape[0] // W
        return full[RANK * rows:(RANK + 1) * rows]


def fp8_item(name: str, ops: list[FP8Op]) -> Graphed:
    def refill(g: torch.Generator) -> None:
        for op in ops:
            op.refill(g)
    return Graphed(name, lambda: [op.run() for op in ops], refill, lambda: [op.ref() for op in ops], lambda o: list(o),
                   [x for op in ops for x in op.inputs()], tol=TOL_CHAIN)


# ------------------------------------------------------------- 1. serving
H, INNER = 8192, 256        # decode: hidden, the small matmul's width
MH, MI = 4096, 1792         # TP-MLP: hidden, intermediate per rank


def serving_bs() -> list[int]:
    return [1, 16, 256] if ARGS.quick else [1 << i for i in range(9)]


def serving_tokens() -> list[int]:
    return [512, 4096] if ARGS.quick else [512, 8192, 32768]


def ar_prefill_numel(tokens: int) -> int:
    return min(tokens, 16384) * H  # up to 256 MiB of bf16


def decode_item(bsz: int, kind: str, layers: int, w1: list[torch.Tensor], w2: list[torch.Tensor]) -> Graphed:
    """An 80-layer decode step: x @ w1 @ w2 then one all-reduce of [B, 8192]
    per layer, on the matmul's own output (plain) or in place on a tensor
    from st.empty the matmul writes (empty). The reference runs the same
    bf16 matmuls with the sums done by NCCL in fp32."""
    x_in = torch.empty(bsz, H, dtype=BF16, device="cuda")
    buf = st.empty(bsz * H, BF16) if kind == "empty" else None

    def run() -> torch.Tensor:
        x = x_in
        for i in range(layers):
            h = x @ w1[i % len(w1)]
            if buf is not None:
                y = buf.view(bsz, H)
                torch.mm(h, w2[i % len(w2)], out=y)
                st.all_reduce(buf)
            else:
                y = h @ w2[i % len(w2)]
                st.all_reduce(y)
            x = y
        return x

    def ref() -> list[torch.Tensor]:
        x = x_in.clone()
        r = x.float()
        for i in range(layers):
            r = ((x @ w1[i % len(w1)]) @ w2[i % len(w2)]).float()
            dist.all_reduce(r)
            x = r.to(BF16)
        return [r]
    return Graphed(f"decode:{kind}:B={bsz}", run, lambda g: fill(x_in, g), ref, lambda o: [o], [x_in],
                   tol=TOL_CHAIN)


def mlp_item(bsz: int, m1: torch.Tensor, m2: torch.Tensor, group: Any = None) -> Graphed:
    """A TP-MLP layer: h = relu(agmm(x, m1)); y = matmulrs(h, m2); z = y /
    sqrt(W); all_reduce(z)."""
    x = torch.empty(bsz, MH, dtype=BF16, device="cuda")

    def run() -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(st.all_gather_matmul(x, m1, group))
        y = st.matmul_reduce_scatter(h, m2, group)
        z = y * W ** -0.5
        st.all_reduce(z, group)
        return y, z

    def ref() -> list[torch.Tensor]:
        h = torch.relu(ref_agmm(x, m1)).to(BF16)  # the layer's h is bf16 too
        y = ref_mmrs(h, m2)
        return [y, ref_all_reduce(y * W ** -0.5)]
    return Graphed(f"mlp:B={bsz}", run, lambda g: fill(x, g), ref, lambda o: list(o), [x], tol=TOL_CHAIN)


def prefill(c: Check, kind: str, size: int, g: torch.Generator, m1: torch.Tensor, m2: torch.Tensor) -> float:
    """One eager prefill call, checked against an fp32 reference: all_reduce
    of size elements (kind ar), agmm or matmulrs of size tokens."""
    if kind == "ar":
        x = randn((size,), g)
        want = ref_all_reduce(x, F32)
        st.all_reduce(x)
        got = x
    elif kind == "agmm":
        x = randn((size // W, MH), g)
        want = ref_agmm(x, m1, F32)
        got = st.all_gather_matmul(x, m1)
    else:
        x = randn((size, MI), g)
        want = ref_mmrs(x, m2, F32)
        got = st.matmul_reduce_scatter(x, m2)
    err = c.close(f"prefill {kind} {size}", got, want)
    del x, want, got
    return err


def check_serving(c: Check) -> None:
    layers, bs, tokens = ARGS.layers, serving_bs(), serving_tokens()
    replays = 3 if ARGS.quick else 20
    g = gen(1)
    sched = random.Random(ARGS.seed)  # the same schedule on every rank
    w1 = [randn((H, INNER), g, H ** -0.5) for _ in range(4)]
    w2 = [randn((INNER, H), g, (INNER * W) ** -0.5) for _ in range(4)]
    m1 = linear_weight(MI, MH, g, MH ** -0.5)        # [MH, MI]
    m2 = linear_weight(MH, MI, g, (MI * W) ** -0.5)  # [MI, MH]
    MEM["serving_before"] = mem_snapshot()
    pool = torch.cuda.graph_pool_handle()  # one pool for every graph, as vLLM's
    graphs: list[Graphed] = []
    t0 = time.time()
    for bsz in bs:
        for e in (decode_item(bsz, "plain", layers, w1, w2), decode_item(bsz, "empty", layers, w1, w2),
                  mlp_item(bsz, m1, m2)):
            e.warm_up(c, g)  # ONE warm-up, eager, on the current stream
            torch.cuda.synchronize()
            e.capture(pool)
            e.replay(c, g, "first replay")
            graphs.append(e)
    c.data["captures_s"] = round(time.time() - t0, 1)
    c.data["graphs"] = len(graphs)
    # Prefills after every capture: every workspace grows.
    errs = []
    for t in tokens:
        errs.append(prefill(c, "ar", ar_prefill_numel(t), g, m1, m2))
        errs.append(prefill(c, "agmm", t, g, m1, m2))
        errs.append(prefill(c, "mmrs", t, g, m1, m2))
    torch.cuda.synchronize()
    # Every graph replayed in a random order, interleaved with prefills,
    # some of sizes not seen yet.
    order = [i for i in range(len(graphs)) for _ in range(replays)]
    sched.shuffle(order)
    extra = ([("ar", ar_prefill_numel(t)) for t in tokens] + [("agmm", t) for t in tokens]
             + [("mmrs", t) for t in tokens] + [("ar", 5_000_011), ("ar", 777), ("agmm", 1000 * W), ("mmrs", 1000 * W)])
    every = max(1, len(order) // (2 * len(extra)))
    t0 = time.time()
    for j, i in enumerate(order):
        try:
            graphs[i].replay(c, g, f"replay {j} (after growth)")
        except Exception as ex:
            c.fail(f"{graphs[i].name}: replay {j} after growth: {type(ex).__name__}: {str(ex)[:300]}")
            raise
        if (j + 1) % every == 0:
            kind, size = sched.choice(extra)
            errs.append(prefill(c, kind, size, g, m1, m2))
    torch.cuda.synchronize()
    c.data["replay_phase_s"] = round(time.time() - t0, 1)
    worst = {e.name: e.worst for e in graphs}
    c.data["worst_rel_err"] = worst
    c.data["worst_prefill_rel_err"] = max(errs) if errs else None
    nrep = sum(e.count for e in graphs)
    MEM["serving_after"] = mem_snapshot()
    c.detail = (f"{len(graphs)} graphs (B={bs[0]}..{bs[-1]}, {layers} layers) kept alive, {nrep} checked runs "
                f"(warm-up + replays), {len(errs)} prefills; worst rel err graphs {max(worst.values()):.2e}, "
                f"prefills {max(errs):.2e}")
    for e in graphs:
        e.drop()
    graphs.clear()
    gc.collect()
    MEM["serving_freed"] = mem_snapshot()


# --------------------------------------------------------------- 2. layers
LAYER_ITEMS = ("layer", "fp8_tensor", "fp8_row", "ar_3000", "ar_3M")


def layer_items(i: int, group: Any, g: torch.Generator) -> dict[str, Graphed]:
    """Order i's five captured calls in group, shapes of its own."""
    lh, li, rows = 1024, 768, 32 + 8 * i
    w1 = linear_weight(li, lh, g, lh ** -0.5)            # [lh, li]
    w2 = linear_weight(lh, li, g, (li * W) ** -0.5)      # [li, lh]
    x = torch.empty(rows, lh, dtype=BF16, device="cuda")

    def layer() -> tuple[torch.Tensor, torch.Tensor]:
        h = st.all_gather_matmul(x, w1, group)
        y = st.matmul_reduce_scatter(h, w2, group)
        r = y * W ** -0.5
        st.all_reduce(r, group)
        return y, r

    def layer_ref() -> list[torch.Tensor]:
        h = ref_agmm(x, w1).to(BF16)
        y = ref_mmrs(h, w2)
        return [y, ref_all_reduce(y * W ** -0.5)]
    frows = W * (64 + 16 * i)
    items = {
        "layer": Graphed(f"order{i}:layer", layer, lambda gg: fill(x, gg), layer_ref, lambda o: list(o), [x],
                         tol=TOL_CHAIN),
        "fp8_tensor": fp8_item(f"order{i}:fp8_tensor", [FP8Op("agmm", frows, 512, 1024, False, group),
                                                        FP8Op("matmulrs", frows, 1024, 512, False, group)]),
        "fp8_row": fp8_item(f"order{i}:fp8_row", [FP8Op("agmm", frows, 512, 1024, True, group),
                                                  FP8Op("matmulrs", frows, 1024, 512, True, group)]),
        "ar_3000": ar_item(f"order{i}:ar_3000", 3000 + 16 * i, group),
        "ar_3M": ar_item(f"order{i}:ar_3M", 3 * (1 << 20) + 16 * i, group),
    }
    return items


def layer_orders() -> list[tuple[str, ...]]:
    if ARGS.orders == "all":
        return list(itertools.permutations(LAYER_ITEMS))
    rev = tuple(reversed(LAYER_ITEMS))
    if ARGS.quick:
        return [LAYER_ITEMS, rev]
    n = len(LAYER_ITEMS)
    return [LAYER_ITEMS[j:] + LAYER_ITEMS[:j] for j in range(n)] + [rev[j:] + rev[:j] for j in range(n)]


def check_layers(c: Check) -> None:
    orders = layer_orders()
    replays = 10 if ARGS.quick else 100
    budget = ARGS.budget_scale * BUDGETS["layers"] * 0.8
    t0 = time.time()
    done, worst = 0, 0.0
    c.data["orders"] = []
    for i, perm in enumerate(orders):
        elapsed = time.time() - t0  # one more order at the mean pace so far must fit the budget
        if i and not rank0_says(elapsed * (i + 1) / i < budget):
            c.notes.append(f"stopped after {i} of {len(orders)} orders: the check's time budget")
            break
        pg = new_group()
        g = gen(200 + i)
        items = layer_items(i, pg, g)
        for name in perm:
            items[name].warm_up(c, g)  # ONE warm-up each, in this order
        torch.cuda.synchronize()
        for name in LAYER_ITEMS:  # then every capture, in one fixed order
            items[name].capture()
        sets = {name: items[name].make_sets(g, 3) for name in LAYER_ITEMS}
        for r in range(replays):
            for name in LAYER_ITEMS:
                items[name].replay_set(c, sets[name][r % 3], f"(warm-up order {','.join(perm)}) replay {r}")
        torch.cuda.synchronize()
        w = {name: items[name].worst for name in LAYER_ITEMS}
        c.data["orders"].append({"order": list(perm), "worst": w, "bad": sum(e.bad for e in items.values())})
        worst = max(worst, *w.values())
        for e in items.values():
            e.drop()
        del items, sets
        gc.collect()
        done += 1
    c.detail = (f"{done} warm-up orders x 5 graphs (bf16 layer, FP8 tensor/row pairs, all-reduce 3000 and 3*2^20) "
                f"x {replays} replays, each order in a fresh group; worst rel err {worst:.2e}")
    if c.notes:
        c.detail += "; " + "; ".join(c.notes)


# -------------------------------------------------------------- 3. retired
def check_retired(c: Check) -> None:
    pg = new_group()
    g = gen(300)
    items = [
        ar_item("all_reduce:plain", 4104, pg),
        ar_item("all_reduce:st.empty", 5000, pg, on_empty=True),
        gemm_item("agmm", "agmm", 64 * W, 512, 1024, pg, g),
        gemm_item("matmulrs", "matmulrs", 64 * W, 512, 1024, pg, g),
        fp8_item("fp8_agmm:tensor", [FP8Op("agmm", 64 * W, 512, 1024, False, pg)]),
        fp8_item("fp8_matmulrs:row", [FP8Op("matmulrs", 64 * W, 512, 1024, True, pg)]),
    ]
    stats = {"start": st_stats()}
    for e in items:
        e.warm_up(c, g)
        torch.cuda.synchronize()
        e.capture()
        e.replay(c, g, "before growth")
    torch.cuda.synchronize()
    stats["captured"] = st_stats()
    replays = 5 if ARGS.quick else 20
    for rnd in range(2):
        tok = 8192 * 4 ** rnd
        # Larger eager calls of every op in this group: every workspace grows.
        x = randn((tok * 1024,), g)
        want = ref_all_reduce(x, F32)
        st.all_reduce(x, pg)
        c.close(f"growth {rnd}: all_reduce {x.numel()}", x, want)
        a = randn((tok // W, 4096), g)
        b = linear_weight(1024, 4096, g, 4096 ** -0.5)
        c.close(f"growth {rnd}: agmm {tok}x1024x4096", st.all_gather_matmul(a, b, pg), ref_agmm(a, b, F32))
        a = randn((tok, 1024), g)
        b = linear_weight(4096, 1024, g, 1024 ** -0.5)
        c.close(f"growth {rnd}: matmulrs {tok}x4096x1024", st.matmul_reduce_scatter(a, b, pg), ref_mmrs(a, b, F32))
        for op in (FP8Op("agmm", tok, 1024, 4096, False, pg), FP8Op("matmulrs", tok, 4096, 1024, True, pg)):
            op.refill(g)
            c.close(f"growth {rnd}: fp8 {op.kernel} {tok}", op.run(), op.ref(F32), TOL_CHAIN)
        del x, want, a, b
        torch.cuda.synchronize()
        stats[f"grown{rnd}"] = st_stats()
        for rep in range(replays):
            for e in items:
                try:
                    e.replay(c, g, f"after growth {rnd}, replay {rep}")
                    torch.cuda.synchronize()  # a fault is reported at the replay that made it
                except Exception as ex:
                    c.fail(f"{e.name}: replay {rep} after growth {rnd}: {type(ex).__name__}: {str(ex)[:300]}")
                    raise
    worst = max(e.worst for e in items)
    for e in items:
        e.drop()
    gc.collect()
    torch.cuda.synchronize()
    stats["graphs_freed"] = st_stats()
    c.data["memory_stats"] = stats
    c.data["worst_rel_err"] = {e.name: e.worst for e in items}
    ret = [(stats[k] or {}).get("retired_bytes") for k in ("captured", "grown0", "grown1", "graphs_freed")]
    c.detail = (f"{len(items)} graphs replayed {replays}x after each of 2 growths of every workspace; worst rel err "
                f"{worst:.2e}; retired MiB captured/grown/grown/freed: {'/'.join(mib(r) for r in ret)}")


# -------------------------------------------------------- 4. capture_error
def _in_chain(ex: Optional[BaseException], cls: Any) -> Optional[BaseException]:
    seen = 0
    while ex is not None and seen < 8:
        if cls is not None and isinstance(ex, cls):
            return ex
        ex = ex.__cause__ or ex.__context__
        seen += 1
    return None


def check_capture_error(c: Check) -> None:
    capture_error = getattr(st, "CaptureError", None)
    if capture_error is None:
        c.fail("symmtune.torch has no CaptureError")
    elif not issubclass(capture_error, RuntimeError):
        c.fail("st.CaptureError is not a RuntimeError")
    pg = new_group()
    g = gen(400)
    cases = [
        ar_item("all_reduce", 12345, pg),
        gemm_item("agmm", "agmm", 96 * W, 640, 1024, pg, g),
        gemm_item("matmulrs", "matmulrs", 96 * W, 640, 1024, pg, g),
        fp8_item("fp8_agmm", [FP8Op("agmm", 96 * W, 640, 1024, False, pg)]),
        fp8_item("fp8_matmulrs", [FP8Op("matmulrs", 96 * W, 640, 1024, True, pg)]),
    ]
    said = {}
    for e in cases:
        e.refill(g)
        raised: Optional[BaseException] = None
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                e.run()
        except Exception as ex:  # noqa: BLE001 - what was raised is the check
            raised = ex
        del graph
        found = _in_chain(raised, capture_error)
        if raised is None:
            c.fail(f"{e.name}: a first call inside a capture raised nothing")
        elif found is None:
            c.fail(f"{e.name}: a first call inside a capture raised {type(raised).__name__}, not st.CaptureError: "
                   f"{str(raised)[:200]}")
        else:
            msg = str(found)
            said[e.name] = msg[:160]
            if "warm" not in msg.lower():
                c.fail(f"{e.name}: the CaptureError does not name the fix (a warm-up): {msg[:200]}")
            if found is not raised:
                c.fail(f"{e.name}: CaptureError raised, but ending the capture then failed: {type(raised).__name__}: "
                       f"{str(raised)[:200]}")
        torch.cuda.synchronize()  # the process carries on
        e.warm_up(c, g)  # the next eager call is right
        e.capture()
        for r in range(3):
            e.replay(c, g, f"captured after the error, replay {r}")
        e.drop()
    # A new size in the default group, whose workspaces earlier calls made:
    # CaptureError, or captured as it is and then right.
    e = ar_item("all_reduce:new size, fitting", 9_999 + 8 * W, None)
    e.refill(g)
    graph = torch.cuda.CUDAGraph()
    fits = "captured"
    try:
        with torch.cuda.graph(graph):
            e.run()
        e.graph, e.static_out = graph, e.outs(e.inputs[0])
        for r in range(3):
            e.replay(c, g, f"replay {r}")
    except Exception as ex:  # noqa: BLE001
        if _in_chain(ex, capture_error) is None:
            c.fail(f"{e.name}: {type(ex).__name__}: {str(ex)[:200]}")
        fits = "CaptureError"
        torch.cuda.synchronize()
        e.warm_up(c, g)
    e.drop()
    c.data["messages"] = said
    c.data["new_size_that_fits"] = fits
    first = next(iter(said.values()), "")
    c.detail = (f"{len(said)}/{len(cases)} first calls in a capture raised st.CaptureError, then eager and captured "
                f"calls right; a fitting new size: {fits}; e.g. \"{first[:110]}\"")


# ------------------------------------------------------------- 5. disagree
AR_SET = {
    "set1": {"algorithm": "one_shot", "threads": 256, "blocks": 4, "unroll": 1, "stages": 1},
    "set2": {"algorithm": "two_shot", "threads": 128, "blocks": 8, "unroll": 1, "stages": 1},
}
GEMM_SET: dict[str, dict[str, list[dict[str, Any]]]] = {  # candidates, the first that Validate takes
    "set1": {
        "agmm": [{"impl": "fused:128x256:s4:c2:g8:cl2"}, {"impl": "fused:128x256:s4:c2:g8"},
                 {"chunks": 4, "copy": "sm"}],
        "matmulrs": [{"impl": "fused:128x256:s4:c2:g8:cl2", "push": "gemm"},
                     {"impl": "fused:128x256:s4:c2:g8", "push": "gemm"}, {"chunks": 4}],
    },
    "set2": {
        "agmm": [{"chunks": 1, "direction": "push"}, {"chunks": 4, "direction": "push"}],
        "matmulrs": [{"chunks": 1, "push": "ce", "reduce_blocks": 64}, {"chunks": 4, "reduce_blocks": 64}],
    },
}
# The config keys compared between ranks (a config may gain parameters on the way).
SAME_KEYS = {"allreduce": ("algorithm", "blocks", "threads", "unroll"),
             "agmm": ("impl", "chunks", "direction", "copy", "streams"),
             "matmulrs": ("impl", "chunks", "push", "reduce", "streams")}


def _gemm_config(kernel: str, which: str, p: Any) -> dict[str, Any]:
    why = []
    for extra in GEMM_SET[which][kernel]:
        cfg = dict(st_gemm.default_config(kernel), **extra)
        try:
            st_gemm.validate(st_gemm.parse_config(kernel, cfg), p, "bf16")
            return cfg
        except ValueError as e:
            why.append(f"{extra}: {e}")
    raise RuntimeError(f"setup: no {which} {kernel} config validates at {p}: {why}")


def _toml(v: Any) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(x)}" for k, x in v.items()) + " }"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def write_cache(path: str, entries: list[dict[str, Any]]) -> None:
    """A cache file in the format symmtune search writes (docs/cache.md)."""
    lines = ["version = 1"]
    for e in entries:
        lines.append("[[entry]]")
        lines += [f"{k} = {_toml(v)}" for k, v in e.items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def _entry(kernel: str, shape: dict[str, int], config: dict[str, Any], fp: Any) -> dict[str, Any]:
    version = st_kernels.kernel_version() if kernel == "allreduce" else st_gemm.kernel_version(kernel)
    return {"kernel": kernel, "kernel_version": version, "backend": "cuda", "hardware": fp.id(), "world": W,
            "dtype": "bf16", "shape": shape, "config": config, "median_us": 10.0, "min_us": 9.0, "p90_us": 11.0,
            "default_median_us": 12.0, "trials": 1,
            "tuned_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0),
            "hardware_info": fp.as_dict()}


def _ran_config(kernel: str, n: int, p: Any) -> Optional[dict[str, Any]]:
    """The config symmtune ran for this call, read from its internals where
    they are as today (None where they are not)."""
    try:
        if kernel == "allreduce":
            ch = st._choices.get((dist.group.WORLD.group_name, BF16, n))
            return None if ch is None else dict(ch["config"])
        from symmtune import _torch_gemm
        for key, pipe in _torch_gemm._pipes.items():
            if key[0] == kernel and key[1] == p and key[2] == "bf16":
                return dict(pipe.choice.config)
    except Exception:  # noqa: BLE001
        return None
    return None


def _short(cfg: Optional[dict[str, Any]], kernel: str) -> Optional[str]:
    if cfg is None:
        return None
    return ",".join(f"{k}={cfg[k]}" for k in SAME_KEYS[kernel] if k in cfg)


def check_disagree(c: Check) -> None:
    d = tempfile.mkdtemp(prefix=f"serving-check-r{RANK}-")
    fp = st_hw.cuda(W)
    c.data["fingerprint"] = fp.id()
    g = gen(500)
    cases = [("A", "set1", None), ("B", "set1", "set2"), ("C", None, "set1")]
    sm90 = torch.cuda.get_device_capability()[0] == 9
    summary = []
    for ci, (case, r0, others) in enumerate(cases):
        which = r0 if RANK == 0 else others
        n = 40_000 + 1024 * ci
        pa = st_gemm.Problem(512 * W * (ci + 1), 1536 + 256 * ci, 2048, W)
        pm = st_gemm.Problem(512 * W * (ci + 1), 2048, 1024 + 256 * ci, W)
        path = os.path.join(d, f"case{case}.toml")
        want: dict[str, Optional[dict[str, Any]]] = {"allreduce": None, "agmm": None, "matmulrs": None}
        if which is None:
            write_cache(path, [])
        else:
            want = {"allreduce": AR_SET[which], "agmm": _gemm_config("agmm", which, pa),
                    "matmulrs": _gemm_config("matmulrs", which, pm)}
            write_cache(path, [_entry("allreduce", {"n": n}, dict(AR_SET[which]), fp),
                               _entry("agmm", {"m": pa.m, "n": pa.n, "k": pa.k}, want["agmm"] or {}, fp),
                               _entry("matmulrs", {"m": pm.m, "n": pm.n, "k": pm.k}, want["matmulrs"] or {}, fp)])
            # The entries must be what this machine's lookup finds, or the case tests nothing.
            for kernel, shape in (("allreduce", {"n": n}), ("agmm", {"m": pa.m, "n": pa.n, "k": pa.k}),
                                  ("matmulrs", {"m": pm.m, "n": pm.n, "k": pm.k})):
                version = st_kernels.kernel_version() if kernel == "allreduce" else st_gemm.kernel_version(kernel)
                try:
                    m = st_cache.lookup(kernel, W, "bf16", shape, backend="cuda", cache=path, kernel_version=version)
                    if not m.exact or _short(m.config, kernel) != _short(want[kernel], kernel):
                        c.fail(f"setup case {case}: lookup of the {kernel} entry gives {m.config} (exact {m.exact})")
                except st_cache.NoTunedConfig as e:
                    c.fail(f"setup case {case}: this machine's lookup does not find the {kernel} entry written for "
                           f"{fp.id()}: {e}")
        records: list[str] = []
        handler = _ListHandler(records)
        logging.getLogger().addHandler(handler)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                x = torch.empty(n, dtype=BF16, device="cuda")
                for r in range(3):
                    fill(x, g)
                    ref = ref_all_reduce(x)
                    st.all_reduce(x, cache=path)
                    c.close(f"case {case}: all_reduce n={n} call {r}", x, ref)
                for r in range(3):
                    a = randn((pa.m // W, pa.k), g)
                    b = linear_weight(pa.n, pa.k, g, pa.k ** -0.5)
                    c.close(f"case {case}: agmm {pa.m}x{pa.n}x{pa.k} call {r}",
                            st.all_gather_matmul(a, b, cache=path), ref_agmm(a, b))
                for r in range(3):
                    a = randn((pm.m, pm.k), g)
                    b = linear_weight(pm.n, pm.k, g, pm.k ** -0.5)
                    c.close(f"case {case}: matmulrs {pm.m}x{pm.n}x{pm.k} call {r}",
                            st.matmul_reduce_scatter(a, b, cache=path), ref_mmrs(a, b))
                torch.cuda.synchronize()
            records += [str(w.message) for w in caught]
        finally:
            logging.getLogger().removeHandler(handler)
        keys = ("disagree", "differ", "rank 0", "rank0")
        warned = sum(1 for m in records if any(k in m.lower() for k in keys))
        ran = {"allreduce": _short(_ran_config("allreduce", n, None), "allreduce"),
               "agmm": _short(_ran_config("agmm", 0, pa), "agmm"),
               "matmulrs": _short(_ran_config("matmulrs", 0, pm), "matmulrs")}
        mine = {k: _short(v, k) for k, v in want.items()}
        every: list[Any] = [None] * W
        dist.all_gather_object(every, {"ran": ran, "cache": mine, "warned": warned}, group=CTL)
        line = [f"case {case} (rank 0 {r0 or 'empty'}, others {others or 'empty'}):"]
        for kernel in ("allreduce", "agmm", "matmulrs"):
            seen = [e["ran"][kernel] for e in every]
            if any(s is None for s in seen):
                line.append(f"{kernel} config not readable")
                continue
            if len(set(seen)) != 1:
                c.fail(f"case {case}: the ranks ran different {kernel} configs: {seen}")
            elif (every[0]["cache"][kernel] is not None and seen[0] != every[0]["cache"][kernel]
                  and (sm90 or "fused" not in every[0]["cache"][kernel])):  # elsewhere a fused tile gives way
                c.fail(f"case {case}: {kernel} ran {seen[0]}, not rank 0's tuned {every[0]['cache'][kernel]}")
            line.append(f"{kernel} agreed [{seen[0]}]")
        line.append("disagreement warnings per rank " + "/".join(str(e["warned"]) for e in every))
        summary.append(" ".join(line))
        c.data[f"case{case}"] = every
    c.detail = "all ops right on every rank, no hang; " + "; ".join(summary)


class _ListHandler(logging.Handler):
    def __init__(self, out: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        self.out.append(record.getMessage())


# -------------------------------------------------------------- 6. compile
def check_compile(c: Check) -> None:
    pg = new_group()
    gn = pg.group_name
    hid, inter, nl = 2048, 1024, 4
    g = gen(600)
    w1 = [linear_weight(inter, hid, g, hid ** -0.5) for _ in range(nl)]          # [hid, inter]
    w2 = [linear_weight(hid, inter, g, (inter * W) ** -0.5) for _ in range(nl)]  # [inter, hid]

    def model(x: torch.Tensor) -> torch.Tensor:
        for i in range(nl):
            h = torch.relu(st.all_gather_matmul(x, w1[i], gn))
            y = st.matmul_reduce_scatter(h, w2[i], gn)
            z = y * W ** -0.5
            st.all_reduce(z, gn)
            x = z
        return x

    def ref_model(x: torch.Tensor) -> torch.Tensor:
        r = x.double()
        for i in range(nl):
            h = torch.relu(ref_agmm(x, w1[i])).to(BF16)
            y = ref_mmrs(h, w2[i]).to(BF16)
            r = ref_all_reduce(y * W ** -0.5)
            x = r.to(BF16)
        return r

    torch._dynamo.reset()
    try:
        from torch._dynamo.utils import counters
        counters.clear()
    except ImportError:
        counters = None
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True, dynamic=False)
    worst = 0.0
    calls = 0

    def call(t: int, when: str) -> None:
        nonlocal worst, calls
        x = randn((t // W, hid), g)
        want = ref_model(x)
        torch.compiler.cudagraph_mark_step_begin()
        out = compiled(x)
        worst = max(worst, c.close(f"T={t} {when}", out, want, TOL_CHAIN))
        calls += 1

    def grow(j: int) -> None:
        m = 4096 * 4 ** j
        x = randn(((1 << 21) * 4 ** j,), g)
        want = ref_all_reduce(x, F32)
        st.all_reduce(x, gn)
        c.close(f"growth {j}: all_reduce {x.numel()}", x, want)
        a = randn((m // W, hid), g)
        c.close(f"growth {j}: agmm {m}", st.all_gather_matmul(a, w1[0], gn), ref_agmm(a, w1[0], F32))
        a = randn((m, inter), g)
        c.close(f"growth {j}: matmulrs {m}", st.matmul_reduce_scatter(a, w2[0], gn), ref_mmrs(a, w2[0], F32))
        torch.cuda.synchronize()

    lengths = (512, 1024) if ARGS.quick else (512, 1024, 2048)
    seen: list[int] = []
    t0 = time.time()
    for j, t in enumerate(lengths):
        for r in range(3):  # cudagraph trees: a warm-up run, the recording, then replays
            call(t, f"call {r}")
        seen.append(t)
        grow(j)  # a large eager call between compiles: every workspace grows
        for s in seen:
            for r in range(2):
                call(s, f"after growth {j}, call {r}")
    c.data["compile_and_calls_s"] = round(time.time() - t0, 1)
    skips = 0
    if counters is not None:
        flat = {f"{k}.{n}": v for k, cc in counters.items() for n, v in cc.items()}
        c.data["counters"] = {k: v for k, v in flat.items() if "graph" in k or "skip" in k or "recompil" in k}
        skips = sum(v for k, v in flat.items() if "cudagraph_skips" in k)
        if skips:
            c.fail(f"inductor skipped CUDA graphs {skips} times: {c.data['counters']}")
    c.detail = (f"4-layer TP model at T={','.join(map(str, lengths))}, {calls} calls with growth of every workspace "
                f"between lengths; worst rel err {worst:.2e}; cudagraph skips {skips}")


# --------------------------------------------------------------- 7. memory
def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Optional[int]]:
    out: dict[str, Optional[int]] = {k: after[k] - before[k] for k in ("device_used", "torch_reserved")}
    for k in ("symmetric_bytes", "retired_bytes"):
        a, b = (after["st"] or {}).get(k), (before["st"] or {}).get(k)
        out[k] = None if a is None or b is None else a - b
    return out


def check_memory(c: Check) -> None:
    stats = st_stats()
    if stats is None:
        c.fail("symmtune.torch has no memory_stats()")
    else:
        for k in ("symmetric_bytes", "retired_bytes", "runners", "retired_runners"):
            if k not in stats or stats[k] < 0:
                c.fail(f"st.memory_stats() has no non-negative int {k}: {stats}")
        if stats.get("retired_bytes", 0) > stats.get("symmetric_bytes", 0):
            c.fail(f"retired_bytes over symmetric_bytes: {stats}")
    rows: list[tuple[str, dict[str, Optional[int]]]] = []
    if "serving_after" in MEM:
        b = MEM["serving_before"]
        for label, key in (("symmtune: serving scenario, graphs alive", "serving_after"),
                           ("symmtune: serving scenario, graphs freed", "serving_freed")):
            d = _delta(b, MEM[key])
            s = MEM[key]["st"] or {}
            d["symmetric_bytes"], d["retired_bytes"] = s.get("symmetric_bytes"), s.get("retired_bytes")
            rows.append((label, d))
    # The serving scenario's all-reduce sizes, in fresh groups.
    sizes = [bsz * H for bsz in serving_bs()] + [ar_prefill_numel(t) for t in serving_tokens()]
    g = gen(700)
    xs = [randn((n,), g) for n in sizes]
    pg = new_group()
    torch.cuda.synchronize()
    before = mem_snapshot()
    for x in xs:
        st.all_reduce(x, pg)
    rows.append((f"symmtune: {len(sizes)} all-reduce sizes, fresh group", _delta(before, mem_snapshot())))
    before = mem_snapshot()
    pgn = new_group()
    for x in xs:
        dist.all_reduce(x, group=pgn)
    rows.append(("NCCL: the same sizes, new communicator", _delta(before, mem_snapshot())))
    before = mem_snapshot()
    label = "torch symm_mem: largest message + two_shot_all_reduce_"
    try:  # a peer's failure is noted, not symmtune's
        buf = symm_mem.empty(max(sizes), dtype=BF16, device="cuda")
        symm_mem.rendezvous(buf, dist.group.WORLD.group_name)
        buf.copy_(xs[-1])
        torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", dist.group.WORLD.group_name)
        rows.append((label, _delta(before, mem_snapshot())))
        del buf
    except Exception as e:  # noqa: BLE001
        print(f"[rank {RANK}] memory: torch symm_mem row: {type(e).__name__}: {str(e)[:200]}", flush=True)
        cols = ("device_used", "torch_reserved", "symmetric_bytes", "retired_bytes")
        rows.append((label + " (failed)", {k: None for k in cols}))
    del xs
    every: list[Any] = [None] * W
    dist.all_gather_object(every, rows, group=CTL)
    cols = ("device_used", "torch_reserved", "symmetric_bytes", "retired_bytes")
    table = []
    for i, (label, _) in enumerate(rows):
        vals = {}
        for k in cols:
            vs = [e[i][1][k] for e in every]
            vals[k] = None if any(v is None for v in vs) else max(vs)
        table.append((label, vals))
    log(f"{'memory (MiB, max over ranks)':<58}| device used + | torch reserved + | st symmetric | st retired")
    for label, vals in table:
        log(f"{label:<58}| {mib(vals['device_used']):>13} | {mib(vals['torch_reserved']):>16} | "
            f"{mib(vals['symmetric_bytes']):>12} | {mib(vals['retired_bytes']):>10}")
    c.data["table"] = [{"what": label, **vals} for label, vals in table]
    c.data["memory_stats_now"] = stats
    after = MEM.get("serving_after", {}).get("st")
    c.detail = (f"st.memory_stats() after the serving scenario {after}, now {stats}; table above ({len(sizes)} "
                f"all-reduce sizes, largest {mib(2 * max(sizes))} MiB)")


# --------------------------------------------------------------- 8. timing
def _time_graph(graph: torch.cuda.CUDAGraph, reps: int = 20) -> float:
    return agree_max(time_replays(graph, reps))


def check_timing(c: Check) -> None:
    layers, inner = ARGS.layers, 1024
    gname = dist.group.WORLD.group_name
    g = gen(800)
    w1 = randn((H, inner), g, H ** -0.5)
    w2 = randn((inner, H), g, (inner * W) ** -0.5)
    decode: dict[str, dict[str, float]] = {}
    for bsz in (1, 16):
        n = bsz * H
        x0 = randn((bsz, H), g)
        sbuf = symm_mem.empty(n, dtype=BF16, device="cuda")
        symm_mem.rendezvous(sbuf, gname)
        stbuf = st.empty(n, BF16)
        plain = torch.empty(bsz, H, dtype=BF16, device="cuda")

        def step(kind: str) -> torch.Tensor:
            x = x0
            for _ in range(layers):
                h = x @ w1
                if kind == "symm_mem_two_shot":
                    y = sbuf.view(bsz, H)
                    torch.mm(h, w2, out=y)
                    torch.ops.symm_mem.two_shot_all_reduce_(sbuf, "sum", gname)
                elif kind == "symmtune_inplace":
                    y = stbuf.view(bsz, H)
                    torch.mm(h, w2, out=y)
                    st.all_reduce(stbuf)
                else:
                    y = torch.mm(h, w2, out=plain)
                    if kind == "nccl":
                        dist.all_reduce(y)
                    elif kind == "symmtune_plain":
                        st.all_reduce(y)
                x = y
            return x

        times: dict[str, float] = {}
        for kind in ("none", "symmtune_inplace", "symmtune_plain", "nccl", "symm_mem_two_shot"):
            try:
                graph, _ = warm_and_capture(lambda: step(kind))
                times[kind] = _time_graph(graph)
                del graph
            except Exception as e:  # noqa: BLE001 - one peer's failure leaves the others' timings
                c.fail(f"decode B={bsz} {kind}: {type(e).__name__}: {str(e)[:300]}")
        row = {}
        for kind, t in times.items():
            row[kind] = t
            if kind != "none" and "none" in times:
                row[f"{kind}:per_ar"] = (t - times["none"]) / layers
        decode[f"B={bsz}"] = row
    host: dict[str, float] = {}
    x4k = randn((2048,), g)
    e4k = st.empty(2048, BF16)
    e4k.copy_(x4k)
    host["st.all_reduce 4KiB plain"] = host_time(lambda: st.all_reduce(x4k))
    host["st.all_reduce 4KiB st.empty"] = host_time(lambda: st.all_reduce(e4k))
    host["dist.all_reduce 4KiB"] = host_time(lambda: dist.all_reduce(x4k))
    m, n, k = 4096, 1792, 4096
    a_shard, a, mm_a = randn((m // W, k), g), randn((m, k), g), randn((m, k), g)
    b = linear_weight(n, k, g, k ** -0.5)
    host["st.all_gather_matmul 4096x1792x4096"] = host_time(lambda: st.all_gather_matmul(a_shard, b), iters=30)
    host["st.matmul_reduce_scatter 4096x1792x4096"] = host_time(lambda: st.matmul_reduce_scatter(a, b), iters=30)
    host["torch.mm 4096x1792x4096"] = host_time(lambda: torch.mm(mm_a, b), iters=30)
    kinds = ("symmtune_inplace", "symmtune_plain", "nccl", "symm_mem_two_shot")
    log(f"decode step, {layers} layers, CUDA graph (us, max over ranks) | step none | "
        + " | ".join(f"{kd} per AR" for kd in kinds))
    for key, row in decode.items():
        cells = [f"{row[f'{kd}:per_ar']:.2f}" if f"{kd}:per_ar" in row else "-" for kd in kinds]
        log(f"{key:<60} | {row.get('none', float('nan')):9.1f} | " + " | ".join(cells))
    log("host time per eager call (us, median, max over ranks)")
    for name, v in host.items():
        log(f"  {name:<45} {v:8.1f}")
    c.data["decode_us"] = decode
    c.data["host_us"] = host
    b1 = decode.get("B=1", {})
    per_ar = [f"{kd} {b1[f'{kd}:per_ar']:.2f}" for kd in kinds if f"{kd}:per_ar" in b1]
    c.detail = "per-AR us at B=1: " + ", ".join(per_ar)


# ----------------------------------------------------------------- driver
# Each check's watchdog budget in seconds (times --budget-scale): past it
# the check is reported as a hang and the process ends.
BUDGETS = {"serving": 240, "layers": 150, "retired": 120, "capture_error": 90, "disagree": 150, "compile": 300,
           "memory": 90, "timing": 120}
CHECKS: dict[str, Callable[[Check], None]] = {
    "serving": check_serving, "layers": check_layers, "retired": check_retired,
    "capture_error": check_capture_error, "disagree": check_disagree, "compile": check_compile,
    "memory": check_memory, "timing": check_timing,
}


def summary_and_out() -> int:
    npass = sum(1 for r in RESULTS if r["pass"])
    nfail = len(RESULTS) - npass
    if RANK == 0:
        if ARGS.out:
            with open(ARGS.out, "w") as f:
                json.dump({"world": W, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                           "args": vars(ARGS), "checks": RESULTS}, f, indent=1, default=str)
        print(f"{npass} passed, {nfail} failed", flush=True)
    return nfail


class Watchdog:
    """Ends the process, with a report, when a check outlives its budget."""

    def __init__(self) -> None:
        self.timer: Optional[threading.Timer] = None

    def arm(self, name: str, seconds: float) -> None:
        self.cancel()
        self.timer = threading.Timer(seconds, self._fire, args=(name, seconds))
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _fire(self, name: str, seconds: float) -> None:
        print(f"[rank {RANK}] watchdog: check {name} still running after {seconds:.0f} s; every thread's stack:",
              flush=True)
        try:
            faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
        except Exception:  # noqa: BLE001
            pass
        detail = f"hang: no end after {seconds:.0f} s (a collective or a kernel never finished; stacks above)"
        RESULTS.append({"name": name, "pass": False, "detail": detail})
        if RANK == 0:
            print(f"CHECK {name}: FAIL {detail}", flush=True)
            for other in CHECKS:
                if other not in {r["name"] for r in RESULTS} and other in selected():
                    RESULTS.append({"name": other, "pass": False, "detail": f"not run: {name} hung"})
                    print(f"CHECK {other}: FAIL not run: {name} hung", flush=True)
        else:
            time.sleep(30)  # rank 0's own watchdog reports first: torchrun ends every rank once one exits
        summary_and_out()
        sys.stdout.flush()
        os._exit(3)


def selected() -> list[str]:
    if not ARGS.only:
        return list(CHECKS)
    return [n for n in CHECKS if n in ARGS.only.split(",")]


def run_checks() -> int:
    wd = Watchdog()
    lost = ""
    for name in selected():
        if lost:
            RESULTS.append({"name": name, "pass": False, "detail": f"skipped: {lost}"})
            log(f"CHECK {name}: FAIL skipped: {lost}")
            continue
        c = Check(name)
        wd.arm(name, BUDGETS[name] * ARGS.budget_scale)
        t0 = time.time()
        try:
            CHECKS[name](c)
        except Exception as e:  # noqa: BLE001 - a failing check must not stop the later ones
            c.fail(f"{type(e).__name__}: {str(e)[:400]}")
            traceback.print_exc(file=sys.stdout)
        ok_cuda = ""
        try:
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a sticky CUDA error: nothing after it can run
            ok_cuda = f"CUDA error on rank {RANK} after check {name}: {type(e).__name__}: {str(e)[:200]}"
            c.fail(ok_cuda)
        mine = {"fails": c.fails[:4], "nfails": len(c.fails), "lost": ok_cuda, "detail": c.detail, "data": c.data}
        every: list[Any] = [None] * W
        try:
            dist.all_gather_object(every, mine, group=CTL)
        except Exception as e:  # noqa: BLE001 - a rank died: report what this one knows and stop
            every = [mine]
            lost = f"the control group failed after {name}: {type(e).__name__}: {str(e)[:200]}"
        wd.cancel()
        passed = all(e["nfails"] == 0 for e in every)
        bad = [(r, e) for r, e in enumerate(every) if e["nfails"]]
        if passed:
            detail = every[0]["detail"] or "ok"
        else:
            r, e = bad[0]
            detail = (f"{sum(x['nfails'] for _, x in bad)} failures on ranks {','.join(str(q) for q, _ in bad)}; "
                      f"rank {r}: " + " | ".join(e["fails"][:2]))
        detail += f" [{time.time() - t0:.0f} s]"
        RESULTS.append({"name": name, "pass": passed, "detail": detail, "seconds": round(time.time() - t0, 1),
                        "per_rank": [{k: v for k, v in e.items() if k != "data"} for e in every],
                        "data": every[0]["data"]})
        log(f"CHECK {name}: {'PASS' if passed else 'FAIL'} {detail}")
        for e in every:
            if e["lost"]:
                lost = e["lost"]
    return summary_and_out()


def main() -> None:
    global ARGS, RANK, W, CTL, TIMEOUT, SAME
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a short run (for compute-sanitizer)")
    p.add_argument("--out", default="", help="write every result as JSON to this file (rank 0)")
    p.add_argument("--only", default="", help="comma-separated checks: " + ",".join(CHECKS))
    p.add_argument("--orders", choices=("rotations", "all"), default="rotations",
                   help="layers: the rotations of one warm-up order and its reverse, or all 120 permutations")
    p.add_argument("--layers", type=int, default=0, help="decode layers (default 80; --quick 8)")
    p.add_argument("--seed", type=int, default=43)
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiplies every check's watchdog budget")
    p.add_argument("--timeout", type=float, default=600.0, help="torch.distributed's timeout, seconds")
    ARGS = p.parse_args()
    ARGS.layers = ARGS.layers or (8 if ARGS.quick else 80)
    unknown = [n for n in ARGS.only.split(",") if n and n not in CHECKS]
    if unknown:
        p.error(f"unknown checks {unknown}; the checks: {','.join(CHECKS)}")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    TIMEOUT = datetime.timedelta(seconds=ARGS.timeout * ARGS.budget_scale)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local), timeout=TIMEOUT)
    RANK, W = dist.get_rank(), dist.get_world_size()
    CTL = dist.new_group(backend="gloo", timeout=TIMEOUT)
    SAME = torch.Generator(device="cuda").manual_seed(ARGS.seed)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 references in fp32
    warnings.filterwarnings("ignore", message=r"symmtune: no tuned")
    log(f"# serving_check: {torch.cuda.get_device_name()} x{W}, torch {torch.__version__}, "
        f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, checks {','.join(selected())}"
        f"{' (quick)' if ARGS.quick else ''}, SYMMTUNE_AGREE_TIMEOUT={os.environ.get('SYMMTUNE_AGREE_TIMEOUT')}")
    nfail = run_checks()
    try:
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        pass
    sys.stdout.flush()
    os._exit(1 if nfail else 0)  # no teardown of symmtune's or torch's state in a process that may have faulted


if __name__ == "__main__":
    main()

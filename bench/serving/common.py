"""What every check of bench/serving_check.py shares: the run's state (its
arguments, this rank, the world size, the control group, the results),
the dtypes and tolerances, each check's watchdog budget, the helpers
(inputs, float64 references, fresh groups, memory snapshots, agreement over
the control group), Check (a check's failures and data on this rank),
Graphed (a call a serving program captures and replays) and the calls the
checks capture (all-reduce, agmm / matmulrs, the FP8 pairs).

serving_check.main() sets the state here before any check runs, as
common.NAME: the other modules read it as common.RANK, common.W, ... and
never import it by name (a from-import would copy the value of import
time: rank 0 of a world of 1). serving_check.py sets the environment
(no multicast, the agreement timeout) before this module imports torch.
"""
from __future__ import annotations

import argparse
import datetime
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import symmtune.torch as st

BF16, F32, F64 = torch.bfloat16, torch.float32, torch.float64
FP8 = torch.float8_e4m3fn
TOL, TOL_CHAIN = 1e-2, 2e-2

# The run's state: serving_check.main() sets it; the other modules read it
# as common.NAME (a from-import would keep these first values).
ARGS: argparse.Namespace = argparse.Namespace()
RANK, W = 0, 1
CTL: Any = None  # a gloo group: the checks' verdicts travel there, whatever state the GPUs are in
TIMEOUT = datetime.timedelta(seconds=600)
RESULTS: list[dict[str, Any]] = []
MEM: dict[str, Any] = {}
SAME: Optional[torch.Generator] = None  # draws the same values on every rank (called in the same order)


# Each check's watchdog budget in seconds (times --budget-scale): past it
# the check is reported as a hang and the process ends.
BUDGETS = {"serving": 240, "layers": 150, "retired": 120, "capture_error": 90, "disagree": 150, "compile": 300,
           "memory": 90, "timing": 120}


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

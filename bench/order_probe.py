"""Issue 57's probe: why the tuner and a torch program order matmulrs configs
differently (1 x H200, world 1, bf16, 8192 x 3584 x 8192;
bench/results/2026-12-02-h200-search-order-w1.md). It times a few fused
configs (A = 128x256:s4:c2:g8:cl2, the tuner's best, B = 128x128:s6:c2:g8:pp,
the program's best; push=gemm, reduce=epilogue, graph=1) under a ladder of
conditions that walks from the program's method (bench/torch_paired.py) to the
tuner's trial (kernels/gemm/gpu/check_cuda.go's Bench, Team.Time), one
difference per step, so that the step where B/A flips names the cause; and a
few side steps, each one change from the program's method (clock state, L2
flush, a torch CUDA graph, events around several calls, the tuner's --warm).

    PYTHONPATH=python python bench/order_probe.py --out DIR [--configs 2] [--passes 2] [--rounds 100]

(or under torchrun --nproc-per-node 1; a plain python run sets up a world of
one itself). Writes DIR/order-probe.json (every step's per-round times, NVML
samples summarised) and DIR/order-probe.md (the table), and prints both the
table and nvidia-smi's clocks and power before and after. Each step is
interleaved rounds (or, for the tuner's method, alternating blocks) of every
config, so a ratio to A compares calls that met the same clocks: the table
gives B/A (and C/A, D/A) as the median over rounds with its quartiles, and
the share of rounds where the config beat A, beside each step's SM clock and
power (pynvml, sampled every 10 ms while it ran).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import traceback
from typing import Any

import torch

# torch_gemm's helpers read torchrun's variables: a plain run is a world of one.
for _k, _v in (("LOCAL_RANK", "0"), ("RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
               ("MASTER_PORT", str(29500 + os.getpid() % 1000))):
    os.environ.setdefault(_k, _v)

import torch.distributed as dist  # noqa: E402

from peer_method import bench_paired, warm_and_capture  # noqa: E402
from symmtune import _native, _torch_gemm, gemm  # noqa: E402
from torch_gemm import inputs, join_group, ours, reset  # noqa: E402

M, N, K = 8192, 3584, 8192
KERNEL = gemm.MATMULRS
# What the table's configs share (bench/results/2026-12-02-h200-search-order-w1/table-matmulrs-*.md).
COMMON = {"algo": 0, "batch": 0, "chunks": 1, "fast_accum": 1, "graph": 1, "push": "gemm", "reduce": "epilogue",
          "reduce_blocks": 132, "sm_reserve": 0, "streams": 1}
CONFIGS = [("A", "fused:128x256:s4:c2:g8:cl2"), ("B", "fused:128x128:s6:c2:g8:pp"),
           ("C", "fused:128x128:s5:c2:g8:pp"), ("D", "fused:256x128:s4:c2:g8")]
# The tuner's bench fill seed and B's generator rank (check_cuda.go: fill(0x5eed), tensorB).
FILL_SEED, TENSOR_B = 0x5EED, 0x10000

# ---------------------------------------------------------------- the ladder
# Each step: (id, what it changes, knobs). Ladder steps L* are cumulative;
# side steps X* are one change from L0 (X5: from L7).
#   peers: calls interleaved beside the configs: "mm+torch" (torch_paired:
#     cuBLAS mm and torch's fused symm_mem op), "mm", "" (none)
#   out: "fresh" (symmtune.torch allocates each call's output) or "fixed"
#     (one output for every config, as the plugin's harness has)
#   data: "randn" (torch_gemm.inputs: A ~ N(0,1), B ~ N(0,1/K)), "uniform"
#     (both U[-1,1)), "fill" (the plugin's fill kernel's values, bit for bit)
#   tick: a one-element kernel before each call (Team.Time's barrier kernel)
#   mode: "rounds" (one call of each name per round, order rotated) or
#     "blocks" (per config 3 warm-up + 30 timed calls back to back, each
#     behind the tick: Team.Time; configs alternate by block)
#   idle: host sleep (s) before each block (the trial's pause for prepare
#     and verify); warm: s of the same config back to back before each block
#     (search --warm)
#   pre: before the step: "cold" (idle --cold-s) or "hot" (--hot-s of mm)
#   flush: an L2 flush (a 256 MiB memset) before each call, outside the events
#   per_event: calls between one pair of events (their mean is the time)
#   graph: each config's call replayed from a torch CUDA graph
PROGRAM: dict[str, Any] = {"peers": "mm+torch", "out": "fresh", "data": "randn", "tick": False, "mode": "rounds",
                           "idle": 0.0, "warm": 0.0, "pre": "", "flush": False, "per_event": 1, "graph": False}
LADDER: list[tuple[str, str, dict[str, Any]]] = [
    ("L0", "program: --together rounds beside mm and torch's fused op", {}),
    ("L1", "- torch's fused op (beside mm only)", {"peers": "mm"}),
    ("L2", "- mm (the configs alone, interleaved)", {"peers": ""}),
    ("L3", "+ one fixed output (the harness's)", {"out": "fixed"}),
    ("L4", "+ inputs U[-1,1) (B not / sqrt(K))", {"data": "uniform"}),
    ("L5", "+ inputs of the fill kernel, bit for bit", {"data": "fill"}),
    ("L6", "+ a tiny kernel before each call (the trial's barrier)", {"tick": True}),
    ("L7", "+ blocks: 3 warm-up + 30 back to back per config (Team.Time)", {"mode": "blocks"}),
    ("L8", "+ host idle before each block (a trial after its verify)", {"idle": -1.0}),
]
SIDE: list[tuple[str, str, dict[str, Any]]] = [
    ("X1", "L0 + L2 flush before each call", {"flush": True}),
    ("X2", "L0 after sustained mm (hot clock)", {"pre": "hot"}),
    ("X3", "L0 after idle (cold clock)", {"pre": "cold"}),
    ("X4", "L0, events around 10 back-to-back calls", {"per_event": 10}),
    ("X5", "L0, each config replayed from a torch CUDA graph", {"graph": True}),
    ("X6", "L7 + the config back to back before each block (--warm)", {"__base": "L7", "warm": -1.0}),
    ("X7", "L7 with torch_gemm's randn inputs", {"__base": "L7", "data": "randn"}),
]


def ladder_knobs(args) -> list[tuple[str, str, dict[str, Any]]]:
    """Every step's full knobs, the ladder's cumulative."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    cur, by = dict(PROGRAM), {}
    for sid, what, ch in LADDER:
        cur.update(ch)
        k = dict(cur)
        by[sid] = k
        out.append((sid, what, k))
    for sid, what, ch in SIDE:
        ch = dict(ch)
        k = dict(by.get(ch.pop("__base", "L0"), PROGRAM))
        k.update(ch)
        out.append((sid, what, k))
    for _, _, k in out:
        if k["idle"] < 0:
            k["idle"] = args.idle_s
        if k["warm"] < 0:
            k["warm"] = args.warm_s
    return out


# --------------------------------------------------------------------- NVML
REASONS = {0x1: "idle", 0x2: "app-clocks", 0x4: "sw-power", 0x8: "hw-slowdown", 0x10: "sync-boost",
           0x20: "sw-thermal", 0x40: "hw-thermal", 0x80: "power-brake", 0x100: "display"}


class Nvml:
    """pynvml's clocks, power, temperatures and clock-event reasons, read now
    (snap) or every 10 ms in a thread (start/stop), each sample with its host
    time; nothing (and a note) without pynvml."""

    def __init__(self) -> None:
        self.nv: Any = None
        self.h: Any = None
        self.samples: list[dict] = []
        self.note = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            import pynvml
            pynvml.nvmlInit()
            idx = 0
            try:
                idx = torch.cuda._get_nvml_device_index(torch.cuda.current_device())
            except Exception:
                pass
            self.nv, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(idx)
        except Exception as e:
            self.note = f"no NVML readings: {e!r}"

    def snap(self) -> dict:
        if self.nv is None:
            return {}
        nv, h, s = self.nv, self.h, {"t": time.monotonic()}
        for name, fn in (("sm_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
                         ("mem_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
                         ("watts", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),
                         ("temp_c", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))):
            try:
                s[name] = fn()
            except Exception:
                pass
        for getter in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            try:
                s["reasons"] = getattr(nv, getter)(h)
                break
            except Exception:
                continue
        return s

    def static(self) -> dict:
        if self.nv is None:
            return {"note": self.note}
        nv, h, out = self.nv, self.h, {}
        for name, fn in (("max_sm_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
                         ("power_limit_w", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0)):
            try:
                out[name] = fn()
            except Exception:
                pass
        return out

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            s = self.snap()
            if s:
                self.samples.append(s)

    def start(self) -> None:
        if self.nv is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._stop.clear()

    def summary(self, t0: float, t1: float) -> dict:
        """Medians of the samples taken between host times t0 and t1, and
        every clock-event reason seen."""
        got = [s for s in self.samples if t0 <= s["t"] <= t1]
        out: dict = {"n": len(got)}
        for name in ("sm_mhz", "mem_mhz", "watts", "temp_c"):
            xs = [s[name] for s in got if name in s]
            if xs:
                out[name] = statistics.median(xs)
        bits = 0
        for s in got:
            bits |= s.get("reasons", 0)
        out["reasons"] = ",".join(v for b, v in REASONS.items() if bits & b) or "-"
        return out


def smi(label: str) -> None:
    q = ("clocks.sm,clocks.mem,clocks.max.sm,power.draw,power.limit,temperature.gpu,temperature.memory,"
         "clocks_event_reasons.active")
    for cmd in (["nvidia-smi", f"--query-gpu={q}", "--format=csv"],
                ["nvidia-smi", "-q", "-d", "CLOCK,POWER,PERFORMANCE"]):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
            if r.returncode == 0:
                print(f"nvidia-smi {label}:\n{r.stdout.strip()}", flush=True)
                return
        except Exception as e:
            print(f"nvidia-smi {label}: {e!r}", flush=True)
            return


# ------------------------------------------------------------------- inputs
_M64 = (1 << 64) - 1


def _s64(x: int) -> int:
    """An unsigned 64-bit constant as the int64 with its bits."""
    x &= _M64
    return x - (1 << 64) if x >> 63 else x


def _srl(x: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 bits (torch's >> is arithmetic)."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def fill_uniform(rows: int, cols: int, seed: int, rank: int, chunk: int = 512) -> torch.Tensor:
    """gemm_util.cu's fill: element (i, j) of rank's rows x cols tensor is
    uniform(seed, rank, i*cols + j) rounded to bf16 (through float, as
    to_elem does); int64 arithmetic wraps as the kernel's u64 does."""
    out = torch.empty(rows, cols, dtype=torch.bfloat16, device="cuda")
    c0 = _s64(seed ^ ((rank + 1) * 0x9E3779B97F4A7C15))
    for r0 in range(0, rows, chunk):
        r1 = min(rows, r0 + chunk)
        idx = torch.arange(r0 * cols, r1 * cols, dtype=torch.int64, device="cuda")
        x = (idx * _s64(0xD1B54A32D192ED03)) ^ c0
        x = x + _s64(0x9E3779B97F4A7C15)
        x = (x ^ _srl(x, 30)) * _s64(0xBF58476D1CE4E5B9)
        x = (x ^ _srl(x, 27)) * _s64(0x94D049BB133111EB)
        x = x ^ _srl(x, 31)
        u = _srl(x, 11).double() * (2.0 / 9007199254740992.0) - 1.0
        out[r0:r1] = u.float().view(r1 - r0, cols).to(torch.bfloat16)
    return out


def operands(data: str) -> tuple[torch.Tensor, torch.Tensor]:
    """A [M, K] and B as the program passes it: [K, N], stored [N, K]."""
    if data == "randn":
        a, b = inputs(KERNEL, M, N, K, 1, 0, 5)
        return a, b.t().contiguous().t()
    if data == "uniform":
        g = torch.Generator(device="cuda").manual_seed(5)
        a = torch.rand(M, K, device="cuda", generator=g, dtype=torch.float32).mul_(2).sub_(1).to(torch.bfloat16)
        b = torch.rand(K, N, device="cuda", generator=g, dtype=torch.float32).mul_(2).sub_(1).to(torch.bfloat16)
        return a, b.t().contiguous().t()
    # fill: A by fill (rank 0), B [K, N] by fill_t under tensorB, stored [N, K].
    a = fill_uniform(M, K, FILL_SEED, 0)
    b = fill_uniform(K, N, FILL_SEED, TENSOR_B)
    return a, b.t().contiguous().t()


# -------------------------------------------------------------------- calls
def forced_call(cfg: dict, a: torch.Tensor, bt: torch.Tensor, out: torch.Tensor | None):
    """One call of cfg: symmtune.torch's (a fresh output each call) or, with
    out, the same runner enqueued into out (_Gemm's own enqueue, as
    matmul_reduce_scatter makes it, minus the allocation)."""
    fn = ours(KERNEL)

    def fresh():
        _torch_gemm.forced[KERNEL] = cfg
        return fn(a, bt)

    if out is None:
        return fresh
    fresh()  # opens the runner
    bop = None

    def fixed():
        nonlocal bop
        _torch_gemm.forced[KERNEL] = cfg
        pipe = _torch_gemm._pipeline(KERNEL, M, N, K, a.dtype, None, None)
        if bop is None:
            bop = pipe.b_operand(bt)
        pipe._enqueue(_native.gemm_enqueue, M, a.data_ptr(), bop.data_ptr(), out.data_ptr(), 0)
        return out
    return fixed


def check(cfgs: dict, a: torch.Tensor, bt: torch.Tensor) -> None:
    ref = (a.float() @ bt.float())
    for name, cfg in cfgs.items():
        got = forced_call(cfg, a, bt, None)().float()
        err = ((got - ref).norm() / ref.norm()).item()
        print(f"check {name}: rel err {err:.2e}{'  <-- WRONG' if not err < 2e-2 else ''}", flush=True)
    del ref


def heat(mm, seconds: float) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        for _ in range(10):
            mm()
        torch.cuda.synchronize()


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def quart(xs: list[float]) -> tuple[float, float]:
    if len(xs) < 2:
        return (med(xs), med(xs))
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


# ------------------------------------------------------------------ methods
def time_rounds(fns: dict, rounds: int, pre, per_event: int, warmup: int = 5) -> list[dict]:
    """bench_paired's rounds with per-round times kept: each round one call
    (per_event calls between the events) of every fn, order rotated; pre()
    before each, outside the events."""
    names = list(fns)
    for _ in range(warmup):
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    recs = []
    for i in range(rounds):
        order = names[i % len(names):] + names[:i % len(names)]
        evs = {}
        for name in order:
            if pre is not None:
                pre()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(per_event):
                fns[name]()
            e.record()
            evs[name] = (s, e)
        recs.append(evs)
    torch.cuda.synchronize()
    return [{n: s.elapsed_time(e) * 1000 / per_event for n, (s, e) in r.items()} for r in recs]


def time_blocks(fns: dict, repeats: int, tick, idle: float, warm: float, flush, nv: Nvml,
                warmup: int = 3, iters: int = 30) -> tuple[list[dict], dict]:
    """Team.Time per config (barrier timing): warmup calls, then iters
    timed calls back to back, each behind tick(); the block's median. The
    configs alternate block by block (order rotated per repeat); idle:
    host sleep before each block; warm: seconds of the config back to back
    before it. Also each config's NVML summary over its blocks."""
    names = list(fns)
    recs: list[dict] = []
    windows: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for r in range(repeats):
        order = names[r % len(names):] + names[:r % len(names)]
        rec = {}
        for name in order:
            f = fns[name]
            torch.cuda.synchronize()
            if idle:
                time.sleep(idle)
            t0 = time.monotonic()
            while time.monotonic() - t0 < warm:
                for _ in range(5):
                    f()
                torch.cuda.synchronize()
            t0 = time.monotonic()
            for _ in range(warmup):
                tick()
                f()
            evs = []
            for _ in range(iters):
                tick()
                if flush is not None:
                    flush()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                f()
                e.record()
                evs.append((s, e))
            torch.cuda.synchronize()
            windows[name].append((t0, time.monotonic()))
            rec[name] = med([s.elapsed_time(e) * 1000 for s, e in evs])
        recs.append(rec)
    per = {}
    for n, ws in windows.items():
        sums = [nv.summary(a, b) for a, b in ws]
        per[n] = {k: med([s[k] for s in sums if k in s]) for k in ("sm_mhz", "watts")}
    return recs, per


def run_step(sid: str, what: str, kn: dict, cfgs: dict, args, nv: Nvml, cache: dict) -> dict:
    """One step: its operands (cached by data), the calls its knobs ask for,
    its times, and its summary row."""
    data = kn["data"]
    if data not in cache:
        cache.clear()  # one set of operands at a time (fill's are 200 MB)
        torch.cuda.empty_cache()
        cache[data] = operands(data)
    a, bt = cache[data]
    out = torch.empty(M, N, dtype=torch.bfloat16, device="cuda") if kn["out"] == "fixed" else None
    fns: dict = {}
    if "mm" in kn["peers"]:
        fns["mm"] = lambda: torch.mm(a, bt)
    if "torch" in kn["peers"]:
        g = dist.group.WORLD.group_name
        fns["torch"] = lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, bt, "sum", 0, g)
    for name, cfg in cfgs.items():
        fns[name] = forced_call(cfg, a, bt, out)
    if kn["graph"]:
        for name in cfgs:
            graph, _ = warm_and_capture(fns[name])
            fns[name] = graph.replay
    flush = None
    if kn["flush"]:
        buf = cache.setdefault("flush", torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
        flush = buf.zero_
    tick_t = torch.zeros(1, device="cuda")
    tick = (lambda: tick_t.add_(1)) if kn["tick"] else (lambda: None)
    if kn["pre"] == "hot":
        heat(lambda: torch.mm(a, bt), args.hot_s)
    elif kn["pre"] == "cold":
        torch.cuda.synchronize()
        time.sleep(args.cold_s)
    t0 = time.monotonic()
    per_cfg: dict = {}
    if kn["mode"] == "blocks":
        bfns = {n: fns[n] for n in cfgs}
        reps = min(args.repeats, 3) if kn["warm"] else args.repeats  # --warm costs warm_s per block
        recs, per_cfg = time_blocks(bfns, reps, tick, kn["idle"], kn["warm"], flush, nv)
    else:
        def pre():
            tick()
            if flush is not None:
                flush()
        recs = time_rounds(fns, args.rounds, pre if (kn["tick"] or flush is not None) else None, kn["per_event"])
    t1 = time.monotonic()
    _torch_gemm.forced.clear()
    row: dict = {"step": sid, "what": what, "knobs": kn, "n": len(recs), "seconds": round(t1 - t0, 2),
                 "us": {n: med([r[n] for r in recs]) for n in recs[0]}, "nvml": nv.summary(t0, t1),
                 "nvml_by_config": per_cfg, "ratio": {}, "times": recs}
    if "mm" in recs[0]:
        row["a_over_mm"] = med([r["A"] / r["mm"] for r in recs])
    for name in cfgs:
        if name == "A":
            continue
        rs = [r[name] / r["A"] for r in recs]
        lo, hi = quart(rs)
        row["ratio"][name] = {"median": med(rs), "q1": lo, "q3": hi, "faster_share": sum(x < 1 for x in rs) / len(rs)}
    return row


def program_as_run(cfgs: dict, args, nv: Nvml, cache: dict) -> dict:
    """P0: torch_paired.py without --together, as search-check.sh ran it on
    2026-12-02: each config in a bench_paired of its own beside mm and
    torch's fused op (30 rounds; reset between), B/A the quotient of their
    ratios to mm, which met different clocks."""
    if "randn" not in cache:
        cache.clear()
        cache["randn"] = operands("randn")
    a, bt = cache["randn"]
    g = dist.group.WORLD.group_name
    row: dict = {"step": "P0", "what": "program as run: one bench_paired per config (no --together)", "per_config": {}}
    t0 = time.monotonic()
    for name, cfg in cfgs.items():
        reset()
        _torch_gemm.forced[KERNEL] = cfg
        fns = {"mm": lambda: torch.mm(a, bt),
               "torch": lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, bt, "sum", 0, g),
               "ours": lambda: ours(KERNEL)(a, bt)}
        s0 = time.monotonic()
        us, ratio = bench_paired(fns, "mm", iters=30)
        row["per_config"][name] = {"us": us, "ratio_to_mm": ratio["ours"], "nvml": nv.summary(s0, time.monotonic())}
        _torch_gemm.forced.clear()
    reset()
    t1 = time.monotonic()
    base = row["per_config"]["A"]["ratio_to_mm"]
    row["ratio"] = {n: {"median": v["ratio_to_mm"] / base} for n, v in row["per_config"].items() if n != "A"}
    row["us"] = {n: v["us"]["ours"] for n, v in row["per_config"].items()}
    row["us"]["mm"] = med([v["us"]["mm"] for v in row["per_config"].values()])
    row["nvml"], row["seconds"] = nv.summary(t0, t1), round(t1 - t0, 2)
    row["a_over_mm"] = base
    return row


def fmt_row(p: int, row: dict, names: list[str]) -> str:
    cells = []
    for n in names[1:]:
        r = row.get("ratio", {}).get(n)
        if r is None:
            cells.append("—")
        elif "q1" in r:
            cells.append(f"{r['median']:.3f} [{r['q1']:.3f}, {r['q3']:.3f}] {100 * r['faster_share']:.0f}%")
        else:
            cells.append(f"{r['median']:.3f}")
    us = row.get("us", {})
    nvs = row.get("nvml", {})
    byc = row.get("nvml_by_config") or {}
    clk = f"{nvs.get('sm_mhz', float('nan')):.0f}"
    if byc:
        clk += " (" + "/".join(f"{byc[n].get('sm_mhz', float('nan')):.0f}" for n in names if n in byc) + ")"
    w = f"{nvs.get('watts', float('nan')):.0f}"
    if byc:
        w += " (" + "/".join(f"{byc[n].get('watts', float('nan')):.0f}" for n in names if n in byc) + ")"
    a_b = "/".join(f"{us.get(n, float('nan')):.1f}" for n in names[:2])
    return (f"| {p} | {row['step']} | {row['what']} | " + " | ".join(cells) + f" | {a_b} | "
            f"{us.get('mm', float('nan')):.1f} | {row.get('a_over_mm', float('nan')):.3f} | {clk} | {w} | "
            f"{nvs.get('temp_c', float('nan')):.0f} | {nvs.get('reasons', '-')} |")


def flips(rows: list[dict], names: list[str]) -> list[str]:
    """Per pass and config: the ladder steps (L0..L8, in order) where X/A
    crosses 1 from the step before: the differences that turn the order."""
    out = []
    for p in sorted({r["pass"] for r in rows}):
        lad = [r for r in rows if r["pass"] == p and r["step"].startswith("L")]
        for n in names[1:]:
            seq = [(r["step"], r["ratio"][n]["median"]) for r in lad if n in r.get("ratio", {})]
            steps = [f"{s1} ({v0:.3f} -> {v1:.3f})" for (_, v0), (s1, v1) in zip(seq, seq[1:])
                     if (v0 < 1) != (v1 < 1)]
            path = " ".join(f"{s}={v:.3f}" for s, v in seq)
            out.append(f"pass {p}, {n}/A: flips at {', '.join(steps) or 'no step'}; {path}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="", help="directory for order-probe.json and order-probe.md")
    ap.add_argument("--configs", type=int, default=4, help="how many of A, B, C, D (2: A and B only)")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=100, help="rounds of each rounds step")
    ap.add_argument("--repeats", type=int, default=6, help="blocks per config of each blocks step")
    ap.add_argument("--idle-s", type=float, default=0.2, help="L8: host idle before each block")
    ap.add_argument("--warm-s", type=float, default=1.0, help="X6: seconds of each config before its block")
    ap.add_argument("--hot-s", type=float, default=8.0, help="X2: seconds of mm back to back before the step")
    ap.add_argument("--cold-s", type=float, default=3.0, help="X3: idle seconds before the step")
    ap.add_argument("--steps", default="", help="comma-separated step ids (P0,L0..L8,X1..X7); default all")
    ap.add_argument("--budget-s", type=float, default=270.0, help="skip the steps left after this long")
    args = ap.parse_args()
    start = time.monotonic()
    rank, world, _ = join_group()
    if world != 1:
        raise SystemExit(f"order_probe.py: world 1 only (this is {world})")
    nv = Nvml()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; {nv.static()}", flush=True)
    smi("before")
    print("nvml before:", nv.snap(), flush=True)
    cfgs: dict = {}
    for name, impl in CONFIGS[:max(2, args.configs)]:
        cfg: dict[str, Any] = {**gemm.default_config(KERNEL), **COMMON, "impl": impl}
        try:
            gemm.validate(gemm.parse_config(KERNEL, cfg), gemm.Problem(M, N, K, 1), "bf16")
            cfgs[name] = cfg
        except ValueError as e:
            print(f"config {name} {impl} skipped: {e}", flush=True)
    if "A" not in cfgs or len(cfgs) < 2:
        raise SystemExit("order_probe.py: A and at least one other config must run")
    for name, cfg in cfgs.items():
        print(f"{name}: {cfg['impl']}  ({json.dumps(cfg, sort_keys=True)})", flush=True)
    steps = [("P0", "", dict(PROGRAM))] + ladder_knobs(args)
    if args.steps:
        want = set(args.steps.split(","))
        steps = [s for s in steps if s[0] in want]
    cache: dict = {}
    reset()
    check(cfgs, *operands("randn"))
    nv.start()
    rows: list[dict] = []
    names = list(cfgs)
    head = ("| pass | step | what changes | " + " | ".join(f"{n}/A median [q1, q3] {n}<A" for n in names[1:]) +
            " | A/B µs | mm µs | A/mm | SM MHz (A/B..) | W (A/B..) | °C | clock events |")
    sep = "|---" * (head.count("|") - 1) + "|"
    print("\n" + head + "\n" + sep, flush=True)
    for p in range(1, args.passes + 1):
        for sid, what, kn in steps:
            if time.monotonic() - start > args.budget_s:
                print(f"| {p} | {sid} | skipped: past --budget-s {args.budget_s:.0f} s |", flush=True)
                continue
            try:
                row = program_as_run(cfgs, args, nv, cache) if sid == "P0" else run_step(sid, what, kn, cfgs, args,
                                                                                         nv, cache)
            except Exception as e:
                _torch_gemm.forced.clear()
                print(f"| {p} | {sid} | failed: {e!r} |", flush=True)
                traceback.print_exc(file=sys.stdout)
                continue
            row["pass"] = p
            rows.append(row)
            print(fmt_row(p, row, names), flush=True)
    nv.stop()
    print("nvml after:", nv.snap(), flush=True)
    smi("after")
    table = "\n".join([head, sep] + [fmt_row(r["pass"], r, names) for r in rows])
    legend = ("B/A: config B's time over A's, median over rounds (blocks: block medians) with quartiles; "
              "B<A: share of rounds B beat A. A = " + cfgs["A"]["impl"] + ", " +
              ", ".join(f"{n} = {c['impl']}" for n, c in cfgs.items() if n != "A") +
              ". P0's ratio is the quotient of two runs' ratios to mm (different clocks). SM MHz and W: NVML "
              "medians while the step ran (blocks: per config). Tuner 2026-12-02: B/A = 619.4/606.3 = 1.022; "
              "program pass 1: 1.067/1.045 = 1.021, pass 2: 1.012/1.046 = 0.967.")
    summary = "\n".join(flips(rows, names))
    print("\n" + table + "\n\n" + legend + "\n\n" + summary, flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "order-probe.md"), "w") as f:
            f.write(table + "\n\n" + legend + "\n\n" + summary + "\n")
        with open(os.path.join(args.out, "order-probe.json"), "w") as f:
            json.dump({"configs": cfgs, "static": nv.static(), "rows": rows}, f, indent=1, default=str)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

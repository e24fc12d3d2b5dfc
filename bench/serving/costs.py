"""The checks of bench/serving_check.py that run a model or measure: compile
(torch.compile(mode="reduce-overhead") of a TP model across workspace
growth), memory (st.memory_stats() and what symmtune, NCCL and torch
symm_mem hold, a table) and timing (the graphed decode step's cost per
all-reduce and the host time of a call, not pass/fail). The run's state is
read as common.NAME (serving/common.py).
"""
from __future__ import annotations

import time
from typing import Any, Optional

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import symmtune.torch as st
from peer_method import host_time, time_replays, warm_and_capture
from serving import common
from serving.common import (BF16, F32, TOL_CHAIN, Check, agree_max, gen, linear_weight, log, mem_snapshot, mib,
                            new_group, randn, ref_agmm, ref_all_reduce, ref_mmrs, st_stats)
from serving.graphs import H, ar_prefill_numel, serving_bs, serving_tokens


# -------------------------------------------------------------- 6. compile
def check_compile(c: Check) -> None:
    pg = new_group()
    gn = pg.group_name
    hid, inter, nl = 2048, 1024, 4
    g = gen(600)
    w1 = [linear_weight(inter, hid, g, hid ** -0.5) for _ in range(nl)]          # [hid, inter]
    w2 = [linear_weight(hid, inter, g, (inter * common.W) ** -0.5) for _ in range(nl)]  # [inter, hid]

    def model(x: torch.Tensor) -> torch.Tensor:
        for i in range(nl):
            h = torch.relu(st.all_gather_matmul(x, w1[i], gn))
            y = st.matmul_reduce_scatter(h, w2[i], gn)
            z = y * common.W ** -0.5
            st.all_reduce(z, gn)
            x = z
        return x

    def ref_model(x: torch.Tensor) -> torch.Tensor:
        r = x.double()
        for i in range(nl):
            h = torch.relu(ref_agmm(x, w1[i])).to(BF16)
            y = ref_mmrs(h, w2[i]).to(BF16)
            r = ref_all_reduce(y * common.W ** -0.5)
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
        x = randn((t // common.W, hid), g)
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
        a = randn((m // common.W, hid), g)
        c.close(f"growth {j}: agmm {m}", st.all_gather_matmul(a, w1[0], gn), ref_agmm(a, w1[0], F32))
        a = randn((m, inter), g)
        c.close(f"growth {j}: matmulrs {m}", st.matmul_reduce_scatter(a, w2[0], gn), ref_mmrs(a, w2[0], F32))
        torch.cuda.synchronize()

    lengths = (512, 1024) if common.ARGS.quick else (512, 1024, 2048)
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
    if "serving_after" in common.MEM:
        b = common.MEM["serving_before"]
        for label, key in (("symmtune: serving scenario, graphs alive", "serving_after"),
                           ("symmtune: serving scenario, graphs freed", "serving_freed")):
            d = _delta(b, common.MEM[key])
            s = common.MEM[key]["st"] or {}
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
        print(f"[rank {common.RANK}] memory: torch symm_mem row: {type(e).__name__}: {str(e)[:200]}", flush=True)
        cols = ("device_used", "torch_reserved", "symmetric_bytes", "retired_bytes")
        rows.append((label + " (failed)", {k: None for k in cols}))
    del xs
    every: list[Any] = [None] * common.W
    dist.all_gather_object(every, rows, group=common.CTL)
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
    after = common.MEM.get("serving_after", {}).get("st")
    c.detail = (f"st.memory_stats() after the serving scenario {after}, now {stats}; table above ({len(sizes)} "
                f"all-reduce sizes, largest {mib(2 * max(sizes))} MiB)")


# --------------------------------------------------------------- 8. timing
def _time_graph(graph: torch.cuda.CUDAGraph, reps: int = 20) -> float:
    return agree_max(time_replays(graph, reps))


def check_timing(c: Check) -> None:
    layers, inner = common.ARGS.layers, 1024
    gname = dist.group.WORLD.group_name
    g = gen(800)
    w1 = randn((H, inner), g, H ** -0.5)
    w2 = randn((inner, H), g, (inner * common.W) ** -0.5)
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
    a_shard, a, mm_a = randn((m // common.W, k), g), randn((m, k), g), randn((m, k), g)
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

"""The checks of bench/serving_check.py that keep CUDA graphs alive while
workspaces grow: serving (decode and TP-MLP graphs for B = 1..256, prefills,
replays in a random order), layers (one warm-up per call in many orders,
each order in a fresh group) and retired (graphs replayed after every
workspace grew twice); and the serving scenario's sizes, which memory and
timing use too. The run's state is read as common.NAME (serving/common.py).
"""
from __future__ import annotations

import gc
import itertools
import random
import time
from typing import Any

import torch
import torch.distributed as dist

import symmtune.torch as st
from serving import common
from serving.common import (BF16, BUDGETS, F32, TOL_CHAIN, Check, FP8Op, Graphed, ar_item, fill, fp8_item,
                            gemm_item, gen, linear_weight, mem_snapshot, mib, new_group, randn, rank0_says,
                            ref_agmm, ref_all_reduce, ref_mmrs, st_stats)


# ------------------------------------------------------------- 1. serving
H, INNER = 8192, 256        # decode: hidden, the small matmul's width
MH, MI = 4096, 1792         # TP-MLP: hidden, intermediate per rank


def serving_bs() -> list[int]:
    return [1, 16, 256] if common.ARGS.quick else [1 << i for i in range(9)]


def serving_tokens() -> list[int]:
    return [512, 4096] if common.ARGS.quick else [512, 8192, 32768]


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
        z = y * common.W ** -0.5
        st.all_reduce(z, group)
        return y, z

    def ref() -> list[torch.Tensor]:
        h = torch.relu(ref_agmm(x, m1)).to(BF16)  # the layer's h is bf16 too
        y = ref_mmrs(h, m2)
        return [y, ref_all_reduce(y * common.W ** -0.5)]
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
        x = randn((size // common.W, MH), g)
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
    layers, bs, tokens = common.ARGS.layers, serving_bs(), serving_tokens()
    replays = 3 if common.ARGS.quick else 20
    g = gen(1)
    sched = random.Random(common.ARGS.seed)  # the same schedule on every rank
    w1 = [randn((H, INNER), g, H ** -0.5) for _ in range(4)]
    w2 = [randn((INNER, H), g, (INNER * common.W) ** -0.5) for _ in range(4)]
    m1 = linear_weight(MI, MH, g, MH ** -0.5)        # [MH, MI]
    m2 = linear_weight(MH, MI, g, (MI * common.W) ** -0.5)  # [MI, MH]
    common.MEM["serving_before"] = mem_snapshot()
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
             + [("mmrs", t) for t in tokens]
             + [("ar", 5_000_011), ("ar", 777), ("agmm", 1000 * common.W), ("mmrs", 1000 * common.W)])
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
    common.MEM["serving_after"] = mem_snapshot()
    c.detail = (f"{len(graphs)} graphs (B={bs[0]}..{bs[-1]}, {layers} layers) kept alive, {nrep} checked runs "
                f"(warm-up + replays), {len(errs)} prefills; worst rel err graphs {max(worst.values()):.2e}, "
                f"prefills {max(errs):.2e}")
    for e in graphs:
        e.drop()
    graphs.clear()
    gc.collect()
    common.MEM["serving_freed"] = mem_snapshot()


# --------------------------------------------------------------- 2. layers
LAYER_ITEMS = ("layer", "fp8_tensor", "fp8_row", "ar_3000", "ar_3M")


def layer_items(i: int, group: Any, g: torch.Generator) -> dict[str, Graphed]:
    """Order i's five captured calls in group, shapes of its own."""
    lh, li, rows = 1024, 768, 32 + 8 * i
    w1 = linear_weight(li, lh, g, lh ** -0.5)            # [lh, li]
    w2 = linear_weight(lh, li, g, (li * common.W) ** -0.5)      # [li, lh]
    x = torch.empty(rows, lh, dtype=BF16, device="cuda")

    def layer() -> tuple[torch.Tensor, torch.Tensor]:
        h = st.all_gather_matmul(x, w1, group)
        y = st.matmul_reduce_scatter(h, w2, group)
        r = y * common.W ** -0.5
        st.all_reduce(r, group)
        return y, r

    def layer_ref() -> list[torch.Tensor]:
        h = ref_agmm(x, w1).to(BF16)
        y = ref_mmrs(h, w2)
        return [y, ref_all_reduce(y * common.W ** -0.5)]
    frows = common.W * (64 + 16 * i)
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
    if common.ARGS.orders == "all":
        return list(itertools.permutations(LAYER_ITEMS))
    rev = tuple(reversed(LAYER_ITEMS))
    if common.ARGS.quick:
        return [LAYER_ITEMS, rev]
    n = len(LAYER_ITEMS)
    return [LAYER_ITEMS[j:] + LAYER_ITEMS[:j] for j in range(n)] + [rev[j:] + rev[:j] for j in range(n)]


def check_layers(c: Check) -> None:
    orders = layer_orders()
    replays = 10 if common.ARGS.quick else 100
    budget = common.ARGS.budget_scale * BUDGETS["layers"] * 0.8
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
        gemm_item("agmm", "agmm", 64 * common.W, 512, 1024, pg, g),
        gemm_item("matmulrs", "matmulrs", 64 * common.W, 512, 1024, pg, g),
        fp8_item("fp8_agmm:tensor", [FP8Op("agmm", 64 * common.W, 512, 1024, False, pg)]),
        fp8_item("fp8_matmulrs:row", [FP8Op("matmulrs", 64 * common.W, 512, 1024, True, pg)]),
    ]
    stats = {"start": st_stats()}
    for e in items:
        e.warm_up(c, g)
        torch.cuda.synchronize()
        e.capture()
        e.replay(c, g, "before growth")
    torch.cuda.synchronize()
    stats["captured"] = st_stats()
    replays = 5 if common.ARGS.quick else 20
    for rnd in range(2):
        tok = 8192 * 4 ** rnd
        # Larger eager calls of every op in this group: every workspace grows.
        x = randn((tok * 1024,), g)
        want = ref_all_reduce(x, F32)
        st.all_reduce(x, pg)
        c.close(f"growth {rnd}: all_reduce {x.numel()}", x, want)
        a = randn((tok // common.W, 4096), g)
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

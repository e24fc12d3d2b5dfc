"""bench/torch_ops.py's decode and ar_graph parts (see its doc): the
graphed decode step and per-call graphs of all-reduces, symmtune beside
NCCL and torch symm_mem, with the rows of ar_force.py's forced configs."""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import ar_force
import symmtune.torch as st
from peer_method import time_replays, warm_and_capture
from torch_common import fail, fresh, out


# AR_FORCE's configs (ar_force.py): each NAME adds the kinds NAME_staged
# (a plain tensor, as symmtune_staged) and NAME_inplace (a tensor from
# symmtune.torch.empty, as symmtune_inplace) to decode and ar_graph.
_SPECS: dict[str, dict | str] = {}
_BASE: dict[str, str] = {}
for _name, _spec in ar_force.parse().items():
    for _path in ("staged", "inplace"):
        _SPECS[f"{_name}_{_path}"] = _spec
        _BASE[f"{_name}_{_path}"] = f"symmtune_{_path}"


def forced_kinds() -> tuple[str, ...]:
    return tuple(_SPECS)


# -------------------------------------------------------------------- decode
def decode(layers: int = 80, hidden: int = 8192, inner: int = 1024) -> None:
    rank, g = dist.get_rank(), dist.group.WORLD.group_name
    gen = torch.Generator(device="cuda").manual_seed(3 + rank)
    w1 = fresh((hidden, inner), gen) * hidden ** -0.5
    w2 = fresh((inner, hidden), gen) * inner ** -0.5
    for bsz in (1, 16, 64, 256):
        n = bsz * hidden
        x0 = fresh((bsz, hidden), gen)
        sbuf = symm_mem.empty(n, dtype=torch.bfloat16, device="cuda")
        symm_mem.rendezvous(sbuf, g)
        stbuf = st.empty(n, torch.bfloat16)
        plain = torch.empty(bsz, hidden, dtype=torch.bfloat16, device="cuda")

        def step(kind: str):
            kind = _BASE.get(kind, kind)
            x = x0
            for _ in range(layers):
                h = x @ w1
                if kind in ("symm_two_shot", "symm_one_shot"):
                    y = sbuf.view(bsz, hidden)
                    torch.mm(h, w2, out=y)
                    if kind == "symm_two_shot":
                        torch.ops.symm_mem.two_shot_all_reduce_(sbuf, "sum", g)
                        x = y
                    else:
                        x = torch.ops.symm_mem.one_shot_all_reduce(sbuf, "sum", g).view(bsz, hidden)
                elif kind == "symmtune_inplace":
                    y = stbuf.view(bsz, hidden)
                    torch.mm(h, w2, out=y)
                    st.all_reduce(stbuf)
                    x = y
                else:
                    y = torch.mm(h, w2, out=plain)
                    if kind == "nccl":
                        dist.all_reduce(y)
                    elif kind == "symmtune_staged":
                        st.all_reduce(y)
                    x = y
            return x

        times = {}
        for kind in ("none", "nccl", "symm_two_shot", "symm_one_shot", "symmtune_staged", "symmtune_inplace") + forced_kinds():
            try:
                ar_force.use(_SPECS.get(kind))
                graph, _ = warm_and_capture(lambda: step(kind))
                v = torch.tensor([time_replays(graph)], device="cuda")
                dist.all_reduce(v, op=dist.ReduceOp.MAX)
                times[kind] = v.item()
                del graph
                if kind.startswith("symmtune") or kind in _SPECS:
                    c = st._choices[(g, torch.bfloat16, n)]
                    out("config", kind, f"B={bsz}", f"{c['source']} {c['config']}".replace(",", ";"))
            except Exception as e:  # noqa: BLE001
                fail(f"decode B={bsz} {kind}: {type(e).__name__}: {str(e)[:300]}")
        ar_force.use(None)
        for kind, t in times.items():
            per = (t - times["none"]) / layers if "none" in times and kind != "none" else float("nan")
            out("decode", kind, f"B={bsz}", f"step {t:.1f} us; per all-reduce {per:.2f} us")


def bench_graph(fn, k: int = 20, reps: int = 10) -> float:
    """Per-call time of fn inside a CUDA graph of k back-to-back calls:
    shared/bench/peer_baselines.py's ":graph" method (no launch cost, no
    rank skew). Median over replays, max over ranks."""

    def calls():
        for _ in range(k):
            fn()
    g, _ = warm_and_capture(calls, warmup=1)
    torch.cuda.synchronize()
    dist.barrier()
    v = torch.tensor([time_replays(g, reps) / k], device="cuda")
    dist.all_reduce(v, op=dist.ReduceOp.MAX)
    return v.item()


def ar_graph() -> None:
    """all_reduce per call in a CUDA graph of 20 calls, beside the peers
    timed the same way, bf16, at the sizes of peer_baselines.py's rows."""
    g = dist.group.WORLD.group_name
    for nbytes in (4 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20):
        n = nbytes // 2
        x = torch.randn(n, dtype=torch.bfloat16, device="cuda")
        y = symm_mem.empty(n, dtype=torch.bfloat16, device="cuda")
        symm_mem.rendezvous(y, g)
        y.copy_(x)
        z = st.empty(n, torch.bfloat16)
        z.copy_(x)
        rows = {
            "nccl": lambda: dist.all_reduce(x),
            "symm_one_shot": lambda: torch.ops.symm_mem.one_shot_all_reduce(y, "sum", g),
            "symm_two_shot": lambda: torch.ops.symm_mem.two_shot_all_reduce_(y, "sum", g),
            "symmtune_staged": lambda: st.all_reduce(x),
            "symmtune_inplace": lambda: st.all_reduce(z),
        }
        for kind in forced_kinds():
            rows[kind] = rows[_BASE[kind]]
        for name, fn in rows.items():
            try:
                ar_force.use(_SPECS.get(name))
                out("ar_graph", name, nbytes, bench_graph(fn))
                if name.startswith("symmtune") or name in _SPECS:
                    c = st._choices[(g, torch.bfloat16, n)]
                    out("config", name, nbytes, f"{c['source']} {c['config']}".replace(",", ";"))
            except Exception as e:  # noqa: BLE001
                fail(f"ar_graph {name} {nbytes}: {type(e).__name__}: {str(e)[:200]}")
        ar_force.use(None)

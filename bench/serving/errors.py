"""The checks of bench/serving_check.py of what goes wrong around a call:
capture_error (a first call inside torch.cuda.graph raises st.CaptureError
naming the fix, and the call is right after it) and disagree (per-rank
cache files that disagree: every rank runs rank 0's config), with the cache
files disagree writes. The run's state is read as common.NAME
(serving/common.py).
"""
from __future__ import annotations

import datetime
import json
import logging
import os
import tempfile
import warnings
from typing import Any, Optional

import torch
import torch.distributed as dist

import symmtune.torch as st
from serving import common
from serving.common import (BF16, Check, FP8Op, ar_item, fill, fp8_item, gemm_item, gen, linear_weight, new_group,
                            randn, ref_agmm, ref_all_reduce, ref_mmrs)
from symmtune import cache as st_cache, gemm as st_gemm, hardware as st_hw, kernels as st_kernels


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
        gemm_item("agmm", "agmm", 96 * common.W, 640, 1024, pg, g),
        gemm_item("matmulrs", "matmulrs", 96 * common.W, 640, 1024, pg, g),
        fp8_item("fp8_agmm", [FP8Op("agmm", 96 * common.W, 640, 1024, False, pg)]),
        fp8_item("fp8_matmulrs", [FP8Op("matmulrs", 96 * common.W, 640, 1024, True, pg)]),
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
    e = ar_item("all_reduce:new size, fitting", 9_999 + 8 * common.W, None)
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
# The last candidates, of one chunk, are the ones world 1 takes (Validate
# refuses chunks on one rank: no communication to overlap; and a fused
# matmulrs of one rank, its GEMM alone, only with the default push).
# tests/test_bench_scripts.py checks that every world the check runs at
# finds one.
GEMM_SET: dict[str, dict[str, list[dict[str, Any]]]] = {  # candidates, the first that Validate takes
    "set1": {
        "agmm": [{"impl": "fused:128x256:s4:c2:g8:cl2"}, {"impl": "fused:128x256:s4:c2:g8"},
                 {"chunks": 4, "copy": "sm"}, {"impl": "fused:128x256:s4:c2:g8:cl2", "chunks": 1}],
        "matmulrs": [{"impl": "fused:128x256:s4:c2:g8:cl2", "push": "gemm"},
                     {"impl": "fused:128x256:s4:c2:g8", "push": "gemm"}, {"chunks": 4},
                     {"impl": "fused:128x256:s4:c2:g8:cl2", "chunks": 1}],
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
    return {"kernel": kernel, "kernel_version": version, "backend": "cuda", "hardware": fp.id(), "world": common.W,
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
        for pipe in _torch_gemm.opened(kernel, p.m, p.n, p.k):
            if pipe.dt == "bf16":
                return dict(pipe.choice.config)
    except Exception:  # noqa: BLE001
        return None
    return None


def _short(cfg: Optional[dict[str, Any]], kernel: str) -> Optional[str]:
    if cfg is None:
        return None
    return ",".join(f"{k}={cfg[k]}" for k in SAME_KEYS[kernel] if k in cfg)


def check_disagree(c: Check) -> None:
    d = tempfile.mkdtemp(prefix=f"serving-check-r{common.RANK}-")
    fp = st_hw.cuda(common.W)
    c.data["fingerprint"] = fp.id()
    g = gen(500)
    cases = [("A", "set1", None), ("B", "set1", "set2"), ("C", None, "set1")]
    sm90 = torch.cuda.get_device_capability()[0] == 9
    summary = []
    for ci, (case, r0, others) in enumerate(cases):
        which = r0 if common.RANK == 0 else others
        n = 40_000 + 1024 * ci
        pa = st_gemm.Problem(512 * common.W * (ci + 1), 1536 + 256 * ci, 2048, common.W)
        pm = st_gemm.Problem(512 * common.W * (ci + 1), 2048, 1024 + 256 * ci, common.W)
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
                    m = st_cache.lookup(kernel, common.W, "bf16", shape, backend="cuda", cache=path,
                                        kernel_version=version)
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
                    a = randn((pa.m // common.W, pa.k), g)
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
        every: list[Any] = [None] * common.W
        dist.all_gather_object(every, {"ran": ran, "cache": mine, "warned": warned}, group=common.CTL)
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

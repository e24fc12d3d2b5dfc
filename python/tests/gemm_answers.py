"""Answers the GEMM parity queries with symmtune.gemm and symmtune.hopper
(the runtime's bindings) and, for what only the library holds (plans,
ShardInPlace, fused plans and tables), libsymmtune directly
(symmtune._native.call), for the Go test kernels/gemm/gpu/parity_test.go
(TestPlanParity): reads {"plans", "configs", "defaults", "tiles", "fused",
"spaces"} on stdin and writes, in the same order, each plan in the form the
Go test builds from PlanAG/PlanRS, "ok" (with where each rank reads its own
shard in place, for agmm) or Validate's message for each config on its
problem, FitDefault's config (or why none runs) for each default query,
for each tile name ParseTile's message or the canonical name and Check's
verdict (with the NVRTC options of a valid tile), for each fused query the
fused plans and the RSTable bytes in hex, each kernel's space as
[{"Name", "Values"}] (space.Param) and its kernel version.
"""

import json
import sys

from symmtune import _native, gemm, hopper


def plan(q: dict) -> dict:
    d = _native.call("gemm.plan", **q)
    del d["max_products"]
    return d


def verdict(q: dict) -> str:
    """Validate's verdict; for a valid agmm config, also where each rank
    reads its own shard in place (the library's gemm.shard_in_place)."""
    p = gemm.Problem(q["m"], q["n"], q["k"], q["world"])
    c = gemm.parse_config(q["kernel"], q["config"])
    try:
        gemm.validate(c, p)
    except ValueError as e:
        return str(e)
    if q["kernel"] == gemm.AGMM:
        return "ok in place:" + "".join(
            f" {str(_native.call('gemm.shard_in_place', config=c.request(), problem=p.request(), rank=r)['in_place']).lower()}"
            for r in range(p.world))
    return "ok"


def default(q: dict):
    """FitDefault's config for the query's kernel and problem, or why none
    runs."""
    try:
        p = gemm.Problem(q["m"], q["n"], q["k"], q["world"])
        return _native.call("gemm.default", kernel=q["kernel"], problem=p.request())
    except ValueError as e:
        return str(e)


def tile(name: str) -> str:
    try:
        t = hopper.parse_tile(name)
    except ValueError as e:
        return str(e)
    try:
        t.check(hopper.SMEM_LIMIT)
    except ValueError as e:
        return f"{t} {e}"
    return f"{t} ok {' '.join(t.options(True))}"


def fused(q: dict) -> dict:
    ag = _native.call("gemm.fused_plan", m=q["m"], n=0, world=q["world"], rank=q["rank"], chunks=q["chunks"],
                      block_m=0, block_n=0, rows_per_tile=q["rows_per_tile"])["ag"]
    rs = _native.call("gemm.fused_plan", m=q["m"], n=q["n"], world=q["world"], rank=q["rank"], chunks=q["chunks"],
                      block_m=q["bm"], block_n=q["bn"], rows_per_tile=q["rows_per_tile"])["rs"]
    table = _native.call("gemm.rs_table", **{k: rs[k] for k in ("bounds", "owner", "index", "expect")},
                         dst=q["dst"], flag=q["flag"], epilogue=q["epilogue"])
    return {"ag": {"order": ag["order"], "table": ag["bounds"] + ag["flag"]}, "rs": rs, "rs_table": table["hex"]}


if __name__ == "__main__":
    qs = json.load(sys.stdin)
    json.dump({"plans": [plan(q) for q in qs["plans"]], "configs": [verdict(q) for q in qs["configs"]],
               "defaults": [default(q) for q in qs["defaults"]],
               "tiles": [tile(name) for name in qs["tiles"]], "fused": [fused(q) for q in qs["fused"]],
               "spaces": {k: [{"Name": n, "Values": list(v)} for n, v in gemm.SPACE[k].items()] for k in qs["spaces"]},
               "versions": {k: gemm.kernel_version(k) for k in qs["spaces"]}},
              sys.stdout)

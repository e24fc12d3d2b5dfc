"""Answers the GEMM parity queries with symmtune.gemm, for the Go test
kernels/gemm/gpu/parity_test.go (TestPlanParity): reads {"plans", "configs",
"defaults", "tiles", "fused", "spaces"} on stdin and writes, in the same order, each plan in the
form the Go test builds from PlanAG/PlanRS, "ok" (with where each rank reads its
own shard in place, for agmm) or Validate's message for each config on its
problem, fit_default's config (or why none runs) for each default query, for each tile name ParseTile's message or the
canonical name and Check's verdict (with the NVRTC options of a valid
tile), for each fused query the fused plans
(symmtune.fusedplan) and the RSTable bytes in hex, each kernel's space as
[{"Name", "Values"}] (space.Param) and its kernel version.
"""

import json
import sys

from symmtune import fusedplan, gemm, hopper


def span(s: gemm.Span) -> dict:
    return {"owner": s.owner, "index": s.index, "start": s.start, "rows": s.rows}


def step(s: gemm.Step) -> dict:
    return {**span(s.span), "batch": s.batch, "stream": s.stream}


def plan(q: dict) -> dict:
    o = gemm.PlanOptions(q["m"], q["world"], q["rank"], q["chunks"], q["streams"], q["batch"])
    if q["kernel"] == gemm.AGMM:
        ag = gemm.plan_ag(o)
        return {"peers": ag.peers, "pulls": [[span(s) for s in ss] for ss in ag.pulls], "own": [span(s) for s in ag.own],
                "products": [step(s) for s in ag.products]}
    rs = gemm.plan_rs(o)
    return {"products": [step(s) for s in rs.products], "reduces": [span(s) for s in rs.reduces]}


def verdict(q: dict) -> str:
    """Validate's verdict; for a valid agmm config, also where each rank
    reads its own shard in place (gemm.shard_in_place)."""
    p = gemm.Problem(q["m"], q["n"], q["k"], q["world"])
    c = gemm.parse_config(q["kernel"], q["config"])
    try:
        gemm.validate(c, p)
    except ValueError as e:
        return str(e)
    if q["kernel"] == gemm.AGMM:
        return "ok in place:" + "".join(f" {str(gemm.shard_in_place(c, p, r)).lower()}" for r in range(p.world))
    return "ok"


def default(q: dict):
    """fit_default's config for the query's kernel and problem, or why none
    runs."""
    try:
        return gemm.fit_default(q["kernel"], gemm.Problem(q["m"], q["n"], q["k"], q["world"]))
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
    ag = fusedplan.plan_fused_ag(q["m"], q["world"], q["rank"], q["chunks"], q["rows_per_tile"])
    rs = fusedplan.plan_fused_rs(q["m"], q["n"], q["world"], q["rank"], q["chunks"], q["bm"], q["bn"],
                                 q["rows_per_tile"])
    return {"ag": {"order": list(ag.order), "table": ag.table()},
            "rs": {"order": list(rs.order), "bounds": list(rs.bounds), "owner": list(rs.owner),
                   "index": list(rs.index), "expect": list(rs.expect)},
            "rs_table": rs.table(q["dst"], q["flag"], fusedplan.RSEpilogue(**q["epilogue"])).hex()}


if __name__ == "__main__":
    qs = json.load(sys.stdin)
    json.dump({"plans": [plan(q) for q in qs["plans"]], "configs": [verdict(q) for q in qs["configs"]],
               "defaults": [default(q) for q in qs["defaults"]],
               "tiles": [tile(name) for name in qs["tiles"]], "fused": [fused(q) for q in qs["fused"]],
               "spaces": {k: [{"Name": n, "Values": list(v)} for n, v in gemm.SPACE[k].items()] for k in qs["spaces"]},
               "versions": {k: gemm.kernel_version(k) for k in qs["spaces"]}},
              sys.stdout)

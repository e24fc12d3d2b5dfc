"""How far the untuned GEMM config is from each search's best, and how far a
set of candidate defaults would be (issue 44, "Untuned: with no cache entry,
within 5% of the best").

    python3 bench/experiments/untuned_rows.py [LOG ...]

Reads symmtune trial logs (JSONL, .xz and .gz too; with no LOG, the
issue's logs of FILES, relative to the repository root; a missing one is
named on stderr and skipped) and prints, per job (kernel, world, dtype, shape,
hardware), a markdown table of tuner scores (score_us, µs, slowest rank;
not a program's time):

- best: the lowest first-pass score (trials without "refined": every
  config measured the same way, 20 iterations) and its config;
- default: the first-pass score of the trial marked "default" (the
  untuned config of the build that searched) over the best; "remeasured":
  the same ratio from the re-measured finalists (60 iterations in 3
  interleaved rounds, "refined"), where the default was among them;
- one column per candidate of CANDIDATES: its first-pass score over the
  best. A number alone: measured as is; "~" and parameter names: not
  measured, the nearest measured configs of its family (the same impl
  tile, copy, direction, push, reduce and batch: FAMILY) instead, those
  differing in the fewest parameters (several: the range of their ratios),
  with the parameters they differ in; "-": no config of its family
  measured in the job (not measured, or not valid on the shape).

Standard library only.
"""
import gzip
import json
import lzma
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

B4 = "bench/results/2026-11-28-h100x4-bench-gpu"
SC = "bench/results/2026-11-28-h100-search-check"
LS = "tuner/testdata"
FILES = [
    f"{B4}/tp-block-w4/search-recorded.jsonl.xz",
    f"{B4}/gemm-paired-w4/search-agmm-8192x3584x8192.jsonl",
    f"{B4}/gemm-paired-w4/search-agmm-16384x3584x8192.jsonl",
    f"{B4}/gemm-paired-w4/search-matmulrs-8192x3584x8192.jsonl",
    f"{B4}/gemm-paired-w4/search-matmulrs-16384x3584x8192.jsonl",
    f"{SC}/w4/search-agmm-8192x3584x8192.jsonl",
    f"{SC}/w4/search-matmulrs-8192x3584x8192.jsonl",
    f"{B4}/gemm-paired-w2/search-agmm-8192x3584x8192.jsonl",
    f"{B4}/gemm-paired-w2/search-agmm-16384x3584x8192.jsonl",
    f"{B4}/gemm-paired-w2/search-matmulrs-8192x3584x8192.jsonl",
    f"{B4}/gemm-paired-w2/search-matmulrs-16384x3584x8192.jsonl",
    f"{SC}/w2-first/search-agmm-8192x3584x8192.jsonl",
    f"{LS}/landscape-cuda-agmm-w2-m8192n3584k8192.jsonl.gz",
    f"{LS}/landscape-cuda-agmm-w2-m16384n3584k8192.jsonl.gz",
    f"{LS}/landscape-cuda-matmulrs-w2-m8192n3584k8192.jsonl.gz",
]

# Parameters added after some logs were written, with the value a config
# without them ran (kernels/gemm/gpu/space.go, addedLater); reduce is
# matmulrs's only.
ADDED_LATER = {"agmm": {"fast_accum": 1}, "matmulrs": {"reduce": "kernel", "fast_accum": 1}}

_AG = {"copy_blocks": 4, "sm_reserve": 0, "streams": 1, "algo": 0, "batch": 0, "fast_accum": 1}
_RS = {"reduce_blocks": 132, "sm_reserve": 0, "streams": 1, "algo": 0, "batch": 0, "fast_accum": 1}

# name -> (kernel, full config). Every config the defaults of
# kernels/gemm/gpu/defaults.go have used or might use, and the winners of
# the logs above.
CANDIDATES = {
    "A-w2": ("agmm", dict(_AG, impl="fused:128x256:s4:c2:g8:cl2", copy="ce", direction="push",
                          chunks=8, graph=1)),
    "A-w4": ("agmm", dict(_AG, impl="pipeline", copy="sm", copy_blocks=4, direction="push", chunks=2,
                          streams=3, sm_reserve=8, graph=1)),
    "A-small": ("agmm", dict(_AG, impl="pipeline", copy="sm", copy_blocks=8, direction="push", chunks=1,
                             streams=2, sm_reserve=0, algo=1, batch=1, graph=1)),
    "A-224s5g4": ("agmm", dict(_AG, impl="fused:128x224:s5:c2:g4", copy="ce", direction="push",
                               chunks=2, graph=1)),
    "A-224g8": ("agmm", dict(_AG, impl="fused:128x224:s4:c2:g8", copy="ce", direction="push",
                             chunks=2, graph=1)),
    "A-256g4cl2": ("agmm", dict(_AG, impl="fused:128x256:s4:c2:g4:cl2", copy="ce", direction="push",
                                chunks=2, graph=1)),
    "A-256x128": ("agmm", dict(_AG, impl="fused:256x128:s4:c2:g8", copy="ce", direction="push",
                               chunks=2, graph=1)),
    "R-w2": ("matmulrs", dict(_RS, impl="fused:128x256:s4:c2:g8:cl2", push="ce", reduce="epilogue",
                              chunks=4, graph=1)),
    "R-w2k": ("matmulrs", dict(_RS, impl="fused:128x256:s4:c2:g4:cl2", push="ce", reduce="kernel",
                               reduce_blocks=264, chunks=4, graph=1)),
    "R-w4": ("matmulrs", dict(_RS, impl="fused:128x224:s4:c2:g8", push="ce", reduce="epilogue",
                              chunks=2, graph=1)),
    "R-small": ("matmulrs", dict(_RS, impl="fused:128x256:s4:c2:g8:cl2", push="gemm", reduce="kernel",
                                 reduce_blocks=264, chunks=1, graph=1)),
    "R-256g4": ("matmulrs", dict(_RS, impl="fused:128x256:s4:c2:g4", push="ce", reduce="epilogue",
                                 chunks=2, graph=1)),
    "R-256g8cl2": ("matmulrs", dict(_RS, impl="fused:128x256:s4:c2:g8:cl2", push="ce", reduce="epilogue",
                                    chunks=2, graph=1)),
    "R-224s5k": ("matmulrs", dict(_RS, impl="fused:128x224:s5:c2:g4", push="ce", reduce="kernel",
                                  reduce_blocks=264, chunks=2, graph=1)),
    "R-pp-none": ("matmulrs", dict(_RS, impl="fused:128x128:s5:c2:g4:pp", push="none", reduce="epilogue",
                                   chunks=2, graph=1)),
}


def read(path):
    # The large recorded landscapes in tuner/testdata are stored gzipped.
    opener = {".xz": lzma.open, ".gz": gzip.open}.get(os.path.splitext(path)[1], open)
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def full(kernel, cfg):
    c = dict(cfg)
    for k, v in ADDED_LATER[kernel].items():
        c.setdefault(k, v)
    return c


def text(kernel, cfg):
    c = full(kernel, cfg)
    return ",".join(f"{k}={c[k]}" for k in sorted(c) if k != "fast_accum")


def jobs(paths):
    """Trials by job, in the order first seen; files that are not searches
    (no trial of the job but the default) are skipped."""
    out = {}
    for path in paths:
        for r in read(path):
            if r.get("status") != "ok" or "score_us" not in r:
                continue
            hw = r.get("hardware", "")
            gpu = hw.split("/")[1] if hw.count("/") >= 2 else hw
            j = (r["kernel"], r["world"], r["dtype"], r["shape"], gpu, os.path.relpath(path, ROOT))
            out.setdefault(j, []).append(r)
    return out


# What a config's family is here: the tuner's (tuner/strategy/families.go:
# the categorical and two-valued parameters) less graph, which moved scores
# by no more than the noise in these logs. Sizes (chunks, streams, algo,
# sm_reserve, copy_blocks, reduce_blocks) and graph may differ.
FAMILY = ("impl", "copy", "direction", "push", "reduce", "batch")


def lookup(kernel, first, cand):
    """(scores, how): the candidate's first-pass score (the lowest, if
    measured twice) as a one-element list, how "="; else the scores of the
    measured configs of its FAMILY that differ from it in the fewest
    parameters, how "~" and the parameters they differ in; else [], "-"."""
    want = full(kernel, cand)
    exact = [r["score_us"] for r in first if full(kernel, r["config"]) == want]
    if exact:
        return [min(exact)], "="
    same = [r for r in first if all(full(kernel, r["config"]).get(k) == want.get(k) for k in FAMILY)]
    if not same:
        return [], "-"

    def diff(r):
        c = full(kernel, r["config"])
        return sorted(k for k in want if c.get(k) != want[k])

    d = min(len(diff(r)) for r in same)
    near = [r for r in same if len(diff(r)) == d]
    names = sorted({n for r in near for n in diff(r)})
    return sorted(r["score_us"] for r in near), "~" + "/".join(names)


def analyse(j, trials):
    kernel = j[0]
    first = [r for r in trials if not r.get("refined")]
    refined = [r for r in trials if r.get("refined")]
    best = min(first, key=lambda r: r["score_us"])
    b = best["score_us"]
    row = {"job": j, "trials": len(first), "best": b, "best_cfg": text(kernel, best["config"])}
    dflt = [r for r in first if r.get("default")]
    row["default"] = dflt[0]["score_us"] / b if dflt else None
    row["default_cfg"] = text(kernel, dflt[0]["config"]) if dflt else ""
    rd = [r for r in refined if r.get("default")]
    row["remeasured"] = rd[0]["score_us"] / min(r["score_us"] for r in refined) if rd else None
    row["cands"] = {}
    for name, (k, cand) in CANDIDATES.items():
        if k != kernel:
            continue
        scores, how = lookup(kernel, first, cand)
        row["cands"][name] = ([s / b for s in scores], how)
    return row


def label(path):
    """A log's short name: its folder, or "landscape" for tuner/testdata's."""
    d = os.path.basename(os.path.dirname(path))
    if d == "testdata":
        return "landscape"
    if d in ("w2", "w2-first", "w4"):
        return "search-check/" + d
    return d


def fmt(x):
    return "" if x is None else f"{x:.3f}"


def main(argv):
    paths = argv[1:]
    if not paths:
        paths = []
        for p in FILES:
            full_path = os.path.join(ROOT, p)
            if os.path.exists(full_path):
                paths.append(full_path)
            else:
                print(f"missing, skipped: {p}", file=sys.stderr)
    rows = [analyse(j, t) for j, t in jobs(paths).items()]
    rows = [r for r in rows if r["trials"] > 1]
    for kernel in ("agmm", "matmulrs"):
        names = [n for n, (k, _) in CANDIDATES.items() if k == kernel]
        print(f"\n### {kernel}\n")
        print("| log | W | shape | rows/rank | GPU | trials | best µs | default | re-measured | "
              + " | ".join(names) + " |")
        print("|---" * (9 + len(names)) + "|")
        for r in rows:
            kern, world, dtype, shape, gpu, path = r["job"]
            if kern != kernel:
                continue
            m = int(dict(kv.split("=") for kv in shape.split(","))["m"])
            cells = []
            for n in names:
                vs, how = r["cands"][n]
                if not vs:
                    cells.append("-")
                    continue
                v = fmt(vs[0]) if vs[0] == vs[-1] else f"{fmt(vs[0])}-{fmt(vs[-1])}"
                cells.append(v if how == "=" else f"{v} {how}")
            print(f"| {label(path)} | {world} | {shape} | {m // world} | {gpu.replace('NVIDIA ', '')} | {r['trials']} | "
                  f"{r['best']:.1f} | {fmt(r['default'])} | {fmt(r['remeasured'])} | " + " | ".join(cells) + " |")
    print("\n### best and default configs\n")
    for r in rows:
        kern, world, dtype, shape, gpu, path = r["job"]
        print(f"- {kern} W={world} {dtype} {shape} ({gpu}; {path}):\n  best {r['best_cfg']}\n"
              f"  default {r['default_cfg']}")
    print("\n### candidates\n")
    for n, (k, c) in CANDIDATES.items():
        print(f"- {n} ({k}): {text(k, c)}")


if __name__ == "__main__":
    main(sys.argv)

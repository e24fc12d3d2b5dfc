"""Combine bench/experiments/gemm-gpu.sh's logs into one markdown table per world size.

    python3 bench/experiments/gemm_combine.py LOGDIR > gemm-summary.md

Every figure is a ratio to cuBLAS mm alone on random inputs measured in the
same call (the GPUs' clocks move between calls) by bench/experiments/mm_baseline.py;
peer_baselines.py's own "mm alone" (on a never-written input) is shown
beside it. symmtune's figure is the winner's median
from the cache the searches wrote (the host's statistic: median over
iterations of the per-iteration max across ranks) and "default" the
default config's median measured the same way in the same search
(default_median_us). Peers come from peer_baselines.py's CSV
(kind,impl,shape,us). Trial logs are read by symmtune.triallog (Go's
parser, through libsymmtune: bench/lib.sh sets PYTHONPATH and SYMMTUNE_LIB).
"""
import csv, glob, json, os, re, sys, tomllib

from symmtune import triallog


def peers(d, w):
    out = {}
    for name in (f"peers-mm-w{w}.csv", f"peers-mmrand-w{w}.csv"):
        p = os.path.join(d, name)
        if not os.path.exists(p):
            continue
        for row in csv.reader(open(p)):
            if len(row) == 4 and row[0] in ("mm", "agmm", "mmrs"):
                try:
                    out[(row[0], row[1], row[2])] = float(row[3])
                except ValueError:
                    pass
    return out


def best_by_impl(*logs):
    """The fastest ok trial of each impl kind ("pipeline", "fused") in the
    searches' trial logs: (score µs, config), re-measured trials included."""
    best = {}
    for r in (r for log in logs if os.path.exists(log) for r in triallog.read(log).results):
        if r["status"] != "ok":
            continue
        kind = r["config"]["impl"].split(":")[0]
        if kind not in best or r["score_us"] < best[kind][0]:
            best[kind] = (r["score_us"], r["config"])
    return best


def gemm_alone(d):
    """bench/gemmalone's CSV (gemmalone.csv): per shape the fastest fused
    tile, its ratio to cuBLASLt timed around it, and cuBLASLt's figure."""
    p = os.path.join(d, "gemmalone.csv")
    if not os.path.exists(p):
        return
    best = {}
    for row in csv.reader(open(p)):
        if len(row) < 8 or row[1] != "fused" or row[5] in ("-", "us"):
            continue
        m = re.match(r"([\d.]+) \(cublaslt algo(\d) ([\d.]+)/([\d.]+)", row[7])
        if not m:
            continue
        us = float(row[5])
        if row[0] not in best or us < best[row[0]][0]:
            best[row[0]] = (us, row[2], float(row[6]), float(m.group(1)), (float(m.group(3)) + float(m.group(4))) / 2)
    print("\n### The Hopper GEMM alone (bench/gemmalone, GPU 0 of the same call)\n")
    print("| M x N x K | fastest tile | µs | TFLOP/s | cuBLASLt µs (before/after mean) | ratio (cuBLASLt / ours) |")
    print("|---|---|---|---|---|---|")
    for sh, (us, tile, tf, ratio, lt) in sorted(best.items(), key=lambda kv: [int(x) for x in kv[0].split("x")]):
        print(f"| {sh} | `{tile}` | {us:.1f} | {tf:.0f} | {lt:.1f} | {ratio:.3f} |")


def trials(log):
    if not os.path.exists(log):
        return 0
    return len(triallog.read(log).results)


def main(d):
    cache = {}
    cp = os.path.join(d, "configs.toml")
    if os.path.exists(cp):
        for e in tomllib.load(open(cp, "rb")).get("entry", []):
            s = e["shape"]
            cache[(e["kernel"], e["world"], f"{s['m']}x{s['n']}x{s['k']}")] = e
    worlds = sorted({int(m.group(1)) for f in glob.glob(os.path.join(d, "search-*-w*-*.txt"))
                     if (m := re.search(r"-w(\d+)-", os.path.basename(f)))})
    for w in worlds:
        pr = peers(d, w)
        shapes = sorted({re.search(r"-w\d+-(\S+)\.txt", os.path.basename(f)).group(1)
                         for f in glob.glob(os.path.join(d, f"search-*-w{w}-*.txt"))},
                        key=lambda s: [int(x) for x in s.split("x")])
        print(f"\n### {w} GPUs (bf16; µs, and the ratio to cuBLAS mm alone on random inputs in the same call)\n")
        print("| M x N x K | mm alone (random) | mm alone (peer script: unwritten input) | agmm symmtune | agmm default | NCCL+cuBLAS | torch fused | matmulrs symmtune | matmulrs default | cuBLAS+NCCL | torch fused |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for sh in shapes:
            mm = pr.get(("mm", "cublas_mm_random", sh))
            mm0 = pr.get(("mm", "cublas_mm_only", sh))
            def cell(us):
                if us is None:
                    return "–"
                return f"{us:.1f} ({us / mm:.2f}x)" if mm else f"{us:.1f}"
            cells = [sh, f"{mm:.1f}" if mm else "–", cell(mm0)]
            for ker, kind in (("agmm", "agmm"), ("matmulrs", "mmrs")):
                e = cache.get((ker, w, sh))
                n = trials(os.path.join(d, f"search-{ker}-w{w}-{sh}.jsonl"))
                dflt = e.get("default_median_us") if e else None
                win = cell(e["median_us"]) if e else "–"
                if e and n:
                    win += f" [{n} trials]"
                cells += [win, cell(dflt),
                          cell(pr.get((kind, "nccl+cublas" if kind == "agmm" else "cublas+nccl", sh))),
                          cell(pr.get((kind, "torch_fused", sh)))]
            print("| " + " | ".join(cells) + " |")
        print("\nBest of each impl in the same searches (first-pass or re-measured trial medians; ratio to mm alone):\n")
        print("| M x N x K | kernel | best pipeline | best fused | fused config |")
        print("|---|---|---|---|---|")
        for sh in shapes:
            mm = pr.get(("mm", "cublas_mm_random", sh))
            for ker in ("agmm", "matmulrs"):
                b = best_by_impl(os.path.join(d, f"search-{ker}-w{w}-{sh}.jsonl"),
                                 os.path.join(d, f"fused-{ker}-w{w}-{sh}.jsonl"))
                def c(k):
                    if k not in b:
                        return "–"
                    return f"{b[k][0]:.1f} ({b[k][0] / mm:.2f}x)" if mm else f"{b[k][0]:.1f}"
                fc = b["fused"][1] if "fused" in b else None
                cfg = f"`{fc['impl']}` chunks={fc['chunks']}" if fc else "–"
                print(f"| {sh} | {ker} | {c('pipeline')} | {c('fused')} | {cfg} |")
        print()
        for sh in shapes:
            for ker in ("agmm", "matmulrs"):
                e = cache.get((ker, w, sh))
                if e:
                    print(f"- {ker} w{w} {sh}: `{json.dumps(e['config'], sort_keys=True)}`")
    gemm_alone(d)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/out/logs")

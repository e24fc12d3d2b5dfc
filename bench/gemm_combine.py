"""Combine bench/gemm-gpu.sh's logs into one markdown table per world size.

    python3 bench/gemm_combine.py LOGDIR > gemm-summary.md

Every figure is a ratio to cuBLAS mm alone on random inputs measured in the
same call (the GPUs' clocks move between calls) by bench/mm_baseline.py;
peer_baselines.py's own "mm alone" (on a never-written input) is shown
beside it. symmtune's figure is the winner's median
from the cache the searches wrote (the host's statistic: median over
iterations of the per-iteration max across ranks) and "default" the
default config's median measured the same way in the same search
(default_median_us). Peers come from peer_baselines.py's CSV
(kind,impl,shape,us).
"""
import csv, glob, json, os, re, sys, tomllib


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


def trials(log):
    if not os.path.exists(log):
        return 0
    return sum(1 for l in open(log) if l.strip())


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
        print()
        for sh in shapes:
            for ker in ("agmm", "matmulrs"):
                e = cache.get((ker, w, sh))
                if e:
                    print(f"- {ker} w{w} {sh}: `{json.dumps(e['config'], sort_keys=True)}`")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/out/logs")

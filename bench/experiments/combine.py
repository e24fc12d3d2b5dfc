"""Combine bench/experiments/gpu.sh's logs into one markdown table per world size.

    python3 bench/experiments/combine.py LOGDIR > summary.md

symmtune's number is the search's winner as re-measured by the host: the
median over iterations of the per-iteration max across ranks, which is never
below the peers' statistic (max across ranks of each rank's median; in the
2026-11-21 logs it was 0 to 0.19 µs above it), read from the search output's
"winner:" line, its config with it. Peers come from peer_baselines.py's CSV
(kind,impl,shape,us) by message bytes. Trial logs are read by
symmtune.triallog (Go's parser, through libsymmtune: bench/lib.sh sets
PYTHONPATH and SYMMTUNE_LIB).
"""
import csv, glob, os, re, sys

from symmtune import triallog

def human(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return f"{b // f} {unit}"
    return f"{b} B"

def main(d):
    rows = {}
    for path in glob.glob(os.path.join(d, "search-w*-*.txt")):
        m = re.match(r"search-w(\d+)-(\d+)\.txt", os.path.basename(path))
        w, s = int(m.group(1)), int(m.group(2))
        text = open(path, errors="replace").read()
        wm = re.search(r"winner:\s+(\S+)\s+([\d.]+) µs", text)
        trials = 0
        # The log as gpu.sh wrote it, or gzipped (triallog reads both).
        lp = os.path.join(d, f"landscape-cuda-allreduce-w{w}-{s}.jsonl")
        lp = lp if os.path.exists(lp) else lp + ".gz"
        if os.path.exists(lp):
            trials = len(triallog.read(lp).results)
        rows[(w, s)] = (float(wm.group(2)), wm.group(1), trials) if wm else (None, "search failed: see " + os.path.basename(path), trials)
    peers = {}
    for path in glob.glob(os.path.join(d, "peers-w*.csv")):
        w = int(re.search(r"peers-w(\d+)", path).group(1))
        for r in csv.reader(open(path)):
            if len(r) == 4 and r[0] == "allreduce":
                try:
                    peers[(w, r[1], int(r[2]))] = float(r[3])
                except ValueError:
                    pass
    # The default config's median in each search (the size-dependent
    # DefaultFor, measured the same way as the winner).
    defaults = {}
    cp = os.path.join(d, "configs.toml")
    if os.path.exists(cp):
        import tomllib
        for e in tomllib.load(open(cp, "rb")).get("entry", []):
            if e.get("kernel") == "allreduce" and e.get("default_median_us"):
                defaults[(e["world"], e["shape"]["n"] * 2)] = e["default_median_us"]
    machine = ""
    mp = os.path.join(d, "machine.txt")
    if os.path.exists(mp):
        machine = open(mp).read().splitlines()[0]
    print(f"# symmtune CUDA all-reduce vs peers, bf16 ({machine})\n")
    print("Times in µs: CUDA events around one call on each rank after a device-side barrier, median over iterations, max across ranks (symmtune: median of the per-iteration max across ranks, never below the peers' max of per-rank medians).\n")
    for w in sorted({k[0] for k in rows} | {k[0] for k in peers}):
        print(f"## {w} GPUs\n")
        print("| size | symmtune | default (untuned) | NCCL | symm_mem one_shot | symm_mem two_shot | vs NCCL | vs best symm_mem | symmtune config | trials |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        sizes = sorted({k[1] for k in rows if k[0] == w})
        for s in sizes:
            us, cfg, n = rows[(w, s)]
            nccl = peers.get((w, "nccl", s)); one = peers.get((w, "symm_one_shot", s)); two = peers.get((w, "symm_two_shot", s))
            f = lambda x: f"{x:.1f}" if x is not None else "—"
            best = min([x for x in (one, two) if x is not None], default=None)
            r1 = f"{nccl / us:.2f}x" if us and nccl else "—"
            r2 = f"{best / us:.2f}x" if us and best else "—"
            dflt = defaults.get((w, s))
            dcell = f"{dflt:.1f} ({dflt / us:.2f}x)" if dflt and us else "—"
            print(f"| {human(s)} | {f(us)} | {dcell} | {f(nccl)} | {f(one)} | {f(two)} | {r1} | {r2} | `{cfg}` | {n} |")
        print()

if __name__ == "__main__":
    main(sys.argv[1])

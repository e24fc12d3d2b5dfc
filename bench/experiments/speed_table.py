"""The table of bench/experiments/allreduce-speed.sh: per message size, the size's
default config, today's best config and the best config of each new option,
beside NCCL, with the link rate each GPU achieved.

    python3 bench/experiments/speed_table.py LOGDIR WORLD

Reads LOGDIR/speed-<bytes>-<label>.jsonl (symmtune trial logs; a config
measured twice, first pass then re-measured as a finalist, counts by its
last measurement) and LOGDIR/peers-w<WORLD>.csv (kind,impl,shape,us).
"Sent per GPU" is a two-shot all-reduce's traffic, 2*S*(W-1)/W bytes out of
every GPU (NCCL's ring moves the same), over the time; 386 GB/s is the best
copy-engine rate measured on the 4 x H200 machine
(bench/results/2026-11-21-h200x4-ce_bw.txt). Trial logs are read by
symmtune.triallog (Go's parser, through libsymmtune: bench/lib.sh sets
PYTHONPATH and SYMMTUNE_LIB).
"""
import csv
import glob
import os
import re
import sys

from symmtune import triallog

PEAK = 386.0  # GB/s
TARGETS = {4: {16 << 20: 75.0, 128 << 20: 540.0}}
LABELS = ("best", "overlap", "ce_ag")


def human(b):
    return f"{b >> 20} MiB" if b % (1 << 20) == 0 else f"{b} B"


def cfg_text(c):
    return ",".join(f"{k}={c[k]}" for k in sorted(c))


def read_log(path):
    """Last measurement per config, and the statuses of every trial."""
    last, statuses = {}, {}
    for t in triallog.read(path).results:  # a line cut short by a killed search is skipped
        st = t["status"]
        statuses[st] = statuses.get(st, 0) + 1
        if st == "ok":
            last[cfg_text(t["config"])] = (t["score_us"], bool(t.get("default")), t.get("rel_err"))
    return last, statuses


def main(d, world):
    sent = lambda s: 2 * s * (world - 1) / world
    peers = {}
    pp = os.path.join(d, f"peers-w{world}.csv")
    if os.path.exists(pp):
        for r in csv.reader(open(pp)):
            if len(r) == 4 and r[0] == "allreduce":
                try:
                    peers[(r[1], int(r[2]))] = float(r[3])
                except ValueError:
                    pass
    runs = {}
    for path in glob.glob(os.path.join(d, "speed-*-*.jsonl")):
        m = re.match(r"speed-(\d+)-(\w+)\.jsonl$", os.path.basename(path))
        if m:
            runs[(int(m.group(1)), m.group(2))] = read_log(path)
    print(f"# CUDA all-reduce, bf16, {world} GPUs: new options vs today's best and NCCL\n")
    print(f"µs: median over iterations of the per-iteration max across ranks (symmtune), max across ranks of "
          f"per-rank medians (NCCL). GB/s: 2·S·(W−1)/W bytes sent per GPU over the time; % of the {PEAK:.0f} GB/s "
          f"copy-engine peak.\n")
    print("| size | option | µs | GB/s sent per GPU | % of peak | target | config | trials (statuses) |")
    print("|---|---|---|---|---|---|---|---|")
    problems = []
    for size in sorted({s for s, _ in runs} | {s for _, s in peers if s in (16 << 20, 128 << 20)}):
        target = TARGETS.get(world, {}).get(size)
        rows = []
        default = None
        for label in LABELS:
            if (size, label) not in runs:
                rows.append((label, None, "not run", ""))
                continue
            last, statuses = runs[(size, label)]
            for st, n in statuses.items():
                if st != "ok":
                    problems.append(f"{human(size)} {label}: {n} trial(s) {st}")
            own = {c: v for c, v in last.items() if not v[1]}
            dflt = {c: v for c, v in last.items() if v[1]}
            if dflt and (default is None or label == "best"):
                default = min(((v[0], c) for c, v in dflt.items()))
            pick = own or (dflt if label == "best" else {})
            st_text = " ".join(f"{n} {st}" for st, n in sorted(statuses.items()))
            if not pick:
                rows.append((label, None, "no ok trial", st_text))
                continue
            us, c = min((v[0], c) for c, v in pick.items())
            rows.append((label, us, c, st_text))
        if default:
            rows.insert(0, ("default (untuned)", default[0], default[1], ""))
        nccl = peers.get(("nccl", size))
        rows.append(("NCCL", nccl, "", ""))
        for label, us, c, st_text in rows:
            if us is None:
                print(f"| {human(size)} | {label} | — | — | — | — | {c} | {st_text} |")
                continue
            gbs = sent(size) / us / 1e3
            tcell = "—" if target is None else (f"≤ {target:.0f}: " + ("met" if us <= target else f"missed by {us - target:.1f}"))
            cell = f"`{c}`" if c else ""
            print(f"| {human(size)} | {label} | {us:.1f} | {gbs:.0f} | {100 * gbs / PEAK:.0f}% | {tcell} | {cell} | {st_text} |")
        print(f"| {human(size)} | floor at {PEAK:.0f} GB/s | {sent(size) / PEAK / 1e3:.1f} | {PEAK:.0f} | 100% | | | |")
    print()
    if problems:
        print("**Trials that did not pass:** " + "; ".join(problems) + " (see the speed-*.txt search output).")
    else:
        print("Every trial passed its check against the float64 reference.")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

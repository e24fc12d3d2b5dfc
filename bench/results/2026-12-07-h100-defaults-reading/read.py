"""The untuned rule as on main against the best tile each 1 x H100 run of 2026-12-06 and 12-07 timed, read
afterwards from the results folders; no GPU (2026-12-06-h100-defaults-reading's read.py, over every such run):

  go build -tags cuda -o /tmp/gma ./bench/gemmalone        # from the checkout's root
  python3 read.py BENCH_RESULTS_DIR /tmp/gma

Every folder 2026-12-06-h100-* and 2026-12-07-h100-* with gemmalone CSVs (loose or in its tgz files) is read;
every shape and dtype a run timed with two or more tiles is a cell. A run's "default" tile is the rule's pick
of its day, so cells are read by tile name: today's pick (`gemmalone -list -defaults-on`) must be among the
named tiles timed, or the default where the run's own default was today's pick (gemmalone_table's Shape.default).
Kernels changed little in those two days (clusters of four came and went; no tile's code moved), so a cell is the
run's timing of today's tiles. Standard library only."""
import glob
import importlib.util
import os
import subprocess
import sys
import tarfile
import tempfile
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
CARD = "NVIDIA H100 80GB HBM3:132"
WITHIN = 0.03
# Runs of a bundle other than main's (a patched kernel or rule: dynamic scheduling, overlap, scales ahead,
# clusters of four, the evict-first and L2-promotion patches) are left out: their tiles are not main's.
NOT_MAIN = {"dyn", "ov", "ov-short", "scales-ahead", "cluster4", "ef-defaults-set", "ef-l2-heldout", "ef-l2-lower",
            "l2-promotion-heldout"}


def folder_csvs(folder: str, tmp: str) -> List[str]:
    name = os.path.basename(folder)
    for i, t in enumerate(sorted(glob.glob(os.path.join(folder, "*.tgz")))):
        with tarfile.open(t) as tf:
            tf.extractall(os.path.join(tmp, name, str(i)))  # this repository's own archives
    found = glob.glob(os.path.join(folder, "**", "gemmalone-*.csv"), recursive=True)
    found += glob.glob(os.path.join(tmp, name, "**", "gemmalone-*.csv"), recursive=True)
    return sorted(f for f in found if not os.path.basename(f).startswith("compile-"))


def main(argv: List[str]) -> int:
    results, gma = argv[0], argv[1]
    sys.path.insert(0, os.path.join(results, ".."))
    import gemmalone_table as gt

    picks: Dict[Tuple[str, str], str] = {}

    def pick(shape: str, dtype: str) -> str:
        if (shape, dtype) not in picks:
            out = subprocess.run([gma, "-list", "-shapes", shape, "-dtype", dtype, "-defaults-on", CARD],
                                 capture_output=True, text=True, check=True).stdout.split()
            picks[(shape, dtype)] = out[1]
        return picks[(shape, dtype)]

    timed: List[Tuple[str, str, str, str, float, str, float]] = []
    untimed: List[str] = []
    folders = sorted(glob.glob(os.path.join(results, "2026-12-0[67]-h100-*")))
    with tempfile.TemporaryDirectory() as tmp:
        for folder in folders:
            if not os.path.isdir(folder):
                continue
            run = os.path.basename(folder)[len("2026-12-0x-h100-"):]
            if run in NOT_MAIN:
                continue
            csvs = folder_csvs(folder, tmp)
            if not csvs:
                continue
            for (shape, dtype), s in gt.read(csvs).items():
                ratios: Dict[str, float] = {}
                for t in s.ratios:
                    r: Optional[float] = s.ratio(t)
                    if r is not None and t not in s.failed:
                        ratios[t if t != "default" else s.default] = r
                if len(ratios) < 2:
                    continue
                p = pick(shape, dtype)
                best, best_r = max(ratios.items(), key=lambda x: x[1])
                if p in ratios:
                    timed.append((run, shape, dtype, p, ratios[p], best, best_r))
                else:
                    untimed.append(f"{run} {shape} {dtype} ({p})")
    print("| run | shape | dtype | today's pick | its ratio | best timed | its ratio | gap |")
    print("|---|---|---|---|---|---|---|---|")
    for run, shape, dtype, p, r, best, br in sorted(timed, key=lambda x: x[4] / x[6]):
        print(f"| {run} | {shape} | {dtype} | `{p}` | {r:.3f} | `{best}` | {br:.3f} | {100 * (br / r - 1):+.1f}% |")
    within = sum(1 for x in timed if x[6] / x[4] - 1 <= WITHIN)
    print(f"\ntoday's pick within {WITHIN:.0%} of the best timed: {within} of {len(timed)} run-shape cells; "
          f"not timed in {len(untimed)} more: {'; '.join(untimed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

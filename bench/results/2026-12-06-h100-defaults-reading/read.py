"""The untuned rule as on main (with the H100's own tile factors) against the best tile each of the day's
1 x H100 runs timed (2026-12-06), read afterwards from the results folders; no GPU:

  go build -tags cuda -o /tmp/gma ./bench/gemmalone        # from the checkout's root
  python3 read.py BENCH_RESULTS_DIR /tmp/gma

Reads each listed run's gemmalone CSVs (unpacking its tgz files into a temporary folder), takes every
shape and dtype where the run timed two or more tiles, asks `gemmalone -list -defaults-on` for today's
pick on an H100, and prints, where the pick was timed, its ratio, the best tile's and the gap (issue 56's
"within 3%" bar); and the cells where the pick was not timed. Only runs of main's kernels (no patch
bundle) are read. Standard library only (bench/gemmalone_table.py reads the CSVs)."""
import glob
import os
import subprocess
import sys
import tarfile
import tempfile
from typing import Dict, List, Optional, Tuple

RUNS = ["tile-factors", "pp-group", "pp-group-fp8", "pp-rows", "wide-pick", "card-factors", "fp8-pp-large"]
CARD = "NVIDIA H100 80GB HBM3:132"
WITHIN = 0.03


def run_csvs(results: str, run: str, tmp: str) -> List[str]:
    folder = os.path.join(results, f"2026-12-06-h100-{run}")
    for i, t in enumerate(sorted(glob.glob(os.path.join(folder, "*.tgz")))):
        with tarfile.open(t) as tf:
            tf.extractall(os.path.join(tmp, run, str(i)))  # this repository's own archives
    found = glob.glob(os.path.join(folder, "**", "gemmalone-*.csv"), recursive=True)
    found += glob.glob(os.path.join(tmp, run, "**", "gemmalone-*.csv"), recursive=True)
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
    with tempfile.TemporaryDirectory() as tmp:
        for run in RUNS:
            for (shape, dtype), s in gt.read(run_csvs(results, run, tmp)).items():
                ratios: Dict[str, float] = {}
                for t in s.ratios:
                    r: Optional[float] = s.ratio(t)
                    if r is not None and t not in s.failed:
                        ratios[t] = r
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

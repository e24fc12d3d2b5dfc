"""The untuned rule as on main against the best tile each 1 x H100 run of 2026-12-06 and 12-07 timed, read
afterwards from the results folders; no GPU:

  go build -tags cuda -o /tmp/gma ./bench/gemmalone        # from the checkout's root
  python3 read.py BENCH_RESULTS_DIR /tmp/gma > reading.md

2026-12-06-h100-defaults-reading's read.py, unchanged, over every folder 2026-12-06-h100-* and 2026-12-07-h100-*
(its run column the folder's name) but those of a bundle other than main's (NOT_MAIN). Kernels changed little in
those two days (clusters of four came and went; no tile's code moved), so a cell is the run's timing of today's
tiles."""
import glob
import importlib.util
import os
import sys
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "defaults_reading", os.path.join(HERE, "..", "2026-12-06-h100-defaults-reading", "read.py"))
assert _spec is not None and _spec.loader is not None
first = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(first)

# Runs of a bundle other than main's (a patched kernel or rule: dynamic scheduling, overlap, scales ahead,
# clusters of four, the evict-first and L2-promotion patches) are left out: their tiles are not main's.
NOT_MAIN = {"dyn", "ov", "ov-short", "scales-ahead", "cluster4", "ef-defaults-set", "ef-l2-heldout", "ef-l2-lower",
            "l2-promotion-heldout"}


def run_csvs(results: str, run: str, tmp: str) -> List[str]:
    """first.run_csvs for a folder named in full."""
    folder = os.path.join(results, run)
    for i, t in enumerate(sorted(glob.glob(os.path.join(folder, "*.tgz")))):
        first.tarfile.open(t).extractall(os.path.join(tmp, run, str(i)))  # this repository's own archives
    found = glob.glob(os.path.join(folder, "**", "gemmalone-*.csv"), recursive=True)
    found += glob.glob(os.path.join(tmp, run, "**", "gemmalone-*.csv"), recursive=True)
    return sorted(f for f in found if not os.path.basename(f).startswith("compile-"))


def main(argv: List[str]) -> int:
    folders = sorted(glob.glob(os.path.join(argv[0], "2026-12-0[67]-h100-*")))
    first.RUNS = [os.path.basename(f) for f in folders
                  if os.path.isdir(f) and os.path.basename(f)[len("2026-12-0x-h100-"):] not in NOT_MAIN]
    first.run_csvs = run_csvs
    return int(first.main(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The rule of run.sh (beside this; written before the run): 1 s windows against the 2 s counts.

  python3 judge.py BENCH_RESULTS_DIR RUN_DIR

BENCH_RESULTS_DIR: bench/results (the 2 s shards' tgz files are read from it); RUN_DIR: run.sh's /tmp/w1
(bf16/ and row/, gemmalone-56.sh SET=bar's folders). Prints, per dtype, each shape's untuned tile in
both windows, the verdicts of Q0 and Q1, and the overall one. Standard library only
(bench/gemmalone_table.py reads the CSVs)."""
import glob
import os
import statistics
import sys
import tarfile
import tempfile
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import gemmalone_table  # noqa: E402

# dtype -> (the 2 s shards' tgz files under BENCH_RESULTS_DIR, the 1 s run's folder under RUN_DIR)
CASES = {"bf16": ("2026-12-06-h100-sustained-bf16/sus-bf16-1o6*.tgz", "bf16"),
         "e4m3_row": ("2026-12-06-h100-sustained-row/sus-e4m3_row-1o5.tgz", "row")}
MIN_SHAPES = 15
MEDIAN = (0.995, 1.005)
APART = 0.02


def ratios(paths: List[str], dtype: str) -> Tuple[Dict[str, Tuple[str, float]], List[str]]:
    """shape -> (its untuned tile, that tile's ratio to cuBLASLt, the geometric mean of its rounds), and the
    problems (WRONG or failed rows)."""
    out: Dict[str, Tuple[str, float]] = {}
    problems: List[str] = []
    for (shape, dt), s in gemmalone_table.read(paths).items():
        if dt != dtype:
            continue
        problems += [f"{shape} {t}: {why}" for t, why in s.failed.items()]
        r = s.ratio(s.default) if s.default else None
        if s.default and r is not None:
            out[shape] = (s.default, r)
    return out, problems


def count(rs: List[float]) -> Tuple[int, int]:
    return sum(1 for r in rs if r >= 1.0), sum(1 for r in rs if r >= 1.05)


def judge(dtype: str, two: Dict[str, Tuple[str, float]], one: Dict[str, Tuple[str, float]],
          problems: List[str]) -> bool:
    both = [s for s in one if s in two and one[s][0] == two[s][0]]
    moved = [s for s in one if s in two and one[s][0] != two[s][0]]
    print(f"## {dtype}: {len(one)} shapes in 1 s windows, {len(both)} compared"
          f"{f' ({len(moved)} left out: the pick moved)' if moved else ''}")
    print("| shape | untuned tile | 2 s | 1 s | 1 s / 2 s |")
    print("|---|---|---|---|---|")
    q = [one[s][1] / two[s][1] for s in both]
    for s, x in zip(both, q):
        print(f"| {s} | `{one[s][0]}` | {two[s][1]:.3f} | {one[s][1]:.3f} | {x:.3f} |")
    if problems or len(both) < MIN_SHAPES:
        print(f"Q0: {len(problems)} WRONG or failed rows, {len(both)} shapes compared (want 0 and {MIN_SHAPES} or "
              "more) -> no verdict\n")
        return False
    med = statistics.median(q)
    c1, c2 = count([one[s][1] for s in both]), count([two[s][1] for s in both])
    apart = sum(1 for x in q if abs(x - 1) > APART)
    ok = MEDIAN[0] <= med <= MEDIAN[1] and abs(c1[0] - c2[0]) <= 1 and abs(c1[1] - c2[1]) <= 1 \
        and apart <= len(both) // 10
    print(f"Q1: median 1 s / 2 s {med:.4f} (want {MEDIAN[0]}-{MEDIAN[1]}); at or above 1.00: {c1[0]} in 1 s, "
          f"{c2[0]} in 2 s; at 1.05: {c1[1]} and {c2[1]} (want each within one); more than {APART:.0%} apart: "
          f"{apart} (want at most {len(both) // 10}) -> {'passes' if ok else 'fails'}\n")
    return ok


def main(argv: List[str]) -> int:
    results, run = argv[0], argv[1]
    passed = []
    with tempfile.TemporaryDirectory() as tmp:
        for dtype, (tgz, sub) in CASES.items():
            for i, t in enumerate(sorted(glob.glob(os.path.join(results, tgz)))):
                with tarfile.open(t) as tf:
                    tf.extractall(os.path.join(tmp, dtype, str(i)))  # this repository's own archives
            two_paths = glob.glob(os.path.join(tmp, dtype, "**", f"gemmalone-{dtype}.csv"), recursive=True)
            one_paths = glob.glob(os.path.join(run, sub, "**", f"gemmalone-{dtype}.csv"), recursive=True)
            two, _ = ratios(two_paths, dtype)
            one, problems = ratios(one_paths, dtype)
            passed.append(judge(dtype, two, one, problems))
    if all(passed):
        print("verdict: both pass -> the counts' remaining shards run in 1 s windows")
    else:
        print("verdict: not both -> the counts stay in 2 s windows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Issue 57, 23rd fit: from a full TestTinyTrace log (seed 1 of bandit at a tenth of the 190-config spaces), how
often a run misses 3% by the rank of the optimum's class after the first pass, and how near the runner-up class is.

  python3 trace_classes.py TRACE.txt

A class is an algorithm (the first index); its first-pass value is the best of its configs the first pass measured
(the default's class: the default and its centre). The optimum's class is the best-ranked class holding a config
within 3% of the optimum."""
import collections
import re
import sys


def main(path: str) -> None:
    blocks = re.split(r"\n\s*== ", open(path).read())[1:]
    rows = []
    for b in blocks:
        lines = b.split("\n")
        kind = lines[0].split()[0].split("-")[1]
        won = "won true" in lines[0]
        hit_algos = {int(re.search(r"hit \[(\d+)", l).group(1)) for l in lines if l.strip().startswith("hit ")}
        cls = {}
        for l in lines:
            m = re.match(r"\s+\d+ first\s+\[([\d ]+)\] (\S+)", l)
            if m:
                idx = list(map(int, m.group(1).split()))
                s = float("inf") if m.group(2) == "fail" else float(m.group(2))
                cls[idx[0]] = min(cls.get(idx[0], float("inf")), s)
        vals = sorted(cls.values())
        opt = min(cls.get(a, float("inf")) for a in hit_algos)
        rank = vals.index(opt) if opt < float("inf") else len(vals)
        rows.append((kind, won, rank, vals[1] / vals[0]))
    print(f"{len(rows)} runs, {sum(not r[1] for r in rows)} miss 3%")
    for kind in ("slowdefault", "basins", "noisy", "interact", "all"):
        sel = [r for r in rows if kind == "all" or r[0] == kind]
        c = collections.Counter((r[2], r[1]) for r in sel)
        print(kind + ": " + ", ".join(f"optimum's class ranked {k + 1}: {c[(k, True)] + c[(k, False)]} runs, {c[(k, False)]} miss"
                                      for k in range(4)))
    for gap in (1.05, 1.1, 1.2):
        sel = [r for r in rows if r[3] <= gap]
        print(f"runner-up class within {gap - 1:.0%}: {len(sel)} runs; the optimum's class 2nd in {sum(r[2] == 1 for r in sel)}, "
              f"{sum(r[2] == 1 and not r[1] for r in sel)} of them miss; 1st in {sum(r[2] == 0 for r in sel)}, "
              f"{sum(r[2] == 0 and not r[1] for r in sel)} miss")


if __name__ == "__main__":
    main(sys.argv[1])

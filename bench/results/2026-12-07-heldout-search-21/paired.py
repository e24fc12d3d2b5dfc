"""Issue 57: a candidate's TestFitEval log against the baseline's, paired landscape by landscape (standard library).

  python3 paired.py BASELINE.log CANDIDATE.log

Reads the lines "NAME  VALID  A20 A10 A30" (runs of 10 within 3% of the optimum at a twentieth, a tenth and three
tenths; -1: not run) and prints, per share, the synthetic runs of each, the change, its paired z (the mean change
per synthetic landscape over its standard error, as the earlier pages report it), the landscapes up and down, the
change by kind and by space size (the 190-config spaces against the larger), and every recorded landscape that moved."""
import math
import re
import sys
from typing import Dict, Tuple

LINE = re.compile(r"^\s+(\S+)\s+(\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s*$")
SHARES = ("1/20", "1/10", "3/10")


def load(path: str) -> Dict[str, Tuple[int, int, int, int]]:
    out = {}
    for line in open(path):
        m = LINE.match(line)
        if m:
            name, valid, a20, a10, a30 = m.groups()
            out[name] = (int(valid), int(a20), int(a10), int(a30))
    return out


def main(base_path: str, cand_path: str) -> int:
    base, cand = load(base_path), load(cand_path)
    names = [n for n in base if n in cand]
    if not names or len(names) != len(base) or len(names) != len(cand):
        print(f"landscapes differ: {len(base)} and {len(cand)}, {len(names)} in both", file=sys.stderr)
        return 1
    synth = [n for n in names if n.startswith("synthetic-")]
    rec = [n for n in names if not n.startswith("synthetic-")]
    print(f"{len(synth)} synthetic landscapes, {len(rec)} recorded")
    for k, share in enumerate(SHARES, start=1):
        if any(base[n][k] < 0 or cand[n][k] < 0 for n in names):
            continue
        d = [cand[n][k] - base[n][k] for n in synth]
        total = sum(d)
        mean = total / len(d)
        var = sum((x - mean) ** 2 for x in d) / (len(d) - 1) if len(d) > 1 else 0.0
        z = mean / math.sqrt(var / len(d)) if var > 0 else 0.0
        by: Dict[str, int] = {}
        for n in synth:
            kind = n.split("-")[1]
            size = "190" if base[n][0] < 200 else "large"
            for key in (kind, size):
                by[key] = by.get(key, 0) + cand[n][k] - base[n][k]
        print(f"{share}: synthetic {sum(base[n][k] for n in synth)} -> {sum(cand[n][k] for n in synth)} "
              f"({total:+d}, z {z:.2f}, {sum(x > 0 for x in d)} up, {sum(x < 0 for x in d)} down); "
              + ", ".join(f"{key} {v:+d}" for key, v in sorted(by.items())))
        print(f"      recorded {sum(base[n][k] for n in rec)} -> {sum(cand[n][k] for n in rec)}"
              + "".join(f"; {n} {base[n][k]} -> {cand[n][k]}" for n in rec if base[n][k] != cand[n][k]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

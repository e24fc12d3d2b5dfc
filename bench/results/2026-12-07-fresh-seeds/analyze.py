"""Issue 57's bars on fresh synthetic seeds, from TestFitEval's log (standard library).

  python3 analyze.py fresh.log [more.log ...]

Reads the lines "synthetic-KIND-SPACE-seedN  VALID  A20 A10 A30" (runs of 10 within 3% of the optimum at a
twentieth, a tenth and three tenths of the valid configs) and counts the landscapes that meet issue 57's bars:
9 of 10 at a tenth and 7 at a twentieth (every landscape of 100+ configs), deceptive ones 6 at a tenth and 9 at
three tenths. Grouped by kind, and by the 190-config spaces against the larger ones."""
import re
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

LINE = re.compile(r"synthetic-(\w+)-(\w+)-seed(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)")


def bars(kind: str, a20: int, a10: int, a30: int) -> List[Tuple[str, bool]]:
    if kind == "deceptive":
        return [("1/10", a10 >= 6), ("3/10", a30 >= 9)]
    return [("1/20", a20 >= 7), ("1/10", a10 >= 9)]


def main(paths: List[str]) -> int:
    rows: List[Tuple[str, str, int, int, int, int, int]] = []
    for p in paths:
        for line in open(p):
            m = LINE.search(line)
            if m:
                kind, space, seed, valid, a20, a10, a30 = m.groups()
                rows.append((kind, space, int(seed), int(valid), int(a20), int(a10), int(a30)))
    if not rows:
        print("no landscapes in", paths, file=sys.stderr)
        return 1
    seeds = sorted({r[2] for r in rows})
    print(f"{len(rows)} landscapes, seeds {seeds[0]}..{seeds[-1]} ({len(seeds)})")
    runs = [sum(r[4] for r in rows), sum(r[5] for r in rows), sum(r[6] for r in rows)]
    print(f"runs within 3% (of {10 * len(rows)}): 1/20 {runs[0]}, 1/10 {runs[1]}, 3/10 {runs[2]}")
    met: Dict[Tuple[str, str], List[int]] = defaultdict(lambda: [0, 0])
    misses = []
    for kind, space, seed, valid, a20, a10, a30 in rows:
        size = "190" if valid < 200 else "1,182-1,990"
        for bar, ok in bars(kind, a20, a10, a30):
            for key in ((kind, bar), ("all, " + size, bar), ("all", bar)):
                met[key][0] += int(ok)
                met[key][1] += 1
            if not ok:
                got = {"1/20": a20, "1/10": a10, "3/10": a30}[bar]
                misses.append(f"{kind}-{space}-seed{seed} ({valid}): {bar} {got}")
    print("\n| landscapes | bar | met |\n|---|---|---|")
    for (group, bar), (hit, n) in sorted(met.items()):
        print(f"| {group} | {bar} | {hit} of {n} |")
    print(f"\nmissed bars ({len(misses)}):")
    for miss in misses:
        print(" ", miss)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

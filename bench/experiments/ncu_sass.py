"""Where a kernel's warps spend their time, from Nsight Compute's SASS
source page (bench/experiments/ncu-gemm.sh writes it: `ncu --import R --page source
--print-source sass --csv`): the warp-state samples of every instruction,
summed by stall reason, by how often the instruction ran, and the top
instructions.

Grouping by execution count tells a persistent GEMM's parts apart without
reading the SASS: the main loop's instructions run once per k-block and
warp (tiles x k-blocks x consumer warps), the epilogue's once per tile and
warp, the producer's once per k-block, the setup once per CTA.

    python3 bench/experiments/ncu_sass.py OUT/ncu/ours-128x256_s4_c2_g8-sass.csv [--top N]
"""
from __future__ import annotations

import argparse
import collections
import csv
from dataclasses import dataclass

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


@dataclass
class Instruction:
    index: int
    source: str
    samples: int
    executed: int
    stalls: dict[str, int]


def read(path: str) -> list[Instruction]:
    """The instructions of the page's kernel. The page's first row names
    the kernel, the second is the header."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2 or SAMPLES not in rows[1]:
        raise ValueError(f"{path}: not an ncu SASS source page (no {SAMPLES!r} column)")
    header = rows[1]
    col = {h: i for i, h in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]

    def num(row: list[str], name: str) -> int:
        v = row[col[name]].replace(",", "")
        return int(v) if v.isdigit() else 0

    out = []
    for i, row in enumerate(rows[2:]):
        if len(row) < len(header):
            continue
        out.append(Instruction(i, row[col["Source"]].strip(), num(row, SAMPLES), num(row, EXECUTED),
                               {r[len("stall_"):]: num(row, r) for r in reasons}))
    return out


def by_executed(instrs: list[Instruction]) -> list[tuple[int, int, int]]:
    """(execution count, instructions, samples), most samples first."""
    samples: collections.Counter[int] = collections.Counter()
    count: collections.Counter[int] = collections.Counter()
    for x in instrs:
        samples[x.executed] += x.samples
        count[x.executed] += 1
    return [(e, count[e], s) for e, s in samples.most_common()]


def by_reason(instrs: list[Instruction]) -> list[tuple[str, int]]:
    total: collections.Counter[str] = collections.Counter()
    for x in instrs:
        total.update(x.stalls)
    return [(r, s) for r, s in total.most_common() if s]


def report(instrs: list[Instruction], top: int) -> str:
    total = sum(x.samples for x in instrs) or 1
    pct = lambda s: f"{100 * s / total:5.1f}%"  # noqa: E731
    lines = [f"{total} samples over {len(instrs)} instructions",
             "by stall reason: " + ", ".join(f"{r} {pct(s).strip()}" for r, s in by_reason(instrs)[:8]),
             "by execution count (instructions that ran equally often are one part of the kernel):"]
    lines += [f"  executed {e:>10d}  {n:5d} instructions  {pct(s)}" for e, n, s in by_executed(instrs)[:8]]
    lines.append(f"top {top} instructions:")
    for x in sorted(instrs, key=lambda x: -x.samples)[:top]:
        why = ", ".join(f"{r} {s}" for r, s in sorted(x.stalls.items(), key=lambda kv: -kv[1])[:2] if s)
        lines.append(f"  {pct(x.samples)} #{x.index:<5d} executed {x.executed:>9d}  {x.source[:60]:60s} {why}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    print(report(read(args.csv), args.top))


if __name__ == "__main__":
    main()

"""The rule of run.sh (beside this; written before the run): python3 judge.py shapes.txt CSV...

The shapes where the candidate changes the pick (pick.fills) are judged by card-factors-2's judge, its rule
unchanged (per dtype: no WRONG or failed row and the twin as gemmalone's default; 8 or more timed; NEW over OLD
at or above on two thirds, geometric mean at least 1.02, none below 0.95). The controls, where the candidate
keeps the twin, are printed as a table with their geometric mean: read, not judged."""
import importlib.util
import os
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name: str, path: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


cf2 = _load("cf2_judge", os.path.join(HERE, "..", "2026-12-06-h100-card-factors-2", "judge.py"))
pick = _load("fill_pick", os.path.join(HERE, "pick.py"))
cf2.PART.update({d: "128x256 in clusters of two where its tiles fill the H100, rows off sectors, 256-768 rows"
                 for d in ("e4m3", "bf16")})


def main(argv: List[str]) -> int:
    judged: Dict[str, Dict[str, Tuple[str, str]]] = defaultdict(dict)
    controls: Dict[str, Dict[str, Tuple[str, str]]] = defaultdict(dict)
    for line in open(argv[0]):
        if line.strip():
            dtype, shape, old, new = line.split()
            m, n, _ = (int(x) for x in shape.split("x"))
            (judged if pick.fills(m, n) else controls)[dtype][shape] = (old, new)
    by = cf2.gemmalone_table.read(argv[1:])
    for dtype in ("e4m3", "bf16"):
        shapes = {s.shape: s for (_, dt), s in by.items() if dt == cf2.TIMED_AS[dtype]}
        cf2.judge(dtype, judged[dtype], shapes)
        print(f"### {dtype} controls (the candidate keeps the twin; read, not judged)")
        print("| shape | OLD / cuBLASLt | NEW / cuBLASLt | NEW / OLD |")
        print("|---|---|---|---|")
        gains: List[float] = []
        for shape, (old, new) in controls[dtype].items():
            s = shapes.get(shape)
            if s is None:
                print(f"| {shape} | not timed | | |")
                continue
            g = cf2.over(s.ratio(new), s.ratio(old))
            if g is not None:
                gains.append(g)
            print(f"| {shape} | {cf2.fmt(s.ratio(old))} | {cf2.fmt(s.ratio(new))} | {cf2.fmt(g)} |")
        print(f"\ncontrols ({dtype}): {len(gains)} timed, NEW over OLD geometric mean {cf2.fmt(cf2.geomean(gains))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

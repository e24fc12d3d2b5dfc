"""The rule of run.sh (beside this; written before the run): python3 judge.py shapes.txt CSV...

offsector-fill's judge, its rule unchanged: the shapes where the candidate changes the pick (this plan's
pick.fills) are judged by card-factors-2's judge (per dtype: no WRONG or failed row and the ping-pong tile as
gemmalone's default; 8 or more timed; NEW over OLD at or above on two thirds, geometric mean at least 1.02, none
below 0.95); the controls, where the candidate keeps the ping-pong tile, are printed and read, not judged. Only
the threshold (pick.fills) and the candidate's name are this plan's."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name: str, path: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fill = _load("fill_judge", os.path.join(HERE, "..", "2026-12-07-h100-offsector-fill", "judge.py"))
setattr(fill, "pick", _load("wide_fill_pick", os.path.join(HERE, "pick.py")))
fill.cf2.PART.update({d: "128x224:s5:c2:g16 for the ping-pong tile where its tiles fill the H100, rows off "
                      "128-byte lines, 256-512 rows" for d in ("e4m3", "bf16")})

if __name__ == "__main__":
    sys.exit(fill.main(sys.argv[1:]))

"""The rule of run.sh (beside this; written before the run): python3 judge.py shapes.txt CSV...

card-factors-2's judge, its rule unchanged (per dtype: no WRONG or failed row and the ping-pong tile as
gemmalone's default; 8 or more timed; NEW over OLD at or above on two thirds, geometric mean at least 1.02, none
below 0.95); only the candidate's name is this plan's."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "cf2_judge", os.path.join(HERE, "..", "2026-12-06-h100-card-factors-2", "judge.py"))
assert _spec is not None and _spec.loader is not None
cf2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cf2)
cf2.PART.update({d: "128x224:s5:c2:g16 for the ping-pong tile, rows off sectors, 257-384 rows, on the H100"
                 for d in ("e4m3", "bf16")})

if __name__ == "__main__":
    sys.exit(cf2.main(sys.argv[1:]))

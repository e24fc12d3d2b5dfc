"""card-factors-2's judge.py (its rule unchanged), titled for this plan: python3 judge.py shapes.txt CSV..."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "cf2_judge", os.path.join(HERE, "..", "2026-12-06-h100-card-factors-2", "judge.py"))
assert _spec is not None and _spec.loader is not None
cf2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cf2)
cf2.PART.update({"e4m3": "128x256 in clusters of two at 1,024 rows off 32-byte sectors",
                 "bf16": "128x256 in clusters of two at 1,024 rows off 32-byte sectors"})

if __name__ == "__main__":
    sys.exit(cf2.main(sys.argv[1:]))

"""The H100 offsector plan's judge.py (card-factors-2's rule, unchanged), titled for the H200:
python3 judge.py shapes.txt CSV..."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "offsector_judge", os.path.join(HERE, "..", "2026-12-07-h100-offsector-cl2", "judge.py"))
assert _spec is not None and _spec.loader is not None
h100 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h100)
for dtype in ("e4m3", "bf16"):
    h100.cf2.PART[dtype] += " (H200)"

if __name__ == "__main__":
    sys.exit(h100.cf2.main(sys.argv[1:]))

"""How run.sh's held-out shapes were chosen (2026-12-07 10:00 UTC, before any run), for the record:

  python3 pick.py grid-pp.txt.gz > shapes.txt

grid-pp.txt.gz: lines "DTYPE MxNxK TILE rowbytes%128=R", the 1,456 shapes where main's untuned rule (at
7153880) picks 128x128:s6:c2:g4:pp on an H200 (132 SMs, "NVIDIA H200": no card rule) with rows off 32-byte
sectors: M 256-1,024 in steps of 256, N 2,048-36,864 in steps of 1,024, K of 128 j + R bytes a row (R 16,
48, 80, 112; j in {16, 24, 32, 48, 64, 96, 112}), bf16 and e4m3, printed by a throwaway Go test calling
gpu.DefaultTile. The H100 plan's pick.py chooses, with this folder and salt: the scope is the H100's
(2026-12-07-h100-offsector-cl2.md), judged on the H200 by shapes of its own: per dtype and M, the first
shapes by the SHA-1 of "offsector-h200 DTYPE MxNxK", skipping every N among issue 56's set's sizes and
every shape a shapes.txt under bench/results/ lists (at 10:00: PLANNED-cluster4's came later and shares
none with this list): e4m3 three a M, bf16 two."""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "offsector_pick", os.path.join(HERE, "..", "2026-12-07-h100-offsector-cl2", "pick.py"))
assert _spec is not None and _spec.loader is not None
h100 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h100)
setattr(h100, "HERE", HERE)
setattr(h100, "SALT", "offsector-h200")

if __name__ == "__main__":
    h100.main(sys.argv[1])

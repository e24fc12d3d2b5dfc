"""Answers lookup queries with symmtune.lookup, for the Go/Python parity test
(cmd/symmtune/parity_test.go): reads a JSON list of queries on stdin and
writes one JSON answer per query, in order, on stdout: the object `symmtune
lookup --json` prints, or {"error": "not_found" | "corrupt" | ...}.

A query: {"kernel", "world", "dtype", "shape", "cache", "backend" (or null),
"kernel_version" (or null), "hardware": a hardware_info object, or "any"}.
"""

import json
import sys

import symmtune
from symmtune.hardware import Fingerprint


def answer(q: dict) -> dict:
    hw = q["hardware"]
    if isinstance(hw, dict):
        hw = Fingerprint(**hw)
    try:
        m = symmtune.lookup(q["kernel"], q["world"], q["dtype"], q["shape"], backend=q["backend"],
                            cache=q["cache"], kernel_version=q["kernel_version"], hardware=hw)
    except symmtune.NoTunedConfig:
        return {"error": "not_found"}
    except symmtune.CacheError as e:
        return {"error": "corrupt", "message": str(e)}
    return m.to_json()


if __name__ == "__main__":
    json.dump([answer(q) for q in json.load(sys.stdin)], sys.stdout)

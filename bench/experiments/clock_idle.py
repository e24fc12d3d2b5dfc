"""Issue 57: how long a fixed load must run before a trial for the trial to
time a kernel at the clock a busy GPU holds, after the GPU sat idle for a
given gap (the host compiling or verifying the next config). This sizes the
loaded trial timing's warm-up (symm/cudamem's SYMMTUNE_LOAD_WARM, default 150 ms).

    python bench/experiments/clock_idle.py --out DIR [--rounds 2]

Probe: a bf16 product (default 8192 x 3584 x 8192, and 64 x 8192 x 8192),
each timed call after one load product (4096^3 bf16), as a loaded trial
times it. The reference is the probe after 1 s of load (the cap's clock).
Each cell: sync, sleep GAP ms (GPU idle), load for WARM ms, then 20 timed
calls; the cell's median over the reference's median. Cells run in a
shuffled order, ROUNDS times. Writes DIR/clock-idle.json and prints a table
of ratios (1.00: the cap's clock reached; below: faster, a boost burst).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

import torch

GAPS_MS = (0, 5, 20, 50, 100, 300, 1000)
WARMS_MS = (0, 5, 10, 25, 50, 100, 150)


def sm_clock() -> int:
    try:
        import pynvml  # type: ignore[import-not-found]
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return int(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM))
    except Exception:  # noqa: BLE001 - a reading only
        return -1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    dev = torch.device("cuda", 0)
    g = torch.Generator(device=dev).manual_seed(1)

    def rnd(m: int, n: int) -> torch.Tensor:
        return torch.randn(m, n, device=dev, dtype=torch.bfloat16, generator=g)

    la, lb = rnd(4096, 4096), rnd(4096, 4096)
    probes = {"8192x3584x8192": (rnd(8192, 8192), rnd(8192, 3584)),
              "64x8192x8192": (rnd(64, 8192), rnd(8192, 8192))}

    def load_once() -> None:
        torch.mm(la, lb)

    for _ in range(3):  # the first product also loads cuBLAS's kernel: untimed
        load_once()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(50):
        load_once()
    torch.cuda.synchronize()
    per_load_ms = (time.perf_counter() - t0) * 1000 / 50

    def load_for(ms: float) -> None:
        for _ in range(int(ms / per_load_ms)):
            load_once()

    def timed(a: torch.Tensor, b: torch.Tensor) -> float:
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(args.iters)]
        for s, e in evs:
            load_once()
            s.record()
            torch.mm(a, b)
            e.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in evs)

    cells = [(p, gap, warm) for p in probes for gap in GAPS_MS for warm in WARMS_MS]
    results: dict[str, list[float]] = {}
    refs: dict[str, list[float]] = {p: [] for p in probes}
    clocks: dict[str, list[int]] = {}
    for r in range(args.rounds):
        for p, (a, b) in probes.items():
            load_for(1000)
            refs[p].append(timed(a, b))
        random.Random(r).shuffle(cells)
        for p, gap, warm in cells:
            a, b = probes[p]
            torch.cuda.synchronize()
            time.sleep(gap / 1000)
            load_for(warm)
            t = timed(a, b)
            key = f"{p} gap={gap} warm={warm}"
            results.setdefault(key, []).append(t)
            clocks.setdefault(key, []).append(sm_clock())
    ref = {p: statistics.median(v) for p, v in refs.items()}
    table = []
    for p in probes:
        print(f"\n{p}: reference (after 1 s of load) {ref[p] * 1000:.1f} us; cell median / reference")
        print("gap ms \\ warm ms " + " ".join(f"{w:>6}" for w in WARMS_MS))
        for gap in GAPS_MS:
            row = [statistics.median(results[f"{p} gap={gap} warm={w}"]) / ref[p] for w in WARMS_MS]
            table.append({"probe": p, "gap_ms": gap, "ratios": row})
            print(f"{gap:>16} " + " ".join(f"{x:6.3f}" for x in row))
    with open(os.path.join(args.out, "clock-idle.json"), "w") as f:
        json.dump({"per_load_ms": per_load_ms, "reference_ms": ref, "refs": refs, "cells": results,
                   "sm_clock_after": clocks, "table": table}, f, indent=1)


if __name__ == "__main__":
    main()

"""bench/experiments/fp8_timeline.py: the GPU timeline of symmtune's FP8 call beside
_scaled_mm's, each queued as bench/torch_fp8.py's time queues it (an NCCL
barrier and a device sleep first), recorded by torch.profiler (CUPTI: it
sees the kernels, copies and memsets the Go runtime launches in torch's
context too). For each queued call it prints, per rank, every GPU operation
between the sleep's end and the next barrier: its start after the sleep,
its duration, its stream and name; then a summary: how long after the
sleep the first operation starts and the last ends, and the longest
kernel (the product) on its own.

    PYTHONPATH=python:bench torchrun --nproc-per-node 2 bench/experiments/fp8_timeline.py [--kernel matmulrs]
        [--shape 8192x3584x8192] [--scales tensor] [--rounds 8]

Run with symmtune.torch's environment (SYMMTUNE_LIB, SYMMTUNE_CACHE) and
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile

import torch
import torch.distributed as dist

from peer_method import queue_behind_barrier
from torch_fp8_cases import Case, scaled_mm


def gpu_events(path: str) -> list[dict]:
    """The trace's GPU operations (kernels, copies, memsets), by start."""
    with open(path) as f:
        trace = json.load(f)
    evs = [e for e in trace.get("traceEvents", [])
           if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    return sorted(evs, key=lambda e: float(e["ts"]))


def windows(evs: list[dict]) -> list[tuple[float, list[dict]]]:
    """Each queued call: the sleep's end and the operations after it up to
    the next NCCL kernel (the next call's barrier)."""
    out: list[tuple[float, list[dict]]] = []
    cur: tuple[float, list[dict]] | None = None
    for e in evs:
        name = e["name"]
        if "spin" in name.lower() or "sleep" in name.lower():
            cur = (float(e["ts"]) + float(e["dur"]), [])
            out.append(cur)
        elif name.startswith("nccl"):
            cur = None
        elif cur is not None:
            cur[1].append(e)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="matmulrs", choices=["matmulrs", "agmm"])
    ap.add_argument("--shape", default="8192x3584x8192")
    ap.add_argument("--scales", default="tensor", choices=["tensor", "row"])
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    m, n, k = (int(x) for x in args.shape.split("x"))
    c = Case(args.kernel, m, n, k, args.scales == "row")
    c.fill(3)
    a, sa = c.gathered()
    fns = {"scaled_mm": lambda: scaled_mm(c.a if args.kernel == "matmulrs" else a, c.b,
                                          c.a_scale if args.kernel == "matmulrs" else sa, c.b_scale),
           "symmtune": c.ours}
    wait = queue_behind_barrier()
    for _ in range(5):
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    dist.barrier()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(args.rounds):
            for f in fns.values():
                wait()
                f()
        torch.cuda.synchronize()
    path = os.path.join(tempfile.gettempdir(), f"fp8-timeline-r{rank}.json")
    prof.export_chrome_trace(path)
    dist.barrier()
    lines = [f"== rank {rank}: {c.label()}, {args.rounds} rounds"]
    firsts: dict[str, list[float]] = {}
    ends: dict[str, list[float]] = {}
    longest: dict[str, list[float]] = {}
    names = list(fns)
    for i, (start, ops) in enumerate(windows(gpu_events(path))):
        kind = names[i % len(names)]  # the calls alternate as queued above
        if not ops:
            lines.append(f"-- {kind}: no GPU operation after the sleep")
            continue
        lines.append(f"-- {kind} (after the sleep, µs: start, duration, stream, name)")
        for o in ops:
            lines.append(f"   {float(o['ts']) - start:8.1f} {float(o['dur']):8.1f} s{o.get('args', {}).get('stream', '?')} "
                         f"{o['cat'][:6]} {o['name'][:70]}")
        firsts.setdefault(kind, []).append(float(ops[0]["ts"]) - start)
        ends.setdefault(kind, []).append(max(float(o["ts"]) + float(o["dur"]) for o in ops) - start)
        longest.setdefault(kind, []).append(max((float(o["dur"]) for o in ops if o["cat"] == "kernel"), default=0.0))
    for kind in firsts:
        lines.append(f"summary rank {rank} {kind}: first op {statistics.median(firsts[kind]):.1f} µs after the sleep, "
                     f"last ends {statistics.median(ends[kind]):.1f}, longest kernel {statistics.median(longest[kind]):.1f} "
                     f"(medians over {len(firsts[kind])} calls)")
    for r in range(dist.get_world_size()):
        if r == rank:
            print("\n".join(lines), flush=True)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    for var, val in (("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NCCL_NVLS_ENABLE", "0"),
                     ("NVSHMEM_DISABLE_NVLS", "1")):
        os.environ.setdefault(var, val)
    main()

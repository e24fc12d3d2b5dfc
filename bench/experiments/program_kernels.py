"""What the GPU runs, and for how long, when a torch program calls
symmtune.torch with each of several forced configs (issue 56): the kernels'
own times inside the program, free of the host's launch path, so that a
program's order of configs can be put beside bin/gemmalone's.

    PYTHONPATH=python:bench:bench/experiments torchrun --nproc-per-node 1 \
        bench/experiments/program_kernels.py --configs FILE [--rounds 20] [--json OUT]

FILE is bench/torch_paired.py's --configs list (entries with "kernel",
"shape", "config" and optionally "dtype" and "label"). For each (kernel,
shape, dtype) cell, torch.mm (or _scaled_mm for FP8) and every config run in
interleaved rounds, the order rotating by round, each call queued behind a
device sleep (torch.cuda._sleep) so that the host has enqueued it before the
GPU reaches it. The calls run under torch.profiler (CUPTI), which records
every kernel, copy and set of the process whichever API launched it (the
runtime's kernels are launched from Go through the driver). The sleep
kernels cut the trace into one segment per call; each call's figures are
its span (first start to last end on the GPU) and its busy time (the sum of
its operations' durations). Printed: per config, the median span and its
median ratio to mm's span in the same round, the median busy time and the
kernels it ran. World 1 only (no barrier between ranks is queued).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

from peer_method import QUEUE_CYCLES
from symmtune import _torch_gemm
from torch_gemm import join_group, reset
from torch_paired import cell_fns, cells_of
from trace_timeline import call_times, gpu_events, sleep_segments

TOL = 2e-2  # bf16 and FP8 products of K up to 16384 against cuBLAS's, fp32 accumulation both


def short(name: str) -> str:
    """A kernel's name cut to 60 characters for the table."""
    return name if len(name) <= 60 else name[:57] + "..."


def product(out: object, shape: torch.Size) -> torch.Tensor:
    """The [M, N] product among what a call returned (a tensor, or a tuple
    holding one)."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    found = [t for t in outs if isinstance(t, torch.Tensor) and t.shape == shape]
    if not found:
        raise SystemExit(f"program_kernels: no {tuple(shape)} product among a call's results")
    return found[-1]


def check(fns: dict) -> dict[str, float]:
    """Every call's relative error (Frobenius) against mm's product on the
    same operands (random, filled once per cell): {name: error}. The
    product of a first call is filled with NaN before the checked call, so
    an op that hands back the same output buffer without writing it fails."""
    ref = fns["mm"]().float()
    errs = {}
    for name, f in fns.items():
        product(f(), ref.shape).fill_(float("nan"))
        got = product(f(), ref.shape).float()
        errs[name] = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
    return errs


def profile_cell(fns: dict, rounds: int, trace: str) -> dict[str, list[list[dict]]]:
    """fns called in rotating interleaved rounds under the profiler, each
    behind a device sleep: {name: its calls' segments}."""
    names = list(fns)
    for _ in range(3):  # first calls open runners and compile: outside the trace
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    order = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(rounds):
            for name in names[i % len(names):] + names[:i % len(names)]:
                torch.cuda._sleep(QUEUE_CYCLES)
                fns[name]()
                order.append(name)
        torch.cuda.synchronize()
    prof.export_chrome_trace(trace)
    segs = sleep_segments(gpu_events(trace))
    if len(segs) != len(order):
        raise SystemExit(f"program_kernels: {len(segs)} sleep-separated segments in the trace for {len(order)} calls")
    out: dict[str, list[list[dict]]] = {n: [] for n in names}
    for name, seg in zip(order, segs):
        out[name].append(seg)
    return out


def summarize(calls: dict[str, list[list[dict]]]) -> dict[str, dict]:
    """Per name: median span and busy µs, the median over rounds of its span
    over mm's in the same round, and its kernels (name: count a call,
    median µs)."""
    spans = {n: [call_times(s)[0] for s in segs] for n, segs in calls.items()}
    out = {}
    for n, segs in calls.items():
        kernels: dict[str, list[float]] = {}
        for s in segs:
            for e in s:
                kernels.setdefault(short(e["name"]), []).append(e["dur"])
        out[n] = {
            "span_us": statistics.median(spans[n]),
            "busy_us": statistics.median(call_times(s)[1] for s in segs),
            "ratio_to_mm": statistics.median(a / b for a, b in zip(spans[n], spans["mm"]) if b > 0),
            "kernels": {k: {"per_call": len(v) / len(segs), "median_us": statistics.median(v)}
                        for k, v in kernels.items()},
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", required=True, help="bench/torch_paired.py's --configs list")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json", default="", help="also write every cell's summary to this file")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: want 1 or more")
    rank, world, g = join_group()
    if world != 1:
        raise SystemExit(f"program_kernels: world {world}: runs at world 1 only (no barrier between ranks is queued)")
    with open(args.configs) as f:
        entries = json.load(f)
    todo = [(c["kernel"], c["shape"], c["config"], c.get("dtype", "bf16"), c.get("label", "")) for c in entries]
    print(f"{torch.cuda.get_device_name()}; GPU µs of each call in a torch program, median of {args.rounds} "
          "interleaved rounds, each call behind a device sleep; span = first start to last end, busy = sum of "
          "its operations; ratio = median over rounds of span / mm's span", flush=True)
    print("| kernel | M x N x K | config | span | ratio to mm | busy | rel. error | kernels (per call: median µs) |")
    print("|---|---|---|---|---|---|---|---|")
    rows, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for (kernel, shape, dtype), cfgs in cells_of(todo).items():
            fns, cfgs = cell_fns(kernel, shape, dtype, cfgs, rank, world, g)
            fns = {n: f for n, f in fns.items() if n == "mm" or n.startswith("c")}
            errs = check(fns)
            summary = summarize(profile_cell(fns, args.rounds, os.path.join(tmp, "trace.json")))
            _torch_gemm.forced.clear()
            reset()
            labels = {"mm": "mm alone", **{f"c{i}": label for i, (_, label) in enumerate(cfgs)}}
            for n, s in summary.items():
                ks = ", ".join(f"{k} x{v['per_call']:.3g}: {v['median_us']:.1f}" for k, v in s["kernels"].items())
                print(f"| {kernel} {dtype} | {shape} | {labels[n]} | {s['span_us']:.1f} | {s['ratio_to_mm']:.3f} | "
                      f"{s['busy_us']:.1f} | {errs[n]:.1e} | {ks} |", flush=True)
                rows.append({"kernel": kernel, "shape": shape, "dtype": dtype, "label": labels[n], "rel_err": errs[n], **s})
            bad = {labels[n]: e for n, e in errs.items() if not e <= TOL}
            if bad:
                failed.append(f"{kernel} {dtype} {shape}: {bad}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if failed:
        raise SystemExit("program_kernels: products off mm's by more than " + f"{TOL}: " + "; ".join(failed))


if __name__ == "__main__":
    main()

"""The fused GEMMs' ratio to cuBLAS mm alone, measured paired: torch.mm on
the full product, symmtune.torch with a given fused config and torch's own
fused symm_mem op, interleaved call by call (peer_method.bench_paired), so
each ratio compares calls that met the same clocks.

    PYTHONPATH=python:bench torchrun --nproc-per-node W bench/torch_paired.py [--rounds N] [--configs FILE [--together]] [--queued]

--configs: a JSON list of {"kernel", "shape": "MxNxK", "config": {...}}
(a config as the cache holds it); the default is the best fused configs of
bench/results/2026-11-23-h200x2-gemm-fused9.md. --tuned SHAPES instead
lets symmtune.torch choose, from SYMMTUNE_CACHE, for both kernels at each
of SHAPES (MxNxK,...): what a user's program gets. The whole list runs
twice: the second pass shows whether the ratios hold as the GPUs warm.
--together times all configs of a (kernel, shape) in the same rounds (one
runner each), for ordering configs closer than the clocks' drift between
separate bench_paired runs (issue 44: 6% pass to pass, 2026-11-28).
"""
import contextlib
import argparse
import json

import torch
import torch.distributed as dist

from peer_method import bench_paired
from symmtune import _torch_gemm, gemm
from torch_gemm import forced, reset
from torch_gemm import inputs, join_group, ours

# The parameters that tell a chosen config apart in the table.
SHOWN = ("impl", "chunks", "direction", "push", "reduce", "graph")

BEST_2XH200 = [
    ("agmm", "4096x1792x4096", {"impl": "fused:64x224:s6:c2:g8:pp", "chunks": 2, "direction": "push", "graph": 1}),
    ("agmm", "8192x3584x8192", {"impl": "fused:128x256:s4:c2:g4", "chunks": 2, "direction": "push", "graph": 0}),
    ("agmm", "16384x3584x8192", {"impl": "fused:128x224:s5:c2:g4", "chunks": 8, "direction": "push", "graph": 1}),
    ("matmulrs", "4096x1792x4096", {"impl": "fused:128x224:s4:c2:g8", "chunks": 1, "reduce": "epilogue", "graph": 1}),
    ("matmulrs", "8192x3584x8192", {"impl": "fused:128x256:s4:c2:g4", "chunks": 4, "reduce": "kernel", "graph": 1}),
    ("matmulrs", "16384x3584x8192", {"impl": "fused:128x256:s4:c2:g8", "chunks": 4, "reduce": "kernel", "graph": 1}),
]


def peers(kernel, m, n, k, world, rank, g):
    """This rank's operands of an m x n x k problem (B a dense [N, K]'s
    transpose) and the calls every ratio is against: cuBLAS mm on the full
    product ("mm", the base) and torch's fused symm_mem op ("torch")."""
    a, b = inputs(kernel, m, n, k, world, rank, 5)
    bt = b.t().contiguous().t()
    full_a = torch.empty(m, k, dtype=a.dtype, device="cuda")
    if kernel == gemm.AGMM:
        dist.all_gather_into_tensor(full_a, a)
    else:
        full_a.copy_(a)
    fns = {"mm": lambda: torch.mm(full_a, bt)}
    if kernel == gemm.AGMM:
        fns["torch"] = lambda: torch.ops.symm_mem.fused_all_gather_matmul(a, [bt], 0, g)
    else:
        fns["torch"] = lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, bt, "sum", 0, g)
    return a, bt, fns


def together(todo, p, rank, world, g, rounds, queued):
    """Pass p of --together: for each (kernel, shape) of todo, cuBLAS mm,
    torch's fused op and every config of that cell interleaved in the same
    rounds (each config its own runner: _torch_gemm.forced keys them), so a
    config's ratio to mm meets the clocks the others met. Prints and
    returns one row per config."""
    cells: dict[tuple[str, str], list[dict]] = {}
    for kernel, shape, over in todo:
        cells.setdefault((kernel, shape), []).append({**gemm.default_config(kernel), **over})
    out = []
    for (kernel, shape), cfgs in cells.items():
        m, n, k = map(int, shape.split("x"))
        a, bt, fns = peers(kernel, m, n, k, world, rank, g)
        reset()
        for i, cfg in enumerate(cfgs):
            gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(m, n, k, world))

            def call(cfg=cfg):
                _torch_gemm.forced[kernel] = cfg
                return ours(kernel)(a, bt)
            fns[f"c{i}"] = call
        med, ratio = bench_paired(fns, "mm", iters=rounds, queued=queued)
        _torch_gemm.forced.clear()
        reset()
        for i, cfg in enumerate(cfgs):
            out.append({"pass": p, "kernel": kernel, "shape": shape, "config": cfg, "us": {"mm": med["mm"],
                        "ours": med[f"c{i}"], "torch": med["torch"]}, "ratio": {"ours": ratio[f"c{i}"],
                        "torch": ratio["torch"]}})
            if rank == 0:
                desc = ",".join(f"{x}={v}" for x, v in cfg.items() if x in SHOWN)
                print(f"| {p} | {kernel} | {shape} | `{desc}` | {med['mm']:.1f} | {med[f'c{i}']:.1f} "
                      f"({ratio[f'c{i}']:.3f}) | {med['torch']:.1f} ({ratio['torch']:.3f}) |", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--configs", default="")
    ap.add_argument("--tuned", default="", help="MxNxK,...: symmtune.torch's own choice at these shapes")
    ap.add_argument("--queued", action="store_true", help="each call behind a barrier and a device sleep")
    ap.add_argument("--kernels", default=",".join(gemm.KERNELS), help="with --tuned: these kernels only")
    ap.add_argument("--json", default="", help="also write the rows, configs in full, to this file (rank 0)")
    ap.add_argument("--together", action="store_true",
                    help="with --configs: every config of a (kernel, shape) in the same rounds, beside one mm and one "
                         "torch fused op, so that they meet the same clocks (default: one config per bench_paired)")
    args = ap.parse_args()
    rank, world, g = join_group()
    todo = BEST_2XH200
    if args.configs:
        with open(args.configs) as f:
            todo = [(c["kernel"], c["shape"], c["config"]) for c in json.load(f)]
    if args.tuned:
        todo = [(kernel, shape, None) for kernel in args.kernels.split(",") for shape in args.tuned.split(",")]
    if rank == 0:
        print(f"{world} ranks, {torch.cuda.get_device_name()}; µs, median of {args.rounds} interleaved rounds"
              f"{', each call queued' if args.queued else ''}, max over ranks; (median over rounds of the ratio "
              "to mm alone in the same round)", flush=True)
        print("| pass | kernel | M x N x K | config | mm alone | symmtune | torch fused op |")
        print("|---|---|---|---|---|---|---|")
    rows: list[dict] = []
    if args.together:
        if not args.configs:
            raise SystemExit("torch_paired.py: --together needs --configs")
        for p in (1, 2):
            rows += together(todo, p, rank, world, g, args.rounds, args.queued)
        todo = []
    for p in (1, 2):
        for kernel, shape, over in todo:
            m, n, k = map(int, shape.split("x"))
            if over is not None:
                cfg = {**gemm.default_config(kernel), **over}
                gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(m, n, k, world))
            a, bt, fns = peers(kernel, m, n, k, world, rank, g)
            reset()  # this call's pipeline is then the only one (forced clears too)
            with forced(cfg) if over is not None else contextlib.nullcontext():
                fns["ours"] = lambda: ours(kernel)(a, bt)
                med, ratio = bench_paired(fns, "mm", iters=args.rounds, queued=args.queued)
            full = cfg if over is not None else {}
            if over is None:  # what symmtune.torch chose, and from where
                c = next(iter(_torch_gemm._pipes.values())).choice  # kept: forced was not entered
                over = {"source": c.source, **{x: v for x, v in c.config.items() if x in SHOWN}}
                full = {"source": c.source, **c.config}
            if rank == 0:
                rows.append({"pass": p, "kernel": kernel, "shape": shape, "config": full, "us": med, "ratio": ratio})
                desc = ",".join(f"{x}={v}" for x, v in over.items())
                cells = [f"{med[x]:.1f} ({ratio[x]:.3f})" for x in ("ours", "torch")]
                print(f"| {p} | {kernel} | {shape} | `{desc}` | {med['mm']:.1f} | " + " | ".join(cells) + " |", flush=True)
    if rank == 0 and args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

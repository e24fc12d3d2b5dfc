"""The fused GEMMs' ratio to cuBLAS mm alone, measured paired: torch.mm on
the full product, symmtune.torch with a given fused config and torch's own
fused symm_mem op, interleaved call by call (peer_method.bench_paired), so
each ratio compares calls that met the same clocks.

    PYTHONPATH=python:bench torchrun --nproc-per-node W bench/torch_paired.py [--rounds N] [--configs FILE] [--queued]

--configs: a JSON list of {"kernel", "shape": "MxNxK", "config": {...}}
(a config as the cache holds it); the default is the best fused configs of
bench/results/2026-11-23-h200x2-gemm-fused9.md. --tuned SHAPES instead
lets symmtune.torch choose, from SYMMTUNE_CACHE, for both kernels at each
of SHAPES (MxNxK,...): what a user's program gets. The whole list runs
twice: the second pass shows whether the ratios hold as the GPUs warm.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--configs", default="")
    ap.add_argument("--tuned", default="", help="MxNxK,...: symmtune.torch's own choice at these shapes")
    ap.add_argument("--queued", action="store_true", help="each call behind a barrier and a device sleep")
    ap.add_argument("--kernels", default=",".join(gemm.KERNELS), help="with --tuned: these kernels only")
    ap.add_argument("--json", default="", help="also write the rows, configs in full, to this file (rank 0)")
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
    rows = []
    for p in (1, 2):
        for kernel, shape, over in todo:
            m, n, k = map(int, shape.split("x"))
            if over is not None:
                cfg = {**gemm.default_config(kernel), **over}
                gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(m, n, k, world))
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

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
separate bench_paired runs (issue 44: 6% pass to pass, 2026-11-28). With
--together, an entry may also name its "dtype" (bf16, the default; e4m3 or
e4m3_row: FP8 operands of bench/torch_fp8.py, the base _scaled_mm alone and
the peer torch's fused scaled op) and a "label" (kept in the JSON rows);
--untuned adds each cell's untuned config (what symmtune.torch runs with no
cache entry: the library's gemm.choose with no cache), labelled "untuned".
"""
import contextlib
import argparse
import json

import torch
import torch.distributed as dist

from peer_method import bench_paired
from symmtune import _torch_gemm, cache, gemm
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


def untuned(kernel: str, m: int, n: int, k: int, world: int, dtype: str) -> dict:
    """The config symmtune.torch runs for this problem with no cache entry:
    its own first-call choice (_torch_gemm.choose: the GPU-aware default)
    asked of a cache that does not exist."""
    device = torch.device("cuda", torch.cuda.current_device())
    answer = _torch_gemm.choose(kernel, m, n, k, world, dtype, device, "/nonexistent/symmtune-untuned.toml")
    return dict(cache.chosen(answer)["config"])  # an error raised, as a first call raises it


def fp8_peers(kernel, m, n, k, row, g):
    """peers for FP8 (bench/torch_fp8.py's operands, filled once): the base
    _scaled_mm alone ("mm"), torch's fused scaled op ("torch") and NCCL +
    _scaled_mm ("nccl"); and this rank's call of symmtune's scaled op."""
    from torch_fp8 import timers
    from torch_fp8_cases import Case
    c = Case(kernel, m, n, k, row)
    c.fill(5)
    t = timers(c, g)
    fns = {"mm": t["scaled_mm"], "nccl": t["nccl"]}
    if "torch_fused" in t:
        fns["torch"] = t["torch_fused"]
    return c.ours, fns


def cell_fns(kernel, shape, dtype, cfgs, rank, world, g):
    """The calls of one (kernel, shape, dtype) cell of --together: the
    product alone ("mm": cuBLAS mm, or _scaled_mm for FP8), torch's fused op
    ("torch", where it has one) and "c<i>" for the i-th of cfgs (pairs of a
    full config and its label) that validates for this problem, each its
    own runner (_torch_gemm.forced keys them). Returns (fns, the runnable
    cfgs); a skipped config is printed on rank 0. Runners are reset first."""
    m, n, k = map(int, shape.split("x"))
    if dtype == "bf16":
        a, bt, fns = peers(kernel, m, n, k, world, rank, g)

        def run():
            return ours(kernel)(a, bt)
    else:
        run, fns = fp8_peers(kernel, m, n, k, dtype == "e4m3_row", g)
    reset()
    runnable = []
    for cfg, label in cfgs:
        try:  # a reference log's config may be of an older space, or not run on this problem
            gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(m, n, k, world), dtype)
            runnable.append((cfg, label))
        except ValueError as e:
            if rank == 0:
                print(f"skipped {kernel} {dtype} {shape} {label}: {e}", flush=True)
    for i, (cfg, _) in enumerate(runnable):

        def call(cfg=cfg, run=run):
            _torch_gemm.forced[kernel] = cfg
            return run()
        fns[f"c{i}"] = call
    return fns, runnable


def cells_of(todo):
    """todo's (kernel, shape, config overrides, dtype, label) entries grouped
    by (kernel, shape, dtype), each config completed with the kernel's
    defaults: {cell: [(config, label), ...]} in todo's order."""
    cells: dict[tuple[str, str, str], list[tuple[dict, str]]] = {}
    for kernel, shape, over, dtype, label in todo:
        cells.setdefault((kernel, shape, dtype), []).append(({**gemm.default_config(kernel), **over}, label))
    return cells


def together(todo, p, rank, world, g, rounds, queued):
    """Pass p of --together: for each (kernel, shape, dtype) of todo, the
    product alone (cuBLAS mm, or _scaled_mm for FP8), torch's fused op and
    every config of that cell interleaved in the same rounds (each config
    its own runner: _torch_gemm.forced keys them), so a config's ratio to
    the product meets the clocks the others met. Prints and returns one row
    per config."""
    cells = cells_of(todo)
    out = []
    for (kernel, shape, dtype), cfgs in cells.items():
        fns, cfgs = cell_fns(kernel, shape, dtype, cfgs, rank, world, g)
        med, ratio = bench_paired(fns, "mm", iters=rounds, queued=queued)
        _torch_gemm.forced.clear()
        reset()
        tm, tr = med.get("torch", float("nan")), ratio.get("torch", float("nan"))
        for i, (cfg, label) in enumerate(cfgs):
            out.append({"pass": p, "kernel": kernel, "shape": shape, "dtype": dtype, "label": label, "config": cfg,
                        "us": {"mm": med["mm"], "ours": med[f"c{i}"], "torch": tm, "nccl": med.get("nccl")},
                        "ratio": {"ours": ratio[f"c{i}"], "torch": tr, "nccl": ratio.get("nccl")}})
            if rank == 0:
                desc = ",".join(f"{x}={v}" for x, v in cfg.items() if x in SHOWN)
                print(f"| {p} | {kernel} {dtype} | {shape} | {label} `{desc}` | {med['mm']:.1f} | {med[f'c{i}']:.1f} "
                      f"({ratio[f'c{i}']:.3f}) | {tm:.1f} ({tr:.3f}) |", flush=True)
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
    ap.add_argument("--untuned", action="store_true",
                    help="with --together: also each cell's untuned config (symmtune.torch with no cache entry)")
    args = ap.parse_args()
    if args.untuned and not args.together:
        ap.error("--untuned needs --together")
    rank, world, g = join_group()
    todo = BEST_2XH200
    entries: list[dict] = []
    if args.configs:
        with open(args.configs) as f:
            entries = json.load(f)
        todo = [(c["kernel"], c["shape"], c["config"]) for c in entries]
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
        cells = [(c["kernel"], c["shape"], c["config"], c.get("dtype", "bf16"), c.get("label", "")) for c in entries]
        if args.untuned:
            for kernel, shape, dtype in dict.fromkeys((c[0], c[1], c[3]) for c in cells):
                m, n, k = map(int, shape.split("x"))
                cells.append((kernel, shape, untuned(kernel, m, n, k, world, dtype), dtype, "untuned"))
        for p in (1, 2):
            rows += together(cells, p, rank, world, g, args.rounds, args.queued)
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
                c = _torch_gemm.opened()[0].choice  # kept: forced was not entered
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

"""The products of GEMM pipeline configs, timed paired on one GPU three ways:
as the Go plugins run them and symmtune.torch now does (cuBLASLt, the
config's algo, SM count target and batch, B stored [N, K]: "lt"), as
symmtune.torch ran them before (one torch.mm per span: "mm per span"), and
cuBLAS mm alone on the whole product ("mm alone", the ratios' base). Only
the products of rank 0's plan, in plan order on one stream: no
communication, so the figures say how much of a pipeline config's time
hangs on which product runs, not what the pipeline takes.

    PYTHONPATH=python:bench torchrun --nproc-per-node 1 bench/lt_products.py [--rounds N]

Each result is first checked against torch.mm on the whole product.
"""
import argparse

import torch
import torch.distributed as dist

from peer_method import bench_paired
from symmtune import _cublaslt, gemm
from torch_gemm import join_group

# The matmulrs pipelines the warm whole-space searches on 2 x H200 ranked
# first (bench/results/2026-11-24-h200x2-epilogue-warm.md, c9; at 16384 its
# batch=1 is batch=0's schedule, which Validate now says), and the same with
# cuBLASLt's first algorithm, unbatched.
CONFIGS = [
    ("matmulrs", "8192x3584x8192", 2, {"algo": 1, "batch": 1, "chunks": 2, "sm_reserve": 16, "streams": 2}),
    ("matmulrs", "8192x3584x8192", 2, {"algo": 0, "batch": 0, "chunks": 2, "sm_reserve": 0, "streams": 2}),
    ("matmulrs", "16384x3584x8192", 2, {"algo": 1, "batch": 0, "chunks": 1, "streams": 2}),
    ("matmulrs", "16384x3584x8192", 2, {"algo": 0, "batch": 0, "chunks": 1, "streams": 2}),
]


def rel_err(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    join_group()
    dev = torch.cuda.current_device()
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    print(f"{torch.cuda.get_device_name()}, cuBLASLt {_cublaslt.version()}; µs, median of {args.rounds} interleaved "
          "rounds (ratio to mm alone in the same round)")
    print("| kernel | M x N x K (world) | config | products | mm alone | lt | mm per span | lt rel err |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for kernel, shape, world, over in CONFIGS:
        m, n, k = map(int, shape.split("x"))
        cfg = gemm.parse_config(kernel, {**gemm.default_config(kernel), **over})
        p = gemm.Problem(m, n, k, world)
        gemm.validate(cfg, p)
        steps = gemm.plan_rs(cfg.plan(p, 0)).products if kernel == gemm.MATMULRS else gemm.plan_ag(cfg.plan(p, 0)).products
        gen = torch.Generator(device="cuda").manual_seed(11)
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda", generator=gen)
        bt = torch.randn(n, k, dtype=torch.bfloat16, device="cuda", generator=gen) / k ** 0.5  # B stored [N, K]
        b = bt.t()
        d = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        ws = torch.empty(_cublaslt.WORKSPACE_BYTES, dtype=torch.uint8, device="cuda")
        target = sms - cfg.sm_reserve if cfg.sm_reserve else 0
        plans = [_cublaslt.Plan(dev, st.span.rows, n, k, "bf16", batch=st.batch, stride_a=p.rows * k,
                                stride_d=p.rows * n, sm_target=target) for st in steps]
        stream = torch.cuda.current_stream().cuda_stream
        elt = a.element_size()

        def lt() -> None:
            for st, pl in zip(steps, plans):
                pl.run(stream, cfg.algo, a.data_ptr() + st.span.start * k * elt, bt.data_ptr(),
                       d.data_ptr() + st.span.start * n * elt, ws.data_ptr())

        def per_span() -> None:
            for st in steps:
                for sp in st.spans(p.rows):
                    torch.mm(a[sp.start:sp.start + sp.rows], b, out=d[sp.start:sp.start + sp.rows])

        want = torch.mm(a, b)
        lt()
        err = rel_err(d, want)
        if not err <= 1e-2:
            bad += 1
        med, ratio = bench_paired({"mm": lambda: torch.mm(a, b), "lt": lt, "span": per_span}, "mm", iters=args.rounds)
        desc = ",".join(f"{x}={v}" for x, v in over.items())
        prods = "+".join(f"{st.span.rows}" + (f"x{st.batch}" if st.batch > 1 else "") for st in steps)
        print(f"| {kernel} | {shape} ({world}) | `{desc}` | {prods} | {med['mm']:.1f} | {med['lt']:.1f} "
              f"({ratio['lt']:.3f}) | {med['span']:.1f} ({ratio['span']:.3f}) | {err:.1e} |", flush=True)
        for pl in plans:
            pl.close()
    dist.destroy_process_group()
    if bad:
        raise SystemExit(f"{bad} product checks failed")


if __name__ == "__main__":
    main()

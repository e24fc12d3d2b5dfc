"""graph_alternate.py: does a symmtune GEMM op captured in one CUDA graph
replay correctly when another graph (a plain torch.mm's) is replayed between
its replays, as a program with several captured graphs (vLLM's per batch
size, torch.compile's reduce-overhead pieces) does? One case per process:
a fault is sticky, so bench/experiments/graph-alternate.sh runs each case alone.

    PYTHONPATH=python:bench torchrun --nproc-per-node 2 bench/experiments/graph_alternate.py CASE [REPLAYS]

CASE is KERNEL:DTYPE:MODE: KERNEL agmm or matmulrs, DTYPE bf16 or e4m3,
MODE alone (only the op's graph, replayed back to back), alternate (the op's
graph and torch.mm's in turn), or alternate-sync (in turn, synchronizing
after each replay). Prints "CASE ok rel_rms" or raises; shape 4096x1792x4096.
"""
from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist

import symmtune.torch as st
from peer_method import warm_and_capture

M, N, K = 4096, 1792, 4096


def rel_rms(x: torch.Tensor, ref: torch.Tensor) -> float:
    d = (x.double() - ref).norm() / ref.norm()
    return float(d)


def main() -> None:
    case = sys.argv[1]
    replays = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    kernel, dtype, mode = case.split(":")
    rank, world = int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    gen = torch.Generator(device="cuda").manual_seed(17 + rank)
    same = torch.Generator(device="cuda").manual_seed(99)
    rows = M // world if kernel == "agmm" else M
    a32 = torch.rand(rows, K, generator=gen, device="cuda") * 2 - 1
    w32 = torch.rand(N, K, generator=same, device="cuda") * 2 - 1
    if dtype == "bf16":
        a, w = a32.bfloat16(), w32.bfloat16()
        if kernel == "agmm":
            def op():
                return st.all_gather_matmul(a, w.t())
        else:
            def op():
                return st.matmul_reduce_scatter(a, w.t())
        ad, wd, sa, sb = a.double(), w.double(), 1.0, 1.0
    else:
        f8 = torch.float8_e4m3fn
        a, w = (a32 * 448).to(f8), (w32 * 448).to(f8)
        sa_t = torch.full((), 1 / 448, device="cuda")
        sb_t = torch.full((), 1 / 448, device="cuda")
        if kernel == "agmm":
            def op():
                return st.all_gather_scaled_matmul(a, w.t(), sa_t, sb_t)
        else:
            def op():
                return st.scaled_matmul_reduce_scatter(a, w.t(), sa_t, sb_t)
        ad, wd, sa, sb = a.double(), w.double(), 1 / 448, 1 / 448
    # float64 reference of this rank's output
    if kernel == "agmm":
        parts = [torch.empty_like(ad) for _ in range(world)]
        dist.all_gather(parts, ad)
        ref = torch.cat(parts) @ wd.t() * (sa * sb)
    else:
        full = ad @ wd.t() * (sa * sb)
        dist.all_reduce(full)
        ref = full[rank * (M // world):(rank + 1) * (M // world)]
    x = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    g_op, out = warm_and_capture(op)
    g_mm, _ = warm_and_capture(lambda: x @ x)
    torch.cuda.synchronize()
    for _ in range(replays):
        out.fill_(float("nan"))
        g_op.replay()
        if mode != "alone":
            g_mm.replay()
        if mode == "alternate-sync":
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    err = rel_rms(out, ref)
    e = torch.tensor([err], device="cuda", dtype=torch.float64)
    dist.all_reduce(e, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(f"{case} {'ok' if e.item() < 2e-2 else 'WRONG'} rel_rms {e.item():.2e} after {replays} replays", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    for var, val in (("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NCCL_NVLS_ENABLE", "0"), ("NVSHMEM_DISABLE_NVLS", "1")):
        os.environ.setdefault(var, val)
    main()

"""cuBLAS mm alone on random and on zero inputs, one process per GPU.

    PYTHONPATH=python:bench torchrun --nproc-per-node W bench/experiments/mm_baseline.py [MxNxK ...]

The same timing method as shared/bench/peer_baselines.py (CUDA events
around one call per rank after warm-up, median over iterations, max across
ranks), but the inputs are written: peer_baselines.py times `a_full @ b`
on a freshly allocated, never-written a_full, whose contents nobody
chose, and a product's speed depends on its data (METHOD.md saw a bf16
product 13% faster on zeros). Prints CSV lines kind,impl,shape,us:
mm,cublas_mm_random (the baseline symmtune's ratios use) and
mm,cublas_mm_zeros.
"""
import os, sys
import torch
import torch.distributed as dist

from peer_method import bench


def main():
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device(f"cuda:{rank}"))
    shapes = sys.argv[1:] or ["4096x1792x4096", "8192x3584x8192", "16384x3584x8192"]
    for shp in shapes:
        M, N, K = (int(x) for x in shp.split("x"))
        b = torch.randn(K, N, dtype=torch.bfloat16, device="cuda")
        for impl, a in (("cublas_mm_random", torch.randn(M, K, dtype=torch.bfloat16, device="cuda")),
                        ("cublas_mm_zeros", torch.zeros(M, K, dtype=torch.bfloat16, device="cuda"))):
            us = bench(lambda: a @ b)
            if rank == 0:
                print(f"mm,{impl},{shp},{us:.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Speed of symmtune.torch's calls beside torch.mm in one process, for
comparing two builds of the runtime process by process (issue 54: within
2% of the runtime before the redesign). World size from torchrun.

Per shape: torch.mm, all_gather_matmul and matmul_reduce_scatter timed
call by call, interleaved, in rounds (events around each call); the
ratio of each to torch.mm's median. Then the decode all-reduce: 80
all_reduce calls of [B, 8192] bf16 captured in a CUDA graph, µs per
all-reduce. One line per figure: SPEED name value. SPEED_PARTS (default
"gemm,decode") picks the parts.
    torchrun --nproc_per_node=1 bench/runtime_speed.py
"""
from __future__ import annotations

import os
import statistics

import torch
import torch.distributed as dist

import symmtune.torch as st

BF16 = torch.bfloat16


def timed(fn, n: int = 1) -> float:
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) * 1000 / n


def main() -> None:
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    W = dist.get_world_size()
    tag = os.environ.get("SPEED_TAG", "run")
    parts = os.environ.get("SPEED_PARTS", "gemm,decode").split(",")
    g = torch.Generator(device="cuda").manual_seed(5)
    shapes = [(8192, 3584, 8192), (16384, 3584, 8192), (4096, 1792, 4096)] if "gemm" in parts else []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=BF16, generator=g)
        w = torch.randn(n, k, device="cuda", dtype=BF16, generator=g)
        shard = a[: m // W]
        fns = {"mm": lambda: torch.mm(a, w.t()), "agmm": lambda: st.all_gather_matmul(shard, w.t()),
               "matmulrs": lambda: st.matmul_reduce_scatter(a, w.t())}
        for f in fns.values():
            for _ in range(3):
                f()
        times: dict[str, list[float]] = {k_: [] for k_ in fns}
        for _ in range(30):
            for name, f in fns.items():
                times[name].append(timed(f, 5))
        mm = statistics.median(times["mm"])
        for name in ("agmm", "matmulrs"):
            if rank == 0:
                print(f"SPEED {tag} {name} {m}x{n}x{k} ratio_to_mm {statistics.median(times[name]) / mm:.4f} "
                      f"mm_us {mm:.1f}", flush=True)
    for B in (1, 16, 64, 256) if "decode" in parts else ():
        buf = torch.randn(B, 8192, device="cuda", dtype=BF16, generator=g)
        st.all_reduce(buf)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(80):
                st.all_reduce(buf)
        per = statistics.median(timed(graph.replay) / 80 for _ in range(30))
        if rank == 0:
            print(f"SPEED {tag} decode_allreduce B={B} us {per:.2f}", flush=True)
        del graph
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

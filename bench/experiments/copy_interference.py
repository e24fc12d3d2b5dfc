"""How much a copy beside a GEMM slows the GEMM down, with cuBLAS as the
GEMM: the floor under any overlapped all-gather + matmul on these GPUs.

    PYTHONPATH=python:bench torchrun --nproc-per-node W bench/experiments/copy_interference.py [--shapes MxNxK,...]

At each shape (M the full row count, bf16, B K-major as torch.mm reads an
nn.Linear weight), every rank at once times torch.mm on the full [M, K]
product, alone and with one of these on a side stream, started with it:
  - push: this rank's [M/W, K] shard copied into every peer's symmetric
    buffer (copy engines over NVLink, what a fused agmm's pushes move);
  - local: the same bytes copied within this GPU (copy engine, HBM only);
  - idle: nothing (the side stream's own cost, as a check).
Timing: bench/peer_method.py's bench (CUDA events around one call on the
main stream, which waits for the side stream; median of 50, max over
ranks), every variant in the same process, alone again at the end to show
the clock's drift. A call is max(GEMM beside the copy, copy): at these
shapes the copy is far shorter than the GEMM, so the ratio to alone is
what the copy costs the GEMM.
"""
import argparse

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

from peer_method import bench
from torch_gemm import join_group


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x1792x4096,8192x3584x8192,16384x3584x8192")
    args = ap.parse_args()
    rank, world, g = join_group()
    main_stream, side = torch.cuda.current_stream(), torch.cuda.Stream()
    if rank == 0:
        print(f"{world} ranks, {torch.cuda.get_device_name()}; µs, median of 50, max over ranks", flush=True)
        print("| M x N x K | mm alone | + push | + local copy | + idle side | mm alone again | shard MB |")
        print("|---|---|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        m, n, k = map(int, shape.split("x"))
        gen = torch.Generator(device="cuda").manual_seed(rank + 1)
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda", generator=gen)
        w = torch.randn(n, k, dtype=torch.bfloat16, device="cuda", generator=gen) / k ** 0.5
        b = w.t()
        rows = m // world
        shard = a[rank * rows:(rank + 1) * rows]
        buf = symm_mem.empty(world * rows, k, dtype=torch.bfloat16, device="cuda")
        hdl = symm_mem.rendezvous(buf, g)
        peers = [hdl.get_buffer(q, (world * rows, k), torch.bfloat16)[rank * rows:(rank + 1) * rows]
                 for q in range(world) if q != rank]
        local = torch.empty_like(shard)

        def beside(side_work):
            def call():
                side.wait_stream(main_stream)
                with torch.cuda.stream(side):
                    side_work()
                torch.mm(a, b)
                main_stream.wait_stream(side)
            return call

        def push():
            for p in peers:
                p.copy_(shard, non_blocking=True)

        res = {"alone": bench(lambda: torch.mm(a, b))}
        res["push"] = bench(beside(push))
        res["local"] = bench(beside(lambda: local.copy_(shard, non_blocking=True)))
        res["idle"] = bench(beside(lambda: None))
        res["again"] = bench(lambda: torch.mm(a, b))
        hdl.barrier()
        if rank == 0:
            base = (res["alone"] + res["again"]) / 2
            cells = [f"{res[x]:.1f} ({res[x] / base:.3f})" for x in ("push", "local", "idle")]
            print(f"| {shape} | {res['alone']:.1f} | " + " | ".join(cells) +
                  f" | {res['again']:.1f} | {shard.numel() * 2 / 1e6:.1f} |", flush=True)
        peers.clear()  # push's closure reads the name: clear the views rather than unbind it
        del buf, hdl
    if rank == 0:
        print("\n(ratios: to the mean of mm alone before and after)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""symmtune.torch.all_reduce against NCCL and torch symm_mem, one process per GPU.

    SYMMTUNE_CACHE=configs.toml PYTHONPATH=python torchrun --nproc-per-node W bench/torch_allreduce.py [N ...]

For each size N (bf16 elements; default 4 KiB, 1 MiB, 16 MiB, 128 MiB):
checks symmtune.torch.all_reduce against dist.all_reduce (NCCL) on fresh
random inputs, for a plain tensor (staged through the workspace) and for one
from symmtune.torch.empty (in symmetric memory), then times both, NCCL and
torch symm_mem's two-shot with the method of shared/bench/peer_baselines.py
(CUDA events around one call per rank after warm-up, median over
iterations, max across ranks), then all of them again with each call queued
behind a barrier and a device-side sleep (peer_method.bench_queued: the Go
host's method, which made the cache's figure; the impl's name ends in
":queued"). Prints CSV lines kind,impl,shape,us (shape: message bytes) and,
per size, the config that ran, where it came from and the cache's tuned
median.
"""
import os
import sys

import torch
import torch.distributed as dist

import torch.distributed._symmetric_memory as symm_mem
from peer_method import bench, bench_queued

import symmtune.torch as st


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    return ((got - ref).norm() / ref.norm()).item()


def run(rank, sizes):
    """Checks and times all_reduce at each size (bf16 elements); returns
    (ok, rows): rows of (message bytes, {impl: us}, choice) for rank 0's
    table."""
    g = dist.group.WORLD.group_name
    dt = torch.bfloat16
    ok = True
    rows = []
    for n in sizes:
        shape = n * 2
        for path in ("staged", "symmetric"):
            for trial in range(3):
                gen = torch.Generator(device="cuda").manual_seed(1000 * trial + rank + 17 * n)
                src = torch.randn(n, dtype=dt, device="cuda", generator=gen)
                x = src.clone() if path == "staged" else st.empty(n, dt)
                x.copy_(src)
                ref = src.clone()
                dist.all_reduce(ref)
                st.all_reduce(x)
                err = rel_err(x, ref)
                if not err <= 1e-2:
                    ok = False
                    print(f"rank {rank}: n={n} {path} trial {trial}: rel err {err:.3g} over 1e-2", flush=True)
        choice = st._choices[(g, dt, n)]
        x = torch.randn(n, dtype=dt, device="cuda")
        xs = st.empty(n, dt)
        xs.copy_(x)
        calls = {
            "symmtune_torch_staged": lambda: st.all_reduce(x),
            "symmtune_torch_symmetric": lambda: st.all_reduce(xs),
            "nccl": lambda: dist.all_reduce(x),
        }
        try:
            y = symm_mem.empty(n, dtype=dt, device="cuda")
            y.copy_(x)
            symm_mem.rendezvous(y, g)
            calls["symm_two_shot"] = lambda: torch.ops.symm_mem.two_shot_all_reduce_(y, "sum", g)
            calls["symm_two_shot"]()
        except Exception as ex:  # a peer that refuses a size is reported, not fatal
            calls.pop("symm_two_shot", None)
            if rank == 0:
                print(f"symm_mem two_shot n={n}: {ex!r}"[:300], flush=True)
        res = {impl: bench(fn) for impl, fn in calls.items()}
        res.update({f"{impl}:queued": bench_queued(fn) for impl, fn in calls.items()})
        if rank == 0:
            for impl, us in res.items():
                print(f"allreduce,{impl},{shape},{us:.1f}", flush=True)
            tuned = f"{choice['median_us']:.1f}" if choice["median_us"] else "-"
            print(f"# n={n}: {choice['source']} config {choice['config']}, cache median {tuned} us", flush=True)
        rows.append((shape, res, choice))
    return ok, rows


def table(rows) -> str:
    """Markdown: per size, the cache's tuned median beside symmtune.torch
    (symmetric tensor) by both methods, and the peers queued."""
    def f(v):
        return f"{v:.1f}" if v else "–"
    out = ["| bytes | tuned (cache) | symmtune.torch | queued | queued / tuned | NCCL queued | symm_mem queued |",
           "|---|---|---|---|---|---|---|"]
    for shape, res, c in rows:
        q = res.get("symmtune_torch_symmetric:queued")
        tuned = c["median_us"]
        ratio = f"{q / tuned:.2f}" if q and tuned else "–"
        out.append(f"| {shape} | {f(tuned)} | {f(res.get('symmtune_torch_symmetric'))} | {f(q)} | {ratio} | "
                   f"{f(res.get('nccl:queued'))} | {f(res.get('symm_two_shot:queued'))} |")
    return "\n".join(out)


def main():
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device(f"cuda:{rank}"))
    sizes = [int(a) for a in sys.argv[1:]] or [2048, 524288, 8388608, 67108864]
    ok, rows = run(rank, sizes)
    flag = torch.tensor([0 if ok else 1], device="cuda")
    dist.all_reduce(flag)
    if rank == 0:
        print(table(rows), flush=True)
        print("correctness:", "all sizes and paths within 1e-2 of NCCL" if flag.item() == 0 else "FAILED", flush=True)
    dist.destroy_process_group()
    sys.exit(0 if flag.item() == 0 else 1)


if __name__ == "__main__":
    main()

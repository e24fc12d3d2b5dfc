"""symmtune.torch's kernels against NCCL and torch symm_mem, one process per GPU.

    SYMMTUNE_CACHE=configs.toml PYTHONPATH=python torchrun --nproc-per-node W bench/torch_gemm.py [--no-allreduce]

1. all_reduce (bench/torch_allreduce.py's run): checked against
   dist.all_reduce at 4 KiB, 1 MiB, 16 MiB and 128 MiB of bf16, then timed.
2. all_gather_matmul and matmul_reduce_scatter: checked on fresh random
   inputs against dist.all_gather_into_tensor + torch.matmul and torch.matmul
   + dist.reduce_scatter_tensor, first with a set of forced configs that
   cover every path of the pipelines (pull/push, copy engine/SM copies,
   push=gemm, several chunks and streams, batch) at a small shape, then with
   the config symmtune.torch chooses (tuned, or the default) at
   4096x1792x4096 and 8192x3584x8192 (MxNxK, M the full row count, bf16);
   then timed against NCCL + cuBLAS and torch's fused symm_mem ops.
Timing: bench/peer_method.py (CUDA events around one call per rank after
warm-up, median of 50, max over ranks). Prints CSV lines kind,impl,shape,us,
then one markdown table; exit code 1 when any check failed.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import symmtune.torch as st
from peer_method import bench
from symmtune import _torch_gemm, gemm
from torch_allreduce import rel_err, run as run_allreduce

SHAPES = [(4096, 1792, 4096), (8192, 3584, 8192)]
TOL = 2e-2  # bf16 products, chunked (cuBLAS may pick other kernels per chunk) and fp32 reduction


def reset() -> None:
    """Forgets every GEMM op's runner (closing the Go side): the next call
    chooses its config again."""
    _torch_gemm.reset()


class forced:
    """Makes symmtune.torch run cfg instead of choosing (_torch_gemm.forced)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def __enter__(self):
        _torch_gemm.forced.update({k: dict(self.cfg) for k in gemm.KERNELS})
        reset()

    def __exit__(self, *exc):
        _torch_gemm.forced.clear()
        reset()


def variants(kernel, world):
    """Configs that between them take every branch of kernel's pipeline."""
    d = gemm.default_config(kernel)
    if kernel == gemm.AGMM:
        vs = [{}, {"direction": "push"}, {"copy": "sm", "copy_blocks": 8}, {"copy": "sm", "direction": "push"},
              {"chunks": 4, "streams": 3}]
        if world > 2:
            vs.append({"chunks": 2, "streams": 2, "batch": 1})
    else:
        vs = [{}, {"push": "gemm"}, {"chunks": 8, "streams": 3}, {"push": "gemm", "chunks": 4, "streams": 2},
              {"chunks": 4, "streams": 2, "batch": 1}]
    # cuBLASLt's other ranked algorithms and its SM count target.
    vs += [{"algo": 2}, {"algo": 1, "sm_reserve": 16, **({"copy": "sm"} if kernel == gemm.AGMM else {})},
           {"algo": 3, "chunks": 2, "streams": 2, "batch": 1}]
    if world == 1:  # no peers: one chunk, one product
        vs = [{**v, "chunks": 1, "streams": 1, "batch": 0} for v in vs]
    return [{**d, **v} for v in vs]


def inputs(kernel, m, n, k, world, rank, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed * 1000 + rank)
    rows = m // world if kernel == gemm.AGMM else m
    a = torch.randn(rows, k, dtype=torch.bfloat16, device="cuda", generator=gen)
    b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda", generator=gen) / k ** 0.5
    return a, b


def reference(kernel, a, b, world):
    if kernel == gemm.AGMM:
        full = torch.empty(a.shape[0] * world, a.shape[1], dtype=a.dtype, device="cuda")
        dist.all_gather_into_tensor(full, a)
        return full @ b
    c = a @ b
    out = torch.empty(c.shape[0] // world, c.shape[1], dtype=c.dtype, device="cuda")
    dist.reduce_scatter_tensor(out, c)
    return out


def ours(kernel):
    return st.all_gather_matmul if kernel == gemm.AGMM else st.matmul_reduce_scatter


def check(kernel, m, n, k, world, rank, what, trials=2):
    """trials calls on fresh inputs; B is [K, N] in the first, the transpose
    of a dense [N, K] (an nn.Linear weight's .t()) in the next."""
    ok = True
    for t in range(trials):
        a, b = inputs(kernel, m, n, k, world, rank, t + 1)
        if t % 2:
            b = b.t().contiguous().t()
        got = ours(kernel)(a, b)
        err = rel_err(got, reference(kernel, a, b, world))
        if not err <= TOL:
            ok = False
            print(f"rank {rank}: {kernel} {m}x{n}x{k} {what} trial {t}: rel err {err:.3g} over {TOL}", flush=True)
    return ok


def run_gemm(rank, world):
    g = dist.group.WORLD.group_name
    ok = True
    try:
        for kernel in gemm.KERNELS:
            for cfg in variants(kernel, world):
                try:  # some take several ranks (chunks, batch)
                    gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(512 * world, 1024, 1024, world))
                except ValueError as ex:
                    if rank == 0:
                        print(f"# {kernel} config {cfg} skipped: {ex}", flush=True)
                    continue
                _torch_gemm.forced[kernel] = cfg
                reset()
                ok &= check(kernel, 512 * world, 1024, 1024, world, rank, f"config {cfg}")
    finally:
        _torch_gemm.forced.clear()
        reset()
    rows = []
    for (m, n, k) in SHAPES:
        shp = f"{m}x{n}x{k}"
        for kernel in gemm.KERNELS:
            ok &= check(kernel, m, n, k, world, rank, "chosen config")
            a, b = inputs(kernel, m, n, k, world, rank, 7)
            fn = ours(kernel)
            res = {"symmtune_torch": bench(lambda: fn(a, b))}
            res["nccl+cublas"] = bench(lambda: reference(kernel, a, b, world))
            try:
                if kernel == gemm.AGMM:
                    res["torch_fused"] = bench(lambda: torch.ops.symm_mem.fused_all_gather_matmul(a, [b], 0, g))
                else:
                    res["torch_fused"] = bench(lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, g))
            except Exception as ex:
                if rank == 0:
                    print(f"torch fused {kernel} {shp}: {ex!r}"[:300], flush=True)
            pipe = _torch_gemm.opened(kernel, m, n, k)[0]
            if rank == 0:
                for impl, us in res.items():
                    print(f"{kernel},{impl},{shp},{us:.1f}", flush=True)
                print(f"# {kernel} {shp}: {pipe.choice.source} config {pipe.choice.config}, cache median "
                      f"{pipe.choice.median_us or '-'} us", flush=True)
            rows.append((kernel, shp, res, pipe.choice))
    return ok, rows


def fmt(us):
    return f"{us:.1f}" if us else "-"


def join_group() -> tuple[int, int, str]:
    """This torchrun process's rank and world size, its GPU set, NCCL
    initialized and symmetric memory enabled for the world group (whose
    name is returned)."""
    rank, world = int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device(f"cuda:{rank}"))
    g = dist.group.WORLD.group_name
    try:
        symm_mem.enable_symm_mem_for_group(g)
    except Exception:  # newer torch: every group may use symmetric memory
        pass
    return rank, world, g


def main():
    rank, world, _ = join_group()
    ok, ar_rows = True, []
    if "--no-allreduce" not in sys.argv:
        ok, ar_rows = run_allreduce(rank, [2048, 524288, 8388608, 67108864])
    gok, gemm_rows = run_gemm(rank, world)
    flag = torch.tensor([0 if ok and gok else 1], device="cuda")
    dist.all_reduce(flag)
    if rank == 0:
        print(f"\n{world} ranks; µs, median of 50, max over ranks; tuned = the cache's median for the config that ran")
        print("\n| kernel | shape | source | tuned | symmtune.torch | NCCL | torch symm_mem |")
        print("|---|---|---|---|---|---|---|")
        for shape, res, c in ar_rows:
            print(f"| allreduce | {shape} B | {c['source']} | {fmt(c['median_us'])} | {fmt(res.get('symmtune_torch_symmetric'))} "
                  f"(staged {fmt(res.get('symmtune_torch_staged'))}) | {fmt(res.get('nccl'))} | "
                  f"{fmt(res.get('symm_two_shot'))} |")
        for kernel, shp, res, c in gemm_rows:
            print(f"| {kernel} | {shp} | {c.source} | {fmt(c.median_us)} | {fmt(res.get('symmtune_torch'))} | "
                  f"{fmt(res.get('nccl+cublas'))} | {fmt(res.get('torch_fused'))} |")
        print("\ncorrectness:", "every check within tolerance" if flag.item() == 0 else "FAILED", flush=True)
    dist.destroy_process_group()
    sys.exit(0 if flag.item() == 0 else 1)


if __name__ == "__main__":
    main()

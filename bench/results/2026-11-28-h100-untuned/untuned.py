"""Untuned GEMMs (empty cache) in a torch program, 2 GPUs: the chosen config, correctness, and GPU time in a CUDA
graph as a ratio to cuBLAS mm alone, paired rounds; torch's fused op beside."""
import os, statistics, tempfile
import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
import symmtune.torch as st
from symmtune import _torch_gemm

dist.init_process_group("nccl")
rank, w = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)
g = torch.Generator(device="cuda").manual_seed(7 + rank)
gn = dist.group.WORLD.group_name
try:
    symm_mem.enable_symm_mem_for_group(gn)
except Exception:
    pass
cache = os.path.join(tempfile.mkdtemp(), "empty.toml")
M, N, K = 8192, 3584, 8192


def graph(fn, reps=10):
    fn(); torch.cuda.synchronize()
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        for _ in range(reps):
            fn()
    return gr


def t(gr):
    dist.barrier(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); gr.replay(); e1.record(); e1.synchronize()
    x = torch.tensor([e0.elapsed_time(e1)], device="cuda")
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    return x.item()


for kernel in ("agmm", "matmulrs"):
    wt = torch.randn(N, K, device="cuda", dtype=torch.bfloat16, generator=g) / 64
    b = wt.t()
    if kernel == "agmm":
        a = torch.randn(M // w, K, device="cuda", dtype=torch.bfloat16, generator=g)
        full = torch.empty(M, K, device="cuda", dtype=torch.bfloat16)
        ours = lambda: st.all_gather_matmul(a, b, cache=cache)
        alone = lambda: torch.mm(full, b)
        theirs = lambda: torch.ops.symm_mem.fused_all_gather_matmul(a, [b], 0, gn)
        got = ours()
        parts = [torch.empty_like(a) for _ in range(w)]
        dist.all_gather(parts, a)
        ref = torch.cat(parts).float() @ b.float()
    else:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16, generator=g)
        ours = lambda: st.matmul_reduce_scatter(a, b, cache=cache)
        alone = lambda: torch.mm(a, b)
        theirs = lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, gn)
        got = ours()
        ref = (a.float() @ b.float())
        dist.all_reduce(ref)
        ref = ref[rank * M // w:(rank + 1) * M // w]
    err = ((got.float() - ref).norm() / ref.norm()).item()
    pipe = next(p for k, p in _torch_gemm._pipes.items() if k[0] == kernel)
    if rank == 0:
        print(f"UNTUNED {kernel}: source {pipe.choice.source} config {dict(pipe.choice.config)} rel err {err:.2e}", flush=True)
    gs = {"mm": graph(alone), "symmtune": graph(ours)}
    try:
        gs["torch_fused"] = graph(theirs)
    except Exception as e:
        if rank == 0:
            print("torch fused op:", type(e).__name__, str(e)[:200])
    ratios = {k: [] for k in gs if k != "mm"}
    for _ in range(12):
        base = t(gs["mm"])
        for k in ratios:
            ratios[k].append(t(gs[k]) / base)
    if rank == 0:
        print(f"RATIO {kernel} {M}x{N}x{K} W={w} (to mm alone, median of 12 paired rounds): " +
              ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in ratios.items()), flush=True)
dist.barrier()
dist.destroy_process_group()

"""The timing method of shared/bench/peer_baselines.py, for symmtune's own
torchrun benchmarks: CUDA events around ONE call on each rank after
warm-up, the median over iterations, then the max of that median across
ranks. Nothing is captured in a CUDA graph by the method itself."""
import torch
import torch.distributed as dist


def bench(fn, iters=50, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    dist.barrier()
    ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        ts.append((s, e))
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1000 for a, b in ts)
    med = torch.tensor([t[len(t) // 2]], device="cuda")
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    return med.item()

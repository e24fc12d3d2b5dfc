"""The timing method of shared/bench/peer_baselines.py, for symmtune's own
torchrun benchmarks: CUDA events around ONE call on each rank after
warm-up, the median over iterations, then the max of that median across
ranks. Nothing is captured in a CUDA graph by the method itself.

bench_queued is the Go host's method (symm/cudamem's Team.Time), for
comparing a call from Python with the figure a search put in the cache."""
import os
import statistics
import time

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


# About 100 µs at the H200's clocks: longer than one call's launch from
# Python takes on the host, so the GPU never waits for it. $PEER_QUEUE_CYCLES
# sets another: a call whose host path takes longer than the sleep shows
# that excess in its GPU time.
QUEUE_CYCLES = int(os.environ.get("PEER_QUEUE_CYCLES", "200000"))


def queue_behind_barrier():
    """A function that enqueues, on the current stream, a barrier across
    ranks (a one-element NCCL all-reduce) and a device sleep: what follows
    it starts on every rank together, with the host's launch of it hidden."""
    tick = torch.zeros(1, device="cuda")

    def queued():
        dist.all_reduce(tick)
        torch.cuda._sleep(QUEUE_CYCLES)
    return queued


def bench_queued(fn, iters=50, warmup=10):
    """bench, with each call queued on the GPU behind a barrier across ranks
    (a one-element NCCL all-reduce) and a device-side sleep, as the Go host
    puts its team barrier before each timed call: the ranks start together
    and the events time the GPU's work, not the host's launch path. At small
    sizes that launch path is most of bench's figure, for every library."""
    med, _ = bench_paired({"fn": fn}, "fn", iters=iters, warmup=warmup, queued=True)
    return med["fn"]


def bench_paired(fns: dict, base: str, iters=50, warmup=5, queued=False) -> tuple[dict, dict]:
    """bench for several calls at once, interleaved: each round times one
    call of every fn (the order rotating by round), so all of them meet the
    same clocks. The GPUs' clocks move by 15% within a call's first seconds
    (bench/results/2026-11-23-h200x2-paired.md), more than the differences
    measured, so a ratio of two bench() figures taken seconds apart is
    mostly the clock's. Returns ({name: median µs}, {name: median over
    rounds of the round's time / base's}), each the max over ranks.
    queued: every call queued as bench_queued queues it (for calls shorter
    than their launch from Python, or that wait for peers: otherwise one
    rank's slower host shows in the other's time)."""
    names = list(fns)
    wait = queue_behind_barrier() if queued else (lambda: None)
    for _ in range(warmup):
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    dist.barrier()
    rounds = []
    for i in range(iters):
        order = names[i % len(names):] + names[:i % len(names)]
        evs = {}
        for name in order:
            wait()
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            fns[name]()
            e.record()
            evs[name] = (s, e)
        rounds.append(evs)
    torch.cuda.synchronize()
    times = [{n: s.elapsed_time(e) * 1000 for n, (s, e) in r.items()} for r in rounds]

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2]

    meds = [median(t[n] for t in times) for n in names]
    ratios = [median(t[n] / t[base] for t in times) for n in names]
    out = torch.tensor(meds + ratios, device="cuda")
    dist.all_reduce(out, op=dist.ReduceOp.MAX)
    v = out.tolist()
    return dict(zip(names, v[:len(names)])), dict(zip(names, v[len(names):]))


def warm_and_capture(fn, warmup: int = 2):
    """fn() run warmup times on a side stream (as torch.cuda.graph's
    documentation asks: the first calls make their buffers and kernels),
    then captured once in a CUDA graph: (graph, what the captured call
    returned)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out


def time_replays(graph, reps: int = 20) -> float:
    """This rank's median µs of one replay of graph, after one untimed
    replay; each timed replay starts behind a barrier across ranks, so one
    rank's late start stays out of another's figure."""
    graph.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        graph.replay()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1000)
    return statistics.median(ts)


def host_time(fn, iters: int = 200, warmup: int = 20) -> float:
    """Median host wall time of one call, calls back to back (the GPU runs
    behind; nothing synchronised inside the loop), max over ranks."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    dist.barrier()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    v = torch.tensor([statistics.median(ts) * 1e6], device="cuda")
    dist.all_reduce(v, op=dist.ReduceOp.MAX)
    return v.item()

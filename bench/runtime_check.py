"""Issue 54's checks of symmtune.torch's runtime as a serving engine uses
it, on any number of GPUs (torchrun; world 1 on one GPU):

  modules   the process's first all_gather_matmul, then first calls of
            matmul_reduce_scatter, all_reduce and (on a GPU with FP8 tensor
            cores) all_gather_scaled_matmul, each run under sys.setprofile
            (threads included): the symmtune modules their Python frames
            ran in. At most 5 each (issue 54); the FP8 forms 6, their own
            module on top of the GEMMs'. Run first, so the first call is
            the process's.
  memory    agmm + matmulrs eagerly at --shapes distinct row counts: the
            device memory beyond torch's and the symmetric bytes stays
            bounded, memory_stats() against cudaMemGetInfo, and the host
            time of a first call at a new m of a warm bucket against a
            warm call's.
  lifetime  a graph captured at one m, the workspace grown under it by an
            eager call: replays right; once the graph is destroyed and one
            eager call runs, memory_stats() holds no retired bytes.
  decode    80 layers of torch.matmul(y @ w, w.t(), out=buf); all_reduce(buf)
            at growing then shrinking B, on plain and st.empty buffers
            mixed, graphs kept or dropped, tensors freed so addresses are
            reused; every replay checked against the same step without
            symmtune (world 1) or NCCL's all-reduce.
  compile   a TP MLP under torch.compile(dynamic=True) at --tokens token
            counts, right against the eager MLP, memory bounded.
  threads   two threads of each rank making first and steady calls (agmm in
            one, matmulrs in the other) on one group and one stream: every
            result right, no error.

One line per check: CHECK name: PASS|FAIL, then its figures.
    torchrun --nproc_per_node=1 bench/runtime_check.py
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import threading
import time

import torch
import torch.distributed as dist

import symmtune.torch as st
from symmtune import _native

BF16 = torch.bfloat16
MiB = 1 << 20
# What memory_stats() may miss of the driver's count while symmtune's calls
# run: the CUDA context's own growth as kernels launch (local memory,
# launch queues) and torch symm_mem's rounding of each workspace to its
# granularity.
ACCOUNT_SLACK = 16 * MiB


def used() -> int:
    free, total = torch.cuda.mem_get_info()
    return total - free


def rel(x: torch.Tensor, ref: torch.Tensor) -> float:
    return float((x.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-30))


def report(name: str, ok: bool, **figures) -> bool:
    if dist.get_rank() == 0:
        print(f"CHECK {name}: {'PASS' if ok else 'FAIL'} " + " ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
    return ok


MAX_MODULES = 5  # issue 54: a first call passes through at most 5 of symmtune's modules


def entered(fn, *args, **kw):
    """fn(*args, **kw)'s result and the symmtune modules its Python frames
    ran in (frame.f_globals['__name__']), in the order first entered: the
    calling thread's and those of threads it starts (sys.setprofile and
    threading.setprofile). A frame of a dataclass's generated method counts
    as its module's."""
    seen: list[str] = []

    def prof(frame, event, arg):
        if event == "call":
            name = frame.f_globals.get("__name__") or ""
            if name.startswith("symmtune") and name not in seen:
                seen.append(name)
    threading.setprofile(prof)
    sys.setprofile(prof)
    try:
        out = fn(*args, **kw)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return out, seen


def modules(args) -> bool:
    """The modules of first calls (see the module's note): the process's
    first all_gather_matmul, then a first matmul_reduce_scatter, all_reduce
    and, where the GPU has FP8 tensor cores, all_gather_scaled_matmul."""
    H, N, W = 1024, 2048, dist.get_world_size()
    g = torch.Generator(device="cuda").manual_seed(5)
    w = torch.randn(N, H, device="cuda", dtype=BF16, generator=g) / H ** 0.5
    a = torch.randn(192 // W, H, device="cuda", dtype=BF16, generator=g)
    limits = {"agmm": MAX_MODULES, "matmulrs": MAX_MODULES, "allreduce": MAX_MODULES}
    c, seen = entered(st.all_gather_matmul, a, w.t())
    found = {"agmm": seen}
    _, found["matmulrs"] = entered(st.matmul_reduce_scatter, c, w)
    _, found["allreduce"] = entered(st.all_reduce, torch.randn(3 * 4099, device="cuda", dtype=BF16, generator=g))
    if torch.cuda.get_device_capability() >= (8, 9):
        f8 = torch.float8_e4m3fn
        one = torch.ones(1, device="cuda")
        b8 = w.to(f8).t()  # the transpose of a contiguous [N, K]
        _, found["agmm_e4m3"] = entered(st.all_gather_scaled_matmul, a.to(f8), b8, one, one)
        limits["agmm_e4m3"] = MAX_MODULES + 1
    torch.cuda.synchronize()
    ok = all(len(found[k]) <= limits[k] for k in found)
    return report("modules", ok, **{k: f"{len(v)}/{limits[k]}:" + "+".join(m.removeprefix("symmtune.") for m in v)
                                    for k, v in found.items()})


def memory(args) -> bool:
    H, I, W = 4096, 14336, dist.get_world_size()
    g = torch.Generator(device="cuda").manual_seed(1)
    w1 = torch.randn(I, H, device="cuda", dtype=BF16, generator=g) / H ** 0.5
    w2 = torch.randn(H, I, device="cuda", dtype=BF16, generator=g) / I ** 0.5
    x = torch.randn(12288, H, device="cuda", dtype=BF16, generator=g)
    ms = sorted({W * max(1, (64 + 11 * i) // W) for i in range(args.shapes)})
    torch.cuda.synchronize()
    base, base_torch, base_stats = used(), torch.cuda.memory_reserved(), st.memory_stats()
    worst, wrong = 0.0, 0
    first_host, second_host, warm_host = [], [], []
    # The library's share of each timed call (symmtune_gemm_enqueue alone,
    # its ctypes call included): the rest of the host time is Python's.
    native: dict[str, list[float]] = {"first": [], "second": [], "warm": []}
    last_native = [0.0]
    enqueue = _native.gemm_enqueue

    def timed_enqueue(*a):
        t = time.perf_counter()
        try:
            return enqueue(*a)
        finally:
            last_native[0] = time.perf_counter() - t

    _native.gemm_enqueue = timed_enqueue
    # With SYMMTUNE_CALL_TIMES set, the library times each host step of
    # its GEMM calls (internal/calltime): per kind of call, each step's
    # median over the calls, to find where a first call's time goes.
    steps: dict[str, dict[str, list[float]]] = {"first": {}, "second": {}, "warm": {}}

    def took(kind: str) -> None:
        for label, v in _native.call("runtime.call_times").items():
            steps[kind].setdefault(label, []).append(v["sum_us"])
    _native.call("runtime.call_times")  # forget the earlier checks' steps
    side = torch.cuda.Stream() if args.side_stream else None
    seen_buckets: set[int] = set()
    # The driver's growth while symmtune's calls run (the reference checks'
    # torch and NCCL work, which loads kernels of its own, left out),
    # beyond torch's allocator: what memory_stats() must account for.
    ours = 0
    for i, m in enumerate(ms):
        a = x[: m // W]
        bucket = 1 << max(6, (m - 1).bit_length())
        # torch's allocator warm for the output's size, as a serving engine's
        # is: the host time is symmtune's (its runner for m), not cudaMalloc's.
        torch.empty(m, I, device="cuda", dtype=BF16)  # freed at once, its block cached
        u0, r0 = used(), torch.cuda.memory_reserved()
        _native.call("runtime.call_times")
        with torch.cuda.stream(side) if side is not None else contextlib.nullcontext():
            t0 = time.perf_counter()
            c = st.all_gather_matmul(a, w1.t())
            t1 = time.perf_counter()
        if side is not None:
            torch.cuda.current_stream().wait_stream(side)
        if bucket in seen_buckets:
            first_host.append(t1 - t0)
            native["first"].append(last_native[0])
            took("first")
            # Three more calls at m, their outputs dropped: the second call
            # at an output address launches, the next captures the call's
            # graph (graph=1 configs), the last replays it: a serving
            # engine's steady state at m (warm).
            times, natives = [], []
            for kind in ("second", "", "warm"):
                torch.cuda.synchronize()
                _native.call("runtime.call_times")
                with torch.cuda.stream(side) if side is not None else contextlib.nullcontext():
                    t2 = time.perf_counter()
                    st.all_gather_matmul(a, w1.t())
                    times.append(time.perf_counter() - t2)
                natives.append(last_native[0])
                if kind:
                    took(kind)
            if side is not None:
                torch.cuda.current_stream().wait_stream(side)
            second_host.append(times[0])
            warm_host.append(times[-1])
            native["second"].append(natives[0])
            native["warm"].append(natives[-1])
        seen_buckets.add(bucket)
        r = st.matmul_reduce_scatter(c, w2.t())
        ours += (used() - u0) - (torch.cuda.memory_reserved() - r0)
        if i % 97 == 0 or i == len(ms) - 1:
            full = torch.empty(m, H, device="cuda", dtype=BF16)
            dist.all_gather_into_tensor(full, a.contiguous())
            ref_c = full.float() @ w1.t().float()
            ref_r = (c.float() @ w2.t().float())  # this rank's partial; the sum's rows below
            part = torch.empty(m // W, H, device="cuda", dtype=torch.float32)
            dist.reduce_scatter_tensor(part, ref_r)
            e = max(rel(c, ref_c), rel(r, part))
            worst = max(worst, e)
            wrong += e > 2e-2
        del c, r
    _native.gemm_enqueue = enqueue
    torch.cuda.synchronize()
    gc.collect()
    for kind, by in steps.items():
        if by:
            print(f"  {kind} call's host steps in the library (median µs over {max(len(v) for v in by.values())} calls): "
                  + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in sorted(by.items(), key=lambda kv: -statistics.median(kv[1]))),
                  flush=True)
    stats = st.memory_stats()
    grown = used() - base
    torch_grown = torch.cuda.memory_reserved() - base_torch
    # Deltas from the base: earlier checks' workspaces and engine are in it.
    beyond = grown - torch_grown - (stats["symmetric_bytes"] - base_stats["symmetric_bytes"])
    ratio = statistics.median(first_host) / statistics.median(warm_host) if warm_host else float("nan")
    # memory_stats() must name every byte symmtune holds: what the driver
    # says the process gained beyond torch's allocator and the symmetric
    # bytes, against the library's count (engine and pool).
    unaccounted = (ours - (stats["symmetric_bytes"] - base_stats["symmetric_bytes"])
                   - (stats["device_bytes"] - base_stats["device_bytes"]))
    ok = (wrong == 0 and stats["device_bytes"] <= 512 * MiB and beyond <= 512 * MiB
          and abs(unaccounted) <= ACCOUNT_SLACK)
    return report("memory", ok, shapes=len(ms), worst_rel=f"{worst:.2e}", device_used_growth_MiB=grown // MiB,
                  torch_reserved_growth_MiB=torch_grown // MiB, symmetric_MiB=stats["symmetric_bytes"] // MiB,
                  beyond_MiB=beyond // MiB, stats_device_MiB=stats["device_bytes"] // MiB,
                  stats_engine_MiB=stats["engine_bytes"] // MiB, stats_pool_MiB=stats["pool_bytes"] // MiB,
                  unaccounted_MiB=f"{unaccounted / MiB:.1f}", units=stats["units"],
                  first_call_host_us=f"{1e6 * statistics.median(first_host):.0f}" if first_host else "-",
                  warm_call_host_us=f"{1e6 * statistics.median(warm_host):.0f}" if warm_host else "-",
                  first_over_warm=f"{ratio:.2f}",
                  second_call_host_us=f"{1e6 * statistics.median(second_host):.0f}" if second_host else "-",
                  **{f"{k}_call_library_us": f"{1e6 * statistics.median(v):.0f}" if v else "-"
                     for k, v in native.items()})


def lifetime(args) -> bool:
    H, N, W = 4096, 4096, dist.get_world_size()
    g = torch.Generator(device="cuda").manual_seed(2)
    w = torch.randn(N, H, device="cuda", dtype=BF16, generator=g) / H ** 0.5
    a = torch.randn(256 // W, H, device="cuda", dtype=BF16, generator=g)
    st.all_gather_matmul(a, w.t())  # warm-up
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = st.all_gather_matmul(a, w.t())
    big = torch.randn(32768 // W, H, device="cuda", dtype=BF16, generator=g)
    st.all_gather_matmul(big, w.t())  # grows the GEMM workspace under the graph
    del big
    held = st.memory_stats()
    worst = 0.0
    for _ in range(10):
        a.copy_(torch.randn(a.shape, device="cuda", dtype=BF16, generator=g))
        graph.replay()
        full = torch.empty(256, H, device="cuda", dtype=BF16)
        dist.all_gather_into_tensor(full, a)
        worst = max(worst, rel(out, full.float() @ w.t().float()))
    del graph, out
    gc.collect()
    torch.cuda.synchronize()
    st.all_gather_matmul(a, w.t())  # one eager call
    after = st.memory_stats()
    ok = worst < 2e-2 and held["retired_bytes"] > 0 and after["retired_bytes"] == 0 and after["graph_held_units"] == 0
    return report("lifetime", ok, worst_rel=f"{worst:.2e}", retired_before_MiB=held["retired_bytes"] // MiB,
                  retired_after=after["retired_bytes"], graph_held_after=after["graph_held_units"])


def decode(args) -> bool:
    H, L, W = 8192, args.layers, dist.get_world_size()
    g = torch.Generator(device="cuda").manual_seed(3)
    w = torch.randn(H, H, device="cuda", dtype=BF16, generator=g) / H ** 0.5

    def step(y: torch.Tensor, buf: torch.Tensor, ar) -> None:
        for _ in range(L):
            torch.matmul(y @ w, w.t(), out=buf)
            ar(buf)
            y = buf

    def nccl(t: torch.Tensor) -> None:
        dist.all_reduce(t)

    worst, wrong, replays = 0.0, 0, 0
    sizes = [1, 16, 64, 256, 256, 64, 16, 1]
    for keep in (False, True):
        kept = []
        for rnd in range(args.rounds):
            for B in sizes:
                bufs = {"plain": torch.empty(B, H, device="cuda", dtype=BF16), "empty": st.empty(B * H, BF16).view(B, H)}
                ys = {k: torch.empty(B, H, device="cuda", dtype=BF16) for k in bufs}
                graphs = {}
                for k, buf in bufs.items():
                    ys[k].copy_(torch.randn(B, H, device="cuda", dtype=BF16, generator=g))
                    step(ys[k], buf, st.all_reduce)  # the one warm-up
                    torch.cuda.synchronize()
                    gr = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(gr):
                        step(ys[k], buf, st.all_reduce)
                    graphs[k] = gr
                for _ in range(args.replays):
                    for k, buf in bufs.items():
                        ys[k].copy_(torch.randn(B, H, device="cuda", dtype=BF16, generator=g))
                        graphs[k].replay()
                        ref_buf = torch.empty_like(buf)
                        step(ys[k].clone(), ref_buf, nccl)
                        e = rel(buf, ref_buf)
                        worst, wrong, replays = max(worst, e), wrong + (e > 2e-2), replays + 1
                if keep:
                    kept.append((graphs, bufs, ys))
                del graphs, bufs, ys
                gc.collect()
        del kept
        gc.collect()
    torch.cuda.synchronize()
    return report("decode", wrong == 0, replays=replays, wrong=wrong, worst_rel=f"{worst:.2e}", layers=L,
                  sizes="/".join(map(str, sizes)), rounds=args.rounds)


def compiled(args) -> bool:
    """A TP MLP under torch.compile(dynamic=True) at --tokens token counts:
    right, and the device memory beyond torch's and the symmetric bytes
    bounded as in memory."""
    H, I, W = 4096, 14336, dist.get_world_size()
    g = torch.Generator(device="cuda").manual_seed(4)
    w1 = torch.randn(I // W, H, device="cuda", dtype=BF16, generator=g) / H ** 0.5
    w2 = torch.randn(H, I // W, device="cuda", dtype=BF16, generator=g) / I ** 0.5

    def mlp(x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(st.all_gather_matmul(x, w1.t()))
        return st.matmul_reduce_scatter(h, w2.t())

    fn = torch.compile(mlp, dynamic=True)
    torch.cuda.synchronize()
    base, base_torch = used(), torch.cuda.memory_reserved()
    worst, wrong, t0 = 0.0, 0, time.perf_counter()
    counts = [W * (64 + 37 * i) for i in range(args.tokens)]
    for i, t in enumerate(counts):
        x = torch.randn(t // W, H, device="cuda", dtype=BF16, generator=g)
        y = fn(x)
        if i % 23 == 0:
            ref = mlp(x)
            e = rel(y, ref)
            worst, wrong = max(worst, e), wrong + (e > 2e-2)
    torch.cuda.synchronize()
    stats = st.memory_stats()
    beyond = used() - base - (torch.cuda.memory_reserved() - base_torch) - stats["symmetric_bytes"]
    ok = wrong == 0 and beyond <= 512 * MiB and stats["device_bytes"] <= 512 * MiB
    return report("compile", ok, tokens=len(counts), worst_rel=f"{worst:.2e}", beyond_MiB=beyond // MiB,
                  stats_device_MiB=stats["device_bytes"] // MiB, units=stats["units"],
                  seconds=f"{time.perf_counter() - t0:.0f}")


def threads(args) -> bool:
    """Two threads of one rank, each making first calls (new row buckets,
    new row counts) and steady calls on one group, on the same stream (the
    documented rule: a process's calls are ordered on the GPU): every
    result right against fp32, no error. Each thread has its own
    operands; the checks run after both joined."""
    H, I, W = 2048, 5632, dist.get_world_size()
    g = torch.Generator(device="cuda").manual_seed(7)
    w1 = torch.randn(I, H, device="cuda", dtype=BF16, generator=g) / H ** 0.5
    w2 = torch.randn(H, I, device="cuda", dtype=BF16, generator=g) / I ** 0.5
    stream = torch.cuda.current_stream()
    results: dict[str, list] = {"agmm": [], "matmulrs": []}
    errors: list[BaseException] = []

    def run(kind: str, seed: int) -> None:
        try:
            torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
            gen = torch.Generator(device="cuda").manual_seed(seed)
            with torch.cuda.stream(stream):
                for i in range(args.thread_calls):
                    m = W * (40 + 97 * ((i * 7 + seed) % 60))  # buckets 64..8192, new and repeated
                    if kind == "agmm":
                        a = torch.randn(m // W, H, device="cuda", dtype=BF16, generator=gen)
                        results[kind].append((a, st.all_gather_matmul(a, w1.t())))
                    else:
                        a = torch.randn(m, I, device="cuda", dtype=BF16, generator=gen)
                        results[kind].append((a, st.matmul_reduce_scatter(a, w2.t())))
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=run, args=("agmm", 1)), threading.Thread(target=run, args=("matmulrs", 2))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    torch.cuda.synchronize()
    worst, wrong = 0.0, 0
    for a, c in results["agmm"]:
        full = torch.empty(a.shape[0] * W, H, device="cuda", dtype=BF16)
        dist.all_gather_into_tensor(full, a)
        e = rel(c, full.float() @ w1.t().float())
        worst, wrong = max(worst, e), wrong + (e > 2e-2)
    for a, r in results["matmulrs"]:
        part = torch.empty(a.shape[0] // W, H, device="cuda", dtype=torch.float32)
        dist.reduce_scatter_tensor(part, a.float() @ w2.t().float())
        e = rel(r, part)
        worst, wrong = max(worst, e), wrong + (e > 2e-2)
    n = len(results["agmm"]) + len(results["matmulrs"])
    ok = not errors and wrong == 0 and n == 2 * args.thread_calls
    return report("threads", ok, calls=n, wrong=wrong, worst_rel=f"{worst:.2e}",
                  errors="; ".join(f"{type(e).__name__}: {e}" for e in errors) or "none")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--checks", default="modules,memory,lifetime,decode,compile,threads")
    ap.add_argument("--thread-calls", type=int, default=40)
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--shapes", type=int, default=1000)
    ap.add_argument("--side-stream", action="store_true",
                    help="memory: make the timed calls on a stream of the check's own, not torch's default stream")
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--replays", type=int, default=5)
    args = ap.parse_args()
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    ok = True
    for name in args.checks.split(","):
        t0 = time.perf_counter()
        ok &= {"modules": modules, "memory": memory, "lifetime": lifetime, "decode": decode,
               "compile": compiled, "threads": threads}[name](args)
        if dist.get_rank() == 0:
            print(f"  ({name}: {time.perf_counter() - t0:.1f} s)", flush=True)
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()

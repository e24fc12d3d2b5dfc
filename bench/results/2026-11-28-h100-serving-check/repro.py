"""Issue 43's failures, as a serving program meets them (one warm-up,
graphs kept, growth after capture, ranks that disagree)."""
import os
import sys
import time
import statistics
import traceback

import torch
import torch.distributed as dist

import symmtune.torch as st
from symmtune import gemm
from symmtune.kernels import Choice

dist.init_process_group("nccl")
rank, w = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)
torch.manual_seed(1234 + rank)
RESULTS = []
NEW = hasattr(st, "memory_stats")


def report(name, ok, detail=""):
    t = torch.tensor([0 if ok else 1], device="cuda")
    dist.all_reduce(t)
    ok = t.item() == 0
    RESULTS.append(ok)
    if rank == 0:
        print(f"CHECK {name}: {'PASS' if ok else 'FAIL'} {detail}", flush=True)


def rel(got, want):
    if torch.isnan(got).any():
        return float("inf")
    return ((got.double() - want.double()).norm() / want.double().norm()).item()


def ref_ar(x):
    r = x.double()
    dist.all_reduce(r)
    return r


def ref_agmm(a_shard, b):
    parts = [torch.empty_like(a_shard, dtype=torch.float64) for _ in range(w)]
    dist.all_gather(parts, a_shard.double())
    return torch.cat(parts) @ b.double()


def ref_mmrs(a, b):
    full = a.double() @ b.double()
    dist.all_reduce(full)
    rows = a.shape[0] // w
    return full[rank * rows:(rank + 1) * rows]


def bf(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def case(name, fn):
    try:
        fn()
    except Exception as e:
        if rank == 0:
            traceback.print_exc()
        report(name, False, f"{type(e).__name__}: {str(e)[:300]}")


def uaf():
    # Capture a graph with a small all-reduce and a small agmm, then grow every workspace eagerly, then replay.
    x = bf(65536)
    a_s, b = bf(256 // w, 512), bf(512, 384)
    st.all_reduce(x.clone())
    st.all_gather_matmul(a_s, b)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.all_reduce(x)
        c = st.all_gather_matmul(a_s, b)
    big = bf(32 << 20)  # 64 MiB
    st.all_reduce(big)
    A, B = bf(4096 // w, 4096), bf(4096, 4096)
    st.all_gather_matmul(A, B)
    st.matmul_reduce_scatter(bf(4096, 4096), B)
    torch.cuda.synchronize()
    worst = 0.0
    for i in range(10):
        x.copy_(bf(65536)); a_s.copy_(bf(256 // w, 512))
        want_x, want_c = ref_ar(x.clone()), ref_agmm(a_s, b)
        c.fill_(float("nan"))
        g.replay()
        worst = max(worst, rel(x, want_x), rel(c, want_c))
    torch.cuda.synchronize()
    report("retired memory: graph replays after growth", worst < 1e-2, f"worst {worst:.2e}")


def decode():
    graphs = []
    for B in (1, 16, 64, 256):
        x = bf(B, 8192)
        st.all_reduce(x.clone())  # one warm-up
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(4):
                st.all_reduce(x)
        graphs.append((B, g, x))
    st.all_reduce(bf(64 << 20))  # prefill-size eager call
    worst = 0.0
    for B, g, x in graphs:
        x.copy_(bf(B, 8192) / 100)
        want = x.double()
        for _ in range(4):
            dist.all_reduce(want)
        g.replay()
        worst = max(worst, rel(x, want))
    torch.cuda.synchronize()
    report("decode graphs B=1..256 kept, then growth", worst < 2e-2, f"worst {worst:.2e}")


def layer(order, dims):
    m, k, n = dims
    x_s, w1 = bf(m // w, k), bf(k, n)
    w2 = bf(n, k)
    r = bf(3000 + m)
    calls = {"agmm": lambda: st.all_gather_matmul(x_s, w1),
             "mmrs": lambda: st.matmul_reduce_scatter(bf(m, n), w2),
             "ar": lambda: st.all_reduce(r.clone())}
    for op in order:
        calls[op]()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        h = st.all_gather_matmul(x_s, w1)
        y = st.matmul_reduce_scatter(h, w2)
        st.all_reduce(r)
    worst = 0.0
    for _ in range(20):
        x_s.copy_(bf(m // w, k)); r.copy_(bf(3000 + m))
        want_h = ref_agmm(x_s, w1)
        want_r = ref_ar(r.clone())
        y.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        worst = max(worst, rel(h, want_h), rel(r, want_r), rel(y, ref_mmrs(h.clone(), w2)))
    report(f"layer one warm-up order {'/'.join(order)}", worst < 2e-2, f"worst {worst:.2e}")


def capture_error():
    ok = False
    try:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            st.all_gather_matmul(bf(640 // w, 96), bf(96, 80))
    except RuntimeError as e:
        ok = "warm-up" in str(e) and (not NEW or isinstance(e, st.CaptureError))
    a, b = bf(640 // w, 96), bf(96, 80)
    c = st.all_gather_matmul(a, b)
    err = rel(c, ref_agmm(a, b))
    report("capture-time error, then eager right", ok and err < 1e-2, f"err {err:.2e}")


def disagree():
    # rank 0 chooses the fused tile, rank 1 its cache's default
    orig = gemm.choose_runnable
    fused = dict(impl="fused:128x256:s4:c2:g8", chunks=2, streams=1, algo=0, sm_reserve=0, batch=0, graph=1,
                 copy="ce", copy_blocks=4, direction="pull")

    def forced(kernel, p, dtype, cache=None, hardware=None, no_fused=None):
        if rank == 0 and kernel == gemm.AGMM:
            return Choice(dict(fused), "forced")
        return orig(kernel, p, dtype, cache, hardware, no_fused)
    gemm.choose_runnable = forced
    try:
        a, b = bf(2048 // w, 1024), bf(1024, 1536)
        c = st.all_gather_matmul(a, b)
        err = rel(c, ref_agmm(a, b))
    finally:
        gemm.choose_runnable = orig
    report("disagreeing ranks: agmm", err < 1e-2, f"err {err:.2e}")


def host():
    x = bf(2048)
    a, b = bf(4096 // w, 4096), bf(4096, 1792)
    aa = bf(4096, 4096)
    for name, fn in (("all_reduce 4KiB", lambda: st.all_reduce(x)),
                     ("agmm 4096x1792x4096", lambda: st.all_gather_matmul(a, b)),
                     ("mmrs 4096x1792x4096", lambda: st.matmul_reduce_scatter(aa, b))):
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        ts = []
        reps = 1000 if "4KiB" in name else 300
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        ts.sort()
        if rank == 0:
            print(f"HOST {name}: median {statistics.median(ts) * 1e6:.2f} us p10 {ts[len(ts) // 10] * 1e6:.2f}", flush=True)


def decode_time():
    """Per-all-reduce cost in a graphed 80-layer step: (step - step without all-reduces) / 80, in place and plain."""
    for B in (1, 16):
        w_ = bf(8192, 8192) / 90
        x0 = bf(B, 8192)
        sym = st.empty(B * 8192).view(B, 8192)
        plain = torch.empty(B, 8192, device="cuda", dtype=torch.bfloat16)
        res = {}
        for kind in ("none", "inplace", "plain"):
            def step():
                h = x0
                for _ in range(80):
                    if kind == "inplace":
                        torch.matmul(h, w_, out=sym); st.all_reduce(sym.view(-1)); h = sym
                    elif kind == "plain":
                        torch.matmul(h, w_, out=plain); st.all_reduce(plain); h = plain
                    else:
                        h = torch.matmul(h, w_)
                return h
            step()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                step()
            for _ in range(5):
                g.replay()
            ts = []
            for _ in range(30):
                dist.barrier(); torch.cuda.synchronize()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(); g.replay(); e1.record(); e1.synchronize()
                ts.append(e0.elapsed_time(e1) * 1000)
            res[kind] = statistics.median(ts)
        if rank == 0:
            print(f"DECODE B={B}: in place {(res['inplace'] - res['none']) / 80:.2f} us, plain {(res['plain'] - res['none']) / 80:.2f} us per all-reduce (step none {res['none']:.1f})", flush=True)


parts = sys.argv[1:] or ["host", "uaf", "decode", "layer", "capture", "disagree"]
if "host" in parts:
    case("host", host)
if "dtime" in parts:
    case("decode time", decode_time)
if "uaf" in parts:
    case("retired memory: graph replays after growth", uaf)
if "decode" in parts:
    case("decode graphs B=1..256 kept, then growth", decode)
if "layer" in parts:
    import itertools
    for i, order in enumerate(itertools.permutations(["agmm", "mmrs", "ar"])):
        case(f"layer one warm-up order {'/'.join(order)}", lambda order=order, i=i: layer(order, (256 * (i + 1), 512, 384)))
if "capture" in parts:
    case("capture-time error, then eager right", capture_error)
if "disagree" in parts:
    case("disagreeing ranks: agmm", disagree)
if NEW and rank == 0:
    print("MEMORY", st.memory_stats(), flush=True)
if rank == 0:
    print(f"{sum(RESULTS)} passed, {len(RESULTS) - sum(RESULTS)} failed", flush=True)
dist.barrier()
dist.destroy_process_group()

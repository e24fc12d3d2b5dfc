"""symmtune's registered torch ops on W GPUs: correct eagerly, in a user's
CUDA graph, under torch.compile; their host time; and a graphed decode step.

    PYTHONPATH=python:bench torchrun --nproc-per-node 2 bench/torch_ops.py [check] [compile] [host] [decode] [ar_graph]

AR_FORCE='NAME=SPEC;...' (bench/ar_force.py) adds all_reduce rows with
forced configs: check's all_reduce cases again, and decode's and
ar_graph's NAME_staged and NAME_inplace beside symmtune's own.

check: each op (all_reduce on a plain tensor and on one from
symmtune.torch.empty, all_gather_matmul, matmul_reduce_scatter; the GEMMs
with the config the cache gives, and with a fused config forced) run eagerly
and captured in a torch.cuda.graph that is replayed 100 times, each replay
on fresh random inputs copied into the graph's static inputs and checked
against a float64 reference (relative error under 1e-2; every output element
poisoned with NaN before the replay). Both the public functions and
torch.ops.symmtune.* are captured.
Then two_shot_push and two_shot_overlap forced on plain tensors (their
direct entry; a misaligned one staged), 16 KiB to 64 MiB, odd sizes among
them, and on sizes up to 16 MiB called back to back.
compile: a tensor-parallel MLP block (AG+MM, MM+RS, then an all-reduce)
under torch.compile(fullgraph=True) and mode="reduce-overhead", against
eager, with inductor's cudagraph counters.
host: each call's host time, back to back (the median of each call's wall
time on the host, nothing synchronised), beside its GPU time (each call
queued behind a barrier and a device sleep: peer_method.bench_queued) and
torch.mm's.
decode: 80 layers of [B, 8192] bf16 with one all-reduce each, captured in one
CUDA graph: no all-reduce, NCCL, torch symm_mem two-shot and one-shot (in
place on a symmetric buffer the matmul writes into), symmtune staged and
symmtune in place (a tensor from symmtune.torch.empty). Per-all-reduce cost
= (step - step without all-reduces) / 80.
ar_graph: all_reduce per call inside a CUDA graph of 20 calls (the ":graph"
rows of shared/bench/peer_baselines.py), symmtune beside NCCL and symm_mem.

Prints lines "section,name,key,value" and FAIL lines; exits 1 on any failure.
"""
from __future__ import annotations

import os
import sys
import time

import torch
import torch.distributed as dist

import symmtune.torch as st
from symmtune import _torch_gemm, gemm
from peer_method import bench_queued, host_time, warm_and_capture
from torch_common import FAILS, TOL, fail, fresh, out, rel_err  # noqa: F401 - torch_edge.py imports them from here
from torch_decode import ar_graph, decode
import ar_force


# The fused config each GEMM kernel runs when FORCED names it (the cache of a
# fresh machine gives the default pipeline).
FUSED = {
    gemm.AGMM: dict(impl="fused:128x256:s4:c2:g8", chunks=2, streams=1, algo=0, sm_reserve=0, batch=0, graph=1,
                    copy="ce", copy_blocks=4, direction="pull"),
    gemm.MATMULRS: dict(impl="fused:128x256:s4:c2:g8", chunks=2, streams=1, algo=0, sm_reserve=0, batch=0, graph=1,
                        push="gemm", reduce_blocks=132, reduce="kernel"),
}
# The default pipeline configs with graph=0: every call enqueues the launch
# sequence itself (host: what a call costs without a graph to replay).
DIRECT = {
    gemm.AGMM: dict(impl="pipeline", chunks=2, streams=1, algo=0, sm_reserve=0, batch=0, graph=0,
                    copy="ce", copy_blocks=4, direction="pull"),
    gemm.MATMULRS: dict(impl="pipeline", chunks=2, streams=1, algo=0, sm_reserve=0, batch=0, graph=0,
                        push="ce", reduce_blocks=132, reduce="kernel"),
}
# The configs symmtune.torch runs instead of choosing, by kernel.
FORCED = _torch_gemm.forced


def on_world(configs: dict, world: int) -> dict:
    """configs (FUSED or DIRECT) as a team of `world` may run them: one
    chunk on one rank, where there is no communication to overlap (the
    plugins' Validate refuses more)."""
    return {k: dict(c, chunks=1) if world == 1 else dict(c) for k, c in configs.items()}


def reset_gemm() -> None:
    """Forgets every GEMM op's runner (closing the Go side), so the next
    call chooses its config again."""
    _torch_gemm.reset()


# ---------------------------------------------------------------- references
def ref_all_reduce(src: torch.Tensor) -> torch.Tensor:
    r = src.double()
    dist.all_reduce(r)
    return r


def ref_agmm(a_shard: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    w = dist.get_world_size()
    parts = [torch.empty_like(a_shard, dtype=torch.float64) for _ in range(w)]
    dist.all_gather(parts, a_shard.double())
    return torch.cat(parts) @ b.double()


def ref_gather(a_shard: torch.Tensor) -> torch.Tensor:
    parts = [torch.empty_like(a_shard, dtype=torch.float64) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, a_shard.double())
    return torch.cat(parts)


def ref_mmrs(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    full = a.double() @ b.double()
    dist.all_reduce(full)
    rows = a.shape[0] // dist.get_world_size()
    r = dist.get_rank()
    return full[r * rows:(r + 1) * rows]


# --------------------------------------------------------------------- check
def check_graph(name: str, inputs: list[torch.Tensor], run, result, ref, replays: int, seed: int) -> None:
    """Warm run eagerly, capture run() in a CUDA graph, then replay it
    `replays` times, each on fresh random inputs copied into the static
    inputs, the result poisoned first, checked against ref(inputs)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    try:
        g, outs = warm_and_capture(run)
    except Exception as e:  # noqa: BLE001 - reported as a failure with its message
        fail(f"{name}: capture failed: {type(e).__name__}: {e}")
        return
    worst, bad = 0.0, 0
    for i in range(replays):
        for x in inputs:
            x.copy_(fresh(x.shape, gen, x.dtype))
        want = ref([x.clone() for x in inputs])
        got = result(outs)
        if got.data_ptr() not in [x.data_ptr() for x in inputs]:
            got.fill_(float("nan"))
        g.replay()
        err = rel_err(got, want)
        worst = max(worst, err)
        if not err <= TOL:
            bad += 1
            if bad <= 3:
                fail(f"{name}: replay {i}: rel err {err:.3g}")
    torch.cuda.synchronize()
    t = torch.tensor([worst], device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    out("check", name, f"graph x{replays}", f"{'ok' if not bad else 'WRONG'} worst {t.item():.2e}")


def check_eager(name: str, inputs, run, result, ref, seed: int, trials: int = 3) -> None:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    worst = 0.0
    for _ in range(trials):
        for x in inputs:
            x.copy_(fresh(x.shape, gen, x.dtype))
        want = ref([x.clone() for x in inputs])
        err = rel_err(result(run()), want)
        worst = max(worst, err)
        if not err <= TOL:
            fail(f"{name}: eager rel err {err:.3g}")
    out("check", name, "eager", f"worst {worst:.2e}")


def check(replays: int = 100) -> None:
    rank, g = dist.get_rank(), dist.group.WORLD.group_name
    w = dist.get_world_size()
    # The cache's configs, then AR_FORCE's (ar_force.py), each on its own tensors.
    for tag, spec in [("", None), *((f"[{k}]", v) for k, v in ar_force.parse().items())]:
        for n in (2048, 8192, 1 << 19, 1 << 21):
            for dt in (torch.bfloat16, torch.float32):
                if dt == torch.float32 and n != 8192:
                    continue
                for path in ("staged", "empty", "op"):
                    ar_force.use(spec)
                    x = st.empty(n, dt) if path == "empty" else torch.empty(n, dtype=dt, device="cuda")

                    def run(x=x, path=path):
                        if path == "op":
                            torch.ops.symmtune.all_reduce_(x, g)
                        else:
                            st.all_reduce(x)
                        return x
                    name = f"all_reduce{tag}:{path}:{str(dt)[6:]}:n={n}"
                    check_eager(name, [x], run, lambda o: o, lambda xs: ref_all_reduce(xs[0]), 11 + rank)
                    check_graph(name, [x], run, lambda o: o, lambda xs: ref_all_reduce(xs[0]), replays, 23 + rank)
                    if tag:
                        c = st._choices[(g, dt, n)]
                        out("config", name, "-", f"{c['source']} {c['config']}".replace(",", ";"))
    ar_force.use(None)
    # A first call inside a capture that needs its layout made (here: a
    # larger all-reduce workspace than the calls above made, a new GEMM
    # problem) says what to do, in one line. (A new size that fits the
    # workspace and a compiled kernel simply runs.)
    for name, first in (("all_reduce", lambda: st.all_reduce(torch.empty(1 << 24, dtype=torch.bfloat16, device="cuda"))),
                        ("agmm", lambda: st.all_gather_matmul(torch.empty(64 // w, 96, dtype=torch.bfloat16, device="cuda"),
                                                              torch.empty(96, 80, dtype=torch.bfloat16, device="cuda")))):
        try:
            with torch.cuda.graph(torch.cuda.CUDAGraph()):
                first()
            fail(f"{name}: a first call inside a capture raised nothing")
        except RuntimeError as e:
            said = "warm-up" in str(e)
            if not said:
                fail(f"{name}: a first call inside a capture: {e}")
            out("check", f"{name}:first call in capture", "error", f"{'ok' if said else 'WRONG'}: {str(e)[:90]}")
    # After the capture error above: its all-reduce must find the workspace
    # too small, and these calls grow it past 16 MiB.
    check_direct(replays)
    for impl in ("cache", "fused"):
        FORCED.clear()
        if impl == "fused":
            FORCED.update(on_world(FUSED, w))
        reset_gemm()
        for (m, n, k), reps in (((1024, 512, 1024), replays), ((4096, 1792, 4096), 10)):
            a_shard = torch.empty(m // w, k, dtype=torch.bfloat16, device="cuda")
            a = torch.empty(m, k, dtype=torch.bfloat16, device="cuda")
            b = torch.empty(k, n, dtype=torch.bfloat16, device="cuda")
            cases = [
                ("agmm", [a_shard, b], lambda: st.all_gather_matmul(a_shard, b), lambda o: o,
                 lambda xs: ref_agmm(*xs)),
                ("agmm:op", [a_shard, b], lambda: torch.ops.symmtune.all_gather_matmul(a_shard, b, g), lambda o: o,
                 lambda xs: ref_agmm(*xs)),
                ("agmm:return_a", [a_shard, b], lambda: st.all_gather_matmul(a_shard, b, return_a=True),
                 lambda o: o[1], lambda xs: ref_agmm(*xs)),
                ("agmm:return_a:A", [a_shard, b], lambda: st.all_gather_matmul(a_shard, b, return_a=True),
                 lambda o: o[0], lambda xs: ref_gather(xs[0])),
                ("mmrs", [a, b], lambda: st.matmul_reduce_scatter(a, b), lambda o: o, lambda xs: ref_mmrs(*xs)),
                ("mmrs:op", [a, b], lambda: torch.ops.symmtune.matmul_reduce_scatter(a, b, g), lambda o: o,
                 lambda xs: ref_mmrs(*xs)),
            ]
            for cname, ins, run, res, ref in cases:
                name = f"{cname}:{impl}:{m}x{n}x{k}"
                try:
                    check_eager(name, ins, run, res, ref, 31 + rank)
                except Exception as e:  # noqa: BLE001
                    fail(f"{name}: eager: {type(e).__name__}: {e}")
                    continue
                check_graph(name, ins, run, res, ref, reps, 41 + rank)
            pipe = next(iter(_torch_gemm.opened()), None)
            if pipe is not None:
                out("check", f"config:{impl}:{m}x{n}x{k}", pipe.choice.source, str(pipe.choice.config).replace(",", ";"))
    FORCED.clear()
    reset_gemm()


def check_direct(replays: int) -> None:
    """The push two-shots on plain tensors (issue 45), forced: aligned
    tensors run their direct entry (any n: the odd sizes end part-way
    through a vector and are not a multiple of the world size), a tensor
    one element off 16-byte alignment is staged; each eagerly and in a
    graph (fewer replays from 16 MiB up), from 16 KiB to 64 MiB and more.
    Then calls of shrinking and growing sizes (up to 16 MiB and more) back
    to back with no sync between them, every result checked: a smaller
    call's scatter must not land on the sum a previous call is still
    copying out (the Runner's region by thirds)."""
    rank = dist.get_rank()
    mib = 1 << 20
    for algo in ("two_shot_push", "two_shot_overlap"):
        ar_force.use({"algorithm": algo})
        for dt in (torch.bfloat16, torch.float32):
            elt = torch.empty((), dtype=dt).element_size()
            big = (16 * mib // elt, 16 * mib // elt + 5, 64 * mib // elt + 3)
            for n in (8192, 8195, (1 << 19) + 5, 1 << 21, *big):
                for path in ("plain", "misaligned"):
                    if path == "plain":
                        x = torch.empty(n, dtype=dt, device="cuda")
                    else:
                        x = torch.empty(n + 1, dtype=dt, device="cuda")[1:]

                    def run(x=x):
                        st.all_reduce(x)
                        return x
                    name = f"all_reduce[{algo}]:{path}:{str(dt)[6:]}:n={n}"
                    check_eager(name, [x], run, lambda o: o, lambda xs: ref_all_reduce(xs[0]), 51 + rank)
                    reps = replays if n * elt < 16 * mib else min(replays, 20)
                    check_graph(name, [x], run, lambda o: o, lambda xs: ref_all_reduce(xs[0]), reps, 61 + rank)
        gen = torch.Generator(device="cuda").manual_seed(71 + rank)
        sizes = ((1 << 23) + 3, 1 << 18, (1 << 21) + 7, 8192, 1 << 23, 1 << 20)
        xs = [torch.empty(n, dtype=torch.bfloat16, device="cuda") for n in sizes]
        worst = 0.0
        for _ in range(20):
            for x in xs:
                x.copy_(fresh(x.shape, gen, x.dtype))
            want = [ref_all_reduce(x.clone()) for x in xs]
            for x in xs:
                st.all_reduce(x)
            worst = max([worst] + [rel_err(x, w) for x, w in zip(xs, want)])
        name = f"all_reduce[{algo}]:sizes {'/'.join(str(n) for n in sizes)} back to back"
        if not worst <= TOL:
            fail(f"{name}: rel err {worst:.3g}")
        out("check", name, "eager x20", f"{'ok' if worst <= TOL else 'WRONG'} worst {worst:.2e}")
    ar_force.use(None)


# ------------------------------------------------------------------- compile
def compile_check() -> None:
    """The block eagerly (5 calls: the pointer-keyed graphs capture at the
    second), under torch.compile(fullgraph=True), the same with every GEMM
    config's graph=0, and under mode="reduce-overhead", each call against a
    float64 reference of the block."""
    rank, w = dist.get_rank(), dist.get_world_size()
    tokens, hidden, inter = 1024, 1024, 2048
    gen = torch.Generator(device="cuda").manual_seed(5 + rank)
    x_shard = fresh((tokens // w, hidden), gen)
    w1 = fresh((hidden, inter // w), gen) * hidden ** -0.5
    w2 = fresh((inter // w, hidden), gen) * (inter // w) ** -0.5

    def block(x_shard, w1, w2):
        h = torch.relu(st.all_gather_matmul(x_shard, w1))
        y = st.matmul_reduce_scatter(h, w2)
        z = y * 2
        st.all_reduce(z)
        return y, z

    h_ref = torch.relu(ref_agmm(x_shard, w1)).to(torch.bfloat16)  # the block's h is bf16 too
    y_ref = ref_mmrs(h_ref, w2)
    z_ref = ref_all_reduce(2 * y_ref)
    tol = 2e-2

    def errs(f, n: int = 5, mark: bool = False) -> list[tuple[float, float]]:
        out_errs = []
        for _ in range(n):
            if mark:
                # reduce-overhead's graphs reuse their outputs' memory: mark
                # each step, and read the outputs before the next.
                torch.compiler.cudagraph_mark_step_begin()
            y, z = f(x_shard, w1, w2)
            out_errs.append((rel_err(y, y_ref), rel_err(z, z_ref)))
        torch.cuda.synchronize()
        return out_errs

    runs = [("eager", lambda: block, False, {}),
            ("fullgraph", lambda: torch.compile(block, fullgraph=True), False, {}),
            ("fullgraph:graph=0", lambda: torch.compile(block, fullgraph=True), False,
             {k: dict(c, impl="pipeline", graph=0) for k, c in on_world(FUSED, w).items()}),
            ("reduce-overhead", lambda: torch.compile(block, fullgraph=True, mode="reduce-overhead"), True, {})]
    for mode, make, mark, forced in runs:
        torch._dynamo.reset()
        FORCED.clear()
        FORCED.update(forced)
        reset_gemm()
        try:
            from torch._dynamo.utils import counters
            counters.clear()
        except ImportError:
            counters = {}
        try:
            e = errs(make(), mark=mark)
            worst = max(max(a, b) for a, b in e)
            ok = worst <= tol
            if not ok:
                fail(f"compile {mode}: rel errs (y, z) per call {[(f'{a:.2e}', f'{b:.2e}') for a, b in e]}")
            out("compile", mode, "rel err to float64", f"{'ok' if ok else 'WRONG'} {worst:.2e}")
            seen = {f"{k}.{n}": v for k, c in counters.items() for n, v in c.items()} if counters else {}
            out("compile", mode, "counters", str({k: v for k, v in seen.items() if "graph" in k or "skip" in k}).replace(",", ";"))
        except Exception as ex:  # noqa: BLE001
            fail(f"compile {mode}: {type(ex).__name__}: {str(ex)[:600]}")
    FORCED.clear()
    reset_gemm()


# ---------------------------------------------------------------------- host
def host() -> None:
    rank, w, g = dist.get_rank(), dist.get_world_size(), dist.group.WORLD.group_name
    gen = torch.Generator(device="cuda").manual_seed(7 + rank)

    @torch.library.custom_op("symmtune_bench::noop", mutates_args=())
    def noop(x: torch.Tensor) -> torch.Tensor:
        return x.new_empty(0)

    lib = torch.library.Library("symmtune_bench", "FRAGMENT")
    lib.define("noop_lib(Tensor x) -> ()")
    lib.impl("noop_lib", lambda x: None, "CUDA")
    x = fresh((16,), gen)
    out("host", "custom_op noop", "-", host_time(lambda: noop(x)))
    out("host", "Library op noop", "-", host_time(lambda: torch.ops.symmtune_bench.noop_lib(x)))
    v = fresh((1 << 19,), gen)
    out("host", "dist.all_reduce 1MiB", "-", host_time(lambda: dist.all_reduce(v)))
    out("host", "st.all_reduce 1MiB", "-", host_time(lambda: st.all_reduce(v)))
    out("host", "op all_reduce_ 1MiB", "-", host_time(lambda: torch.ops.symmtune.all_reduce_(v, g)))
    out("gpu", "st.all_reduce 1MiB", "queued", bench_queued(lambda: st.all_reduce(v)))
    ve = st.empty(v.numel(), v.dtype)  # in symmetric memory: no staging copies, what the search timed
    ve.copy_(v)
    out("host", "st.all_reduce 1MiB empty", "-", host_time(lambda: st.all_reduce(ve)))
    out("gpu", "st.all_reduce 1MiB empty", "queued", bench_queued(lambda: st.all_reduce(ve)))
    c = st._choices[(g, v.dtype, v.numel())]
    out("config", "st.all_reduce 1MiB", "-", f"{c['source']} {c['config']} cache median {c['median_us']} us".replace(",", ";"))
    for impl in ("cache", "fused", "direct"):
        FORCED.clear()
        FORCED.update(on_world({"fused": FUSED, "direct": DIRECT}.get(impl, {}), w))
        reset_gemm()
        for m, n, k in ((4096, 1792, 4096), (8192, 3584, 8192)):
            a_shard, a = fresh((m // w, k), gen), fresh((m, k), gen)
            b = fresh((n, k), gen).t()  # an nn.Linear weight's .t(): no per-call copy
            mm_a = fresh((m, k), gen)
            key = f"{m}x{n}x{k}"
            if impl == "cache":
                out("host", "torch.mm", key, host_time(lambda: torch.mm(mm_a, b), iters=30))
                out("gpu", "torch.mm", key, bench_queued(lambda: torch.mm(mm_a, b)))
            for name, fn in (("st.all_gather_matmul", lambda: st.all_gather_matmul(a_shard, b)),
                             ("op all_gather_matmul", lambda: torch.ops.symmtune.all_gather_matmul(a_shard, b, g)),
                             ("st.matmul_reduce_scatter", lambda: st.matmul_reduce_scatter(a, b)),
                             ("op matmul_reduce_scatter", lambda: torch.ops.symmtune.matmul_reduce_scatter(a, b, g))):
                try:
                    # 30 calls: the launch queue never fills, so the GPU's
                    # pace does not hold the host back.
                    out("host", f"{name}:{impl}", key, host_time(fn, iters=30))
                    if name.startswith("st."):
                        out("gpu", f"{name}:{impl}", key, bench_queued(fn))
                        kernel = gemm.AGMM if "gather" in name else gemm.MATMULRS
                        pipe = _torch_gemm.opened(kernel, m)[0]
                        out("config", f"{name}:{impl}", key, f"{pipe.choice.source} {pipe.choice.config} "
                            f"cache median {pipe.choice.median_us} us".replace(",", ";"))
                except Exception as e:  # noqa: BLE001
                    fail(f"host {name}:{impl} {key}: {type(e).__name__}: {e}")
    FORCED.clear()
    reset_gemm()


def main() -> None:
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    torch.zeros(1, device="cuda")
    what = sys.argv[1:] or ["check", "compile", "host", "decode", "ar_graph"]
    if rank == 0:
        print(f"# {torch.cuda.get_device_name()} x{dist.get_world_size()}, torch {torch.__version__}, "
              f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}", flush=True)
    for part in what:
        t0 = time.time()
        {"check": check, "compile": compile_check, "host": host, "decode": decode, "ar_graph": ar_graph}[part]()
        if rank == 0:
            print(f"# {part} took {time.time() - t0:.0f} s", flush=True)
    n = torch.tensor([len(FAILS)], device="cuda")
    dist.all_reduce(n)
    if rank == 0:
        print(f"# failures over ranks: {int(n.item())}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if n.item() else 0)


if __name__ == "__main__":
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    main()

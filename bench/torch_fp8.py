"""symmtune.torch's FP8 GEMMs (issue 30, docs/fp8.md) on W GPUs: correct,
then timed beside torch._scaled_mm alone, NCCL + _scaled_mm and torch's
fused scaled symm_mem ops.

    SYMMTUNE_CACHE=configs.toml PYTHONPATH=python:bench torchrun --nproc-per-node 2 bench/torch_fp8.py \
        [check] [graph] [time] [--shapes 8192x3584x8192,...] [--scales tensor,row] [--rounds 50]

Shapes are M x N x K with M the gathered (agmm) or total (matmulrs) rows;
default 8192x3584x8192, 16384x3584x8192 and 4096x1792x4096. Scales: tensor
(one fp32 each: dtype e4m3) and row (a_scale [rows, 1], b_scale [1, N]:
e4m3_row). B is always the transpose of a contiguous [N, K] e4m3 tensor.

check: for both kernels, every shape and scale kind, 2 calls on fresh
  inputs: e4m3 values q = e4m3(uniform(-1, 1) * 448) (the whole range,
  subnormals included), scales in [2^-9, 2^-8) (agmm tensor-wise: the same
  a_scale on every rank), the output's memory poisoned with NaN first (the
  caching allocator's block is filled and freed just before the call), every
  element scanned for NaN/Inf, and the relative RMS error ||C - R|| / ||R||
  against a float64 reference R of the dequantized operands (q * scale);
  tolerance 2e-2 (docs/fp8.md). _scaled_mm's own error on the same inputs is
  printed beside it. The config symmtune chose is printed (source: tuned,
  nearest or default).
graph: at a small shape (1024x512x1024), each op (the public functions and
  torch.ops.symmtune.*) captured in a torch.cuda.graph and replayed 20
  times on fresh inputs copied into the static ones, the output poisoned
  before each replay; then a block of both ops under
  torch.compile(fullgraph=True) and mode="reduce-overhead", against float64.
time: per kernel, shape and scale kind, interleaved rounds (peer_method.
  bench_paired, queued=True: each call behind a barrier across ranks and a
  device sleep, the Go host's method; peer_baselines.py's GEMM rows use the
  plain events-around-one-call method, but its numbers move with the
  GPUs' clocks by more than the differences here, hence paired rounds) of
    scaled_mm      torch._scaled_mm on the full [M, K] (use_fast_accum=True): the bound
    nccl           agmm: all_gather_into_tensor (bytes) of A (and, row-wise, of its
                   scales) + _scaled_mm; matmulrs: _scaled_mm + reduce_scatter_tensor
    torch_fused    torch.ops.symm_mem.fused_all_gather_scaled_matmul /
                   fused_scaled_matmul_reduce_scatter (use_fast_accum=True)
    symmtune       symmtune.torch.all_gather_scaled_matmul / scaled_matmul_reduce_scatter
  median µs of each, the max over ranks, and the median over rounds of each
  call's ratio to _scaled_mm in the same round; one table per kernel.
Probes for time and gtime: FP8_ONLY=a,b keeps only those calls (the
  first kept is the ratios' base when scaled_mm is not kept);
  FP8_KERNEL=agmm or matmulrs keeps one kernel's cases; FP8_UNQUEUED=1 runs
  the calls back to back, with no barrier or sleep between.
gtime: as time, but each call captured once in a CUDA graph and the graph
  replayed (a call that cannot be captured is left out, with the reason):
  like for like where a host path slower than the GPU would show in time's
  figures (small shapes; the FP8 ops' Python checks). Known failure
  (2 x H200, 2026-11-26): the first case faults with an illegal address once
  symmtune's graph and _scaled_mm's are replayed in alternation, though each
  op's graph replays correctly on its own (graph, at 4096 and 8192) and
  eagerly; see bench/results/2026-11-25-h200x2-fp8-torch.md.

Run with TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
NVSHMEM_DISABLE_NVLS=1 (bench/torch-fp8.sh sets them). Prints "section,..."
lines, markdown tables and FAIL lines; exits 1 on any failure.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Callable

import torch
import torch.distributed as dist

import symmtune.torch as st
from peer_method import bench_paired, warm_and_capture
from symmtune import gemm
from torch_fp8_cases import BF16, FP8, Case, cases, chosen, poison, rel_rms, reset, scaled_mm

TOL = 2e-2
SHAPES = "8192x3584x8192,16384x3584x8192,4096x1792x4096"
FAILS: list[str] = []


def out(*fields) -> None:
    if dist.get_rank() == 0:
        print(",".join(str(f) for f in fields), flush=True)


def fail(msg: str) -> None:
    FAILS.append(msg)
    print(f"FAIL rank {dist.get_rank()}: {msg}", flush=True)


def agree_max(x: float) -> float:
    t = torch.tensor([x], device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


# ------------------------------------------------------------------- check
def check(shapes, scales) -> None:
    for c in cases(shapes, scales):
        reset()
        worst, worst_mm, poisoned = 0.0, 0.0, 0
        try:
            for t in range(2):
                c.fill(t + 1)
                ref = c.reference()
                rows = c.m if c.kernel == gemm.AGMM else c.m // dist.get_world_size()
                where = poison(rows, c.n)
                got = c.ours()
                poisoned += got.data_ptr() == where
                torch.cuda.synchronize()
                err = rel_rms(got, ref)
                worst = max(worst, err)
                if not err <= TOL:
                    fail(f"check {c.label()}: call {t}: relative RMS error {err:.3g}"
                         f"{' (NaN/Inf in the output)' if err == float('inf') else ''}")
                a, sa = c.gathered()
                mm = scaled_mm(a, c.b, sa, c.b_scale)
                if c.kernel == gemm.MATMULRS:
                    part = torch.empty(rows, c.n, dtype=BF16, device="cuda")
                    dist.reduce_scatter_tensor(part, mm)
                    mm = part
                worst_mm = max(worst_mm, rel_rms(mm, ref))
                del ref, got, mm
        except Exception as e:  # noqa: BLE001 - reported with its message
            fail(f"check {c.label()}: {type(e).__name__}: {str(e)[:400]}")
            continue
        w, wm = agree_max(worst), agree_max(worst_mm)
        out("check", c.label(), "ok" if w <= TOL else "WRONG", f"rel_rms {w:.2e}", f"scaled_mm+nccl rel_rms {wm:.2e}",
            f"output over the poisoned block {poisoned}/2", chosen())
        torch.cuda.empty_cache()
    reset()


# ------------------------------------------------------------------- graph
def graph_check(replays: int = 20, shapes: list[tuple[int, int, int]] | None = None) -> None:
    g = dist.group.WORLD.group_name
    m, n, k = 1024, 512, 1024
    for c in cases(shapes or [(m, n, k)], ["tensor", "row"]):
        for form in ("st", "op"):
            name = f"graph:{c.label()}:{form}"
            reset()
            try:
                c.fill(1)
                run = c.ours if form == "st" else (lambda c=c: c.op(g))
                graph, res = warm_and_capture(run)
                worst = 0.0
                for i in range(replays):
                    c.fill(100 + i)
                    ref = c.reference()
                    res.fill_(float("nan"))
                    graph.replay()
                    torch.cuda.synchronize()
                    err = rel_rms(res, ref)
                    worst = max(worst, err)
                    if not err <= TOL:
                        fail(f"{name}: replay {i}: relative RMS error {err:.3g}")
                        break
                w = agree_max(worst)
                out("graph", name, f"x{replays}", "ok" if w <= TOL else "WRONG", f"rel_rms {w:.2e}")
                del graph
            except Exception as e:  # noqa: BLE001
                fail(f"{name}: {type(e).__name__}: {str(e)[:400]}")
    compile_check(m, n, k)
    reset()


def compile_check(m: int, n: int, k: int) -> None:
    """Both ops in one function (agmm's bf16 output quantized again for
    matmulrs, as an FP8 MLP does), eagerly, under torch.compile(fullgraph)
    and mode="reduce-overhead", each against float64."""
    w = dist.get_world_size()
    ag = Case(gemm.AGMM, m, n, k, row=True)
    ag.fill(7)
    rs = Case(gemm.MATMULRS, m, k, n, row=False)  # [M, N] @ [N, K]
    rs.fill(8)

    def block(a, b, sa, sb, w2t, s2):
        h = st.all_gather_scaled_matmul(a, b, sa, sb)
        amax = h.abs().amax().float().clamp(min=1e-12)
        hq = (h.float() * (448.0 / amax)).to(FP8)
        hs = (amax / 448.0).reshape(())
        return h, st.scaled_matmul_reduce_scatter(hq, w2t, hs, s2)

    h_ref = ag.reference()
    args = (ag.a, ag.b, ag.a_scale, ag.b_scale, rs.b, rs.b_scale)
    eager_h, _ = block(*args)
    # The reference of the second product from the same quantized h.
    amax = eager_h.abs().amax().float().clamp(min=1e-12)
    hq, hs = (eager_h.float() * (448.0 / amax)).to(FP8), (amax / 448.0)
    full = (hq.double() * hs.double()) @ (rs.b.double() * rs.b_scale.double())
    dist.all_reduce(full)
    r, rows = dist.get_rank(), m // w
    y_ref = full[r * rows:(r + 1) * rows]
    modes = [("eager", lambda: block, False), ("fullgraph", lambda: torch.compile(block, fullgraph=True), False),
             ("reduce-overhead", lambda: torch.compile(block, fullgraph=True, mode="reduce-overhead"), True)]
    for mode, make, mark in modes:
        torch._dynamo.reset()
        reset()
        try:
            f, worst = make(), 0.0
            for _ in range(4):
                if mark:
                    torch.compiler.cudagraph_mark_step_begin()
                h, y = f(*args)
                worst = max(worst, rel_rms(h, h_ref), rel_rms(y, y_ref))
            torch.cuda.synchronize()
            wm = agree_max(worst)
            if not wm <= TOL:
                fail(f"compile {mode}: relative RMS error {wm:.3g}")
            out("compile", mode, "ok" if wm <= TOL else "WRONG", f"rel_rms {wm:.2e}")
        except Exception as e:  # noqa: BLE001
            fail(f"compile {mode}: {type(e).__name__}: {str(e)[:600]}")


# -------------------------------------------------------------------- time
def _schema_call(op, **kw):
    """Calls a torch op with the arguments its schema names (the symm_mem
    ops' signatures changed between torch releases)."""
    names = {a.name for a in op.default._schema.arguments}
    return op(**{k: v for k, v in kw.items() if k in names})


def timers(c: Case, g: str) -> dict:
    w = dist.get_world_size()
    a_full, sa = c.gathered()
    full, sa_full = a_full.clone(), sa.clone()  # the NCCL path's buffers
    fns = {"scaled_mm": lambda: scaled_mm(full, c.b, sa_full, c.b_scale)}
    if c.kernel == gemm.AGMM:
        def nccl():
            dist.all_gather_into_tensor(full.view(torch.uint8), c.a.view(torch.uint8))
            if c.row:
                dist.all_gather_into_tensor(sa_full, c.a_scale)
            return scaled_mm(full, c.b, sa_full, c.b_scale)

        def fused():
            _, (y,) = _schema_call(torch.ops.symm_mem.fused_all_gather_scaled_matmul, A=c.a, A_shard=c.a, Bs=[c.b],
                                   A_scale=c.a_scale, B_scales=[c.b_scale], gather_dim=0, group_name=g,
                                   biases=[None], result_scales=[None], out_dtypes=[BF16], use_fast_accum=[True])
            return y
    else:
        rs_out = torch.empty(c.m // w, c.n, dtype=BF16, device="cuda")

        def nccl():
            dist.reduce_scatter_tensor(rs_out, scaled_mm(c.a, c.b, c.a_scale, c.b_scale))
            return rs_out

        def fused():
            return _schema_call(torch.ops.symm_mem.fused_scaled_matmul_reduce_scatter, A=c.a, B=c.b,
                                A_scale=c.a_scale, B_scale=c.b_scale, reduce_op="sum", scatter_dim=0,
                                orig_scatter_dim=0, scatter_dim_after_maybe_reshape=0, group_name=g,
                                output_shape=[c.m, c.n], out_dtype=BF16, use_fast_accum=True)
    fns["nccl"] = nccl
    if os.environ.get("FP8_FLOOR"):
        fns["mm_beside_push"] = beside_push(c, g, fns["scaled_mm"])
    try:
        fused()
        torch.cuda.synchronize()
        fns["torch_fused"] = fused
    except Exception as e:  # noqa: BLE001 - the column stays empty, with the reason
        out("time", c.label(), "torch_fused unavailable", f"{type(e).__name__}: {str(e)[:200]}".replace(",", ";"))
    fns["symmtune"] = c.ours
    return fns


def beside_push(c: Case, g: str, mm: Callable[[], object]) -> Callable[[], None]:
    """_scaled_mm alone, with the bytes a fused call moves pushed to every
    peer by a copy engine on a side stream started with it (no waits, no
    reduction): the floor of any design that overlaps those bytes with the
    product. agmm: the rank's A shard [M/W, K] e4m3; matmulrs: a partial
    of one peer's rows [M/W, N] bf16. FP8_FLOOR=1 adds it to time."""
    import torch.distributed._symmetric_memory as symm_mem
    w, r = dist.get_world_size(), dist.get_rank()
    rows = c.m // w
    shape, dt = ((rows, c.k), FP8) if c.kernel == gemm.AGMM else ((rows, c.n), BF16)
    src = torch.randn(shape, device="cuda").to(dt)
    buf = symm_mem.empty(*((w,) + shape), dtype=dt, device="cuda")
    hdl = symm_mem.rendezvous(buf, g)
    dsts = [hdl.get_buffer(q, (w,) + shape, dt)[r] for q in range(w) if q != r]
    main, side = torch.cuda.current_stream(), torch.cuda.Stream()

    def call() -> None:
        side.wait_stream(main)
        with torch.cuda.stream(side):
            for d in dsts:
                d.copy_(src, non_blocking=True)
        mm()
        main.wait_stream(side)
        _ = (buf, hdl)  # the peers' mappings stay alive while the call is timed
    return call


def graphed(fn: Callable[[], object]) -> Callable[[], None]:
    """fn's call captured in a CUDA graph as peer_method.warm_and_capture
    does it (warm-up calls on a side stream first, as torch.cuda.graph's
    documentation asks), replayed once and synchronized so that a fault is
    named by the caller's except: the graph's replay."""
    graph, out = warm_and_capture(fn)
    graph.replay()
    torch.cuda.synchronize()

    def replay() -> None:
        graph.replay()
        _ = out  # the captured output stays allocated while the replay writes it
    return replay


def timing(shapes, scales, rounds: int, in_graph: bool = False) -> None:
    g = dist.group.WORLD.group_name
    part = "gtime" if in_graph else "time"
    rows: dict[str, list[str]] = {k: [] for k in gemm.KERNELS}
    cols = ("scaled_mm", "nccl", "torch_fused", "symmtune", "mm_beside_push")
    for c in cases(shapes, scales):
        reset()
        try:
            c.fill(3)
            fns = timers(c, g)
            only = os.environ.get("FP8_ONLY")  # e.g. "scaled_mm,symmtune": a probe's subset
            if only:
                fns = {k: f for k, f in fns.items() if k in only.split(",")}
            if in_graph:
                if not os.environ.get("FP8_CAPTURE_TORCH_FUSED"):
                    # Its capture aborted the process (SIGABRT, both ranks) on
                    # 2 x H200, torch 2.11, 2026-11-25; FP8_CAPTURE_TORCH_FUSED=1 tries.
                    fns.pop("torch_fused", None)
                for name in list(fns):
                    try:
                        fns[name] = graphed(fns[name])
                    except Exception as e:  # noqa: BLE001 - the column stays empty, with the reason
                        del fns[name]
                        out(part, c.label(), f"{name} not captured", f"{type(e).__name__}: {str(e)[:200]}".replace(",", ";"))
            base = "scaled_mm" if "scaled_mm" in fns else next(iter(fns))
            # FP8_UNQUEUED=1: the calls back to back, no barrier or sleep between (a probe).
            med, ratio = bench_paired(fns, base, iters=rounds, queued=not os.environ.get("FP8_UNQUEUED"))
        except Exception as e:  # noqa: BLE001
            fail(f"{part} {c.label()}: {type(e).__name__}: {str(e)[:400]}")
            continue
        for name in fns:
            out(part, c.label(), name, f"{med[name]:.1f}", f"{ratio[name]:.3f}")
        cells = [f"{med[x]:.1f} ({ratio[x]:.3f})" if x in med else "-" for x in cols]
        rows[c.kernel].append(f"| {c.m}x{c.n}x{c.k} | {'row' if c.row else 'tensor'} | " + " | ".join(cells)
                              + f" | `{chosen().replace(';', ',')}` |")
        del fns
        torch.cuda.empty_cache()
    if dist.get_rank() == 0:
        for kernel, lines in rows.items():
            how = "each call a CUDA graph's replay" if in_graph else "each call"
            print(f"\n{kernel} ({part}): µs, median of {rounds} interleaved rounds ({how} behind a barrier and a device "
                  "sleep), max over ranks; (median over rounds of the ratio to _scaled_mm alone)")
            print("| M x N x K | scales | _scaled_mm | NCCL + _scaled_mm | torch fused | symmtune | _scaled_mm beside the "
                  "pushed bytes (FP8_FLOOR) | symmtune config |")
            print("|---|---|---|---|---|---|---|---|")
            for line in lines:
                print(line)
        sys.stdout.flush()
    reset()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", default=["check", "graph", "time", "gtime"])
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--scales", default="tensor,row")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--graph-shapes", default="", help="graph's shapes (default 1024x512x1024), MxNxK,...")
    args = ap.parse_args()
    if set(args.parts) - {"check", "graph", "time", "gtime"}:
        ap.error(f"parts {args.parts}: want check, graph, time and/or gtime")
    rank, world = int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    try:
        import torch.distributed._symmetric_memory as symm_mem
        symm_mem.enable_symm_mem_for_group(dist.group.WORLD.group_name)
    except Exception:  # noqa: BLE001 - newer torch: every group may use symmetric memory
        pass
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s]
    scales = [s for s in args.scales.split(",") if s]
    if rank == 0:
        print(f"# {torch.cuda.get_device_name()} x{world}, torch {torch.__version__}, "
              f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}", flush=True)
    runs: dict[str, Callable[[], None]] = {"check": lambda: check(shapes, scales), "graph": lambda: graph_check(shapes=[tuple(int(x) for x in s.split("x")) for s in args.graph_shapes.split(",") if s]),
                                           "time": lambda: timing(shapes, scales, args.rounds),
                                           "gtime": lambda: timing(shapes, scales, args.rounds, in_graph=True)}
    for part in args.parts:
        t0 = time.time()
        runs[part]()
        if rank == 0:
            print(f"# {part} took {time.time() - t0:.0f} s", flush=True)
    n = torch.tensor([len(FAILS)], device="cuda")
    dist.all_reduce(n)
    if rank == 0:
        print(f"# failures over ranks: {int(n.item())}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if n.item() else 0)


if __name__ == "__main__":
    # Never multicast, as bench/torch-ops.sh: torch symm_mem, NCCL and NVSHMEM alike.
    for var, val in (("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NCCL_NVLS_ENABLE", "0"),
                     ("NVSHMEM_DISABLE_NVLS", "1")):
        os.environ.setdefault(var, val)
    main()

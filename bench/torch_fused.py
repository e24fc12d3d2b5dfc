"""symmtune.torch's impl=fused (the persistent Hopper GEMM) checked and timed,
one process per GPU (any world size, 1 included: then it is the GEMM alone
behind symmtune.torch's call path).

    PYTHONPATH=python:bench torchrun --nproc-per-node W bench/torch_fused.py [--tiles T1,T2] [--shapes MxNxK,...]

1. Correctness: every searched tile (symmtune.hopper.searched()) with each
   kernel's communication variants (agmm pull/push and chunks; matmulrs
   push=ce/push=gemm, chunks, sm_reserve), forced, at shapes whose m and n
   are not multiples of any tile (TMA's out-of-bounds rows, the epilogue's
   edges), two trials each on fresh random inputs (agmm's second also
   returning the gathered rows, checked exactly), the output's memory
   poisoned with NaN before each call, against a float64 reference
   (all_gather / reduce_scatter of float64 products).
2. Timing at the benchmark shapes (bench/peer_method.py: CUDA events around
   one call, median of 50, max over ranks): torch.mm alone on the full
   product (cuBLAS), then symmtune.torch with the pipeline default and with
   each fused tile of --tiles, and torch's fused symm_mem op, all in this
   call; ratios are to torch.mm alone.
Exit code 1 when any check failed.
"""
import argparse
import sys

import torch
import torch.distributed as dist

from peer_method import bench
from symmtune import _torch_fused, _torch_gemm, gemm, hopper
from symmtune.kernels import Choice
from torch_gemm import inputs, join_group, ours

TOL = 1e-2  # bf16 output rounding (2^-8 relative) over fp32 accumulation


def fused_variants(kernel: str, world: int, tiles: list[str]) -> list[dict]:
    d = {**gemm.default_config(kernel), "graph": 0, "chunks": 1 if world == 1 else 2}
    first = f"fused:{tiles[0]}"
    vs = [{"impl": f"fused:{t}"} for t in tiles]
    last = f"fused:{tiles[-1]}"
    if kernel == gemm.AGMM:
        vs += [{"impl": first, "direction": "push"}, {"impl": first, "chunks": 4},
               {"impl": first, "direction": "push", "chunks": 8}]
        graphed = [{"impl": first, "graph": 1}, {"impl": last, "graph": 1, "direction": "push", "chunks": 4}]
    else:
        vs += [{"impl": first, "push": "gemm"}, {"impl": first, "chunks": 4}, {"impl": first, "push": "gemm", "chunks": 8},
               {"impl": first, "sm_reserve": 8}]
        # The own rows summed in the epilogue, with either push, on every tile.
        vs += [{"impl": f"fused:{t}", "reduce": "epilogue", "push": "gemm" if j % 2 else "ce", "chunks": (1, 2, 4)[j % 3]}
               for j, t in enumerate(tiles)]
        graphed = [{"impl": first, "graph": 1}, {"impl": last, "graph": 1, "push": "gemm", "chunks": 4},
                   {"impl": last, "graph": 1, "reduce": "epilogue", "chunks": 2}]
    vs += graphed  # replayed from a CUDA graph, each trial's new pointers updated into it
    return [{**d, **v} for v in vs]


def reference64(kernel, a, b, world):
    """float64 product (and collective) of the bf16 inputs."""
    if kernel == gemm.AGMM:
        full = torch.empty(a.shape[0] * world, a.shape[1], dtype=a.dtype, device="cuda")
        dist.all_gather_into_tensor(full, a)
        return full.double() @ b.double()
    c = a.double() @ b.double()
    out = torch.empty(c.shape[0] // world, c.shape[1], dtype=c.dtype, device="cuda")
    dist.reduce_scatter_tensor(out, c)
    return out


def poison(kernel, m, n, world, dtype=torch.bfloat16):
    """Fills with NaN, then frees, a block of the output's size, which the
    caching allocator hands to the call's output next: rows the kernel does
    not write stay NaN."""
    rows = m if kernel == gemm.AGMM else m // world
    torch.full((rows, n), float("nan"), dtype=dtype, device="cuda")


def rel_err(got, ref):
    got = got.double()
    if not torch.isfinite(got).all():
        return float("inf")
    return ((got - ref).norm() / ref.norm()).item()


class forced:
    """Makes symmtune.torch choose cfg (gemm.choose is what it asks)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def __enter__(self):
        self.saved = gemm.choose
        gemm.choose = lambda *a, **kw: Choice(dict(self.cfg), "forced")
        _torch_gemm._pipes.clear()

    def __exit__(self, *exc):
        gemm.choose = self.saved
        _torch_gemm._pipes.clear()


def check(kernel, cfg, m, n, k, world, rank, dtype=torch.bfloat16):
    p = gemm.Problem(m, n, k, world)
    try:
        gemm.validate(gemm.parse_config(kernel, cfg), p)
    except ValueError as e:
        return True, f"skipped ({e})"
    errs = []
    # Every trial's inputs stay alive, so the second trial's shard is at a
    # new address (a graph's copies that read it in place must follow it).
    held = []
    with forced(cfg):
        for t in range(2):
            a, b = (x.to(dtype) for x in inputs(kernel, m, n, k, world, rank, 11 * t + 1))
            held.append((a, b))
            poison(kernel, m, n, world, dtype)
            if kernel == gemm.AGMM and t == 1:
                # The gathered rows too, exactly (the own ones read in place).
                full = torch.empty(a.shape[0] * world, k, dtype=dtype, device="cuda")
                dist.all_gather_into_tensor(full, a)
                gathered, got = ours(kernel)(a, b, return_a=True)
                if not torch.equal(gathered, full):
                    errs.append(float("inf"))
            else:
                got = ours(kernel)(a, b)
            errs.append(rel_err(got, reference64(kernel, a, b, world)))
        # graph=1: one graph per set of operand addresses seen twice
        # (_torch_pipeline.PointerGraphs).
        runs = [pipe.graphs for pipe in _torch_gemm._pipes.values() if getattr(pipe, "graphs", None)]
        captures = f", graphs held {len(runs[0].graphs)}" if runs else ""
    worst = torch.tensor([max(errs)], device="cuda", dtype=torch.float64)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return worst.item() <= TOL, f"rel err {worst.item():.3g}{captures}"


def check_timeout(tile: str) -> tuple[bool, str]:
    """A chunk whose flag never comes: the kernel must give up after its
    bound (1 ms here), set the status word (mapped host memory) and return,
    and the next fused call must raise."""
    t = hopper.parse_tile(tile)
    g = _torch_fused.fused_gemm(t, True, torch.device("cuda", torch.cuda.current_device()))
    m, n, k = 512, 512, 512
    a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    bt = torch.randn(n, k, dtype=torch.bfloat16, device="cuda")
    c = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    flags = torch.zeros(4096, dtype=torch.uint8, device="cuda")  # flag 0 stays 0
    status = _torch_fused.Status()
    call = _torch_fused.Call(g, m, n, k, g.sms, order=tuple(range(-(-m // t.rows_per_tile))),
                             table=[0, m, 0], flags=flags.data_ptr(), status=status, timeout_ns=10**6)
    call(torch.cuda.current_stream().cuda_stream, a.data_ptr(), bt.data_ptr(), c.data_ptr())
    torch.cuda.synchronize()
    if status.word.value != 1:
        return False, f"status {status.word.value} after a wait that cannot end"
    try:
        status.check("agmm")
    except _torch_fused.FusedError as e:
        return True, f"raised: {str(e)[:60]}..."
    return False, "no FusedError"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiles", default="128x224:s4:c2:g8,128x224:s5:c2:g4:cl2,64x224:s6:c2:g8:pp,64x256:s5:c2:g8:pp")
    ap.add_argument("--shapes", default="4096x1792x4096,8192x3584x8192,16384x3584x8192")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--kernels", default=",".join(gemm.KERNELS))
    args = ap.parse_args()
    rank, world, g = join_group()
    say = (lambda *a: print(*a, flush=True)) if rank == 0 else (lambda *a: None)
    ok = True
    if not args.no_check:
        for tile in (hopper.searched()[0], hopper.searched()[-1]):
            good, what = check_timeout(tile)
            ok &= good
            say(f"check,timeout,{tile},{'ok' if good else 'FAILED'},{what}")
        for kernel in args.kernels.split(","):
            # m not a multiple of any tile's rows (TMA's out-of-bounds rows),
            # then one whose ranks' rows are (reduce=epilogue runs only there).
            for (m, n, k) in [(328 * world, 520, 776), (1000 * world, 1800, 1032), (512 * world, 1800, 1032)]:
                pipeline = gemm.fit_default(kernel, gemm.Problem(m, n, k, world))
                # The pipeline pushing too: its products read the own rows in place.
                pipelines = [pipeline] + ([{**pipeline, "direction": "push"}] if kernel == gemm.AGMM else [])
                for cfg in pipelines + fused_variants(kernel, world, list(hopper.searched())):
                    good, what = check(kernel, cfg, m, n, k, world, rank)
                    ok &= good
                    say(f"check,{kernel},{m}x{n}x{k},{cfg['impl']},graph={cfg['graph']},dir={cfg.get('direction', '')}"
                        f",push={cfg.get('push', '')},chunks={cfg['chunks']},sm_reserve={cfg['sm_reserve']}"
                        f",{'ok' if good else 'FAILED'},{what}")
            # f16: the other element type the kernels compile for, on the first and last tiles.
            for cfg in fused_variants(kernel, world, [hopper.searched()[0], hopper.searched()[-1]])[:2]:
                good, what = check(kernel, cfg, m, n, k, world, rank, torch.float16)
                ok &= good
                say(f"check,{kernel},{m}x{n}x{k},{cfg['impl']},f16,{'ok' if good else 'FAILED'},{what}")
    tiles = args.tiles.split(",")
    rows = []
    for shape in ([] if args.no_timing else args.shapes.split(",")):
        m, n, k = map(int, shape.split("x"))
        for kernel in args.kernels.split(","):
            a, b = inputs(kernel, m, n, k, world, rank, 7)
            full_a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
            bt = b.t().contiguous().t()  # B as an nn.Linear weight's .t(): the fused GEMM reads it as is
            res = {"mm_alone": bench(lambda: torch.mm(full_a, b))}
            fused = [{**gemm.default_config(kernel), "impl": f"fused:{t}", "graph": g, "chunks": 1 if world == 1 else 2}
                     for t in tiles for g in (0, 1)]
            if kernel == gemm.MATMULRS:  # the own rows summed in the epilogue too
                fused += [{**c, "reduce": "epilogue"} for c in fused]
            else:  # pushing, the own shard read in place (no copy before the call)
                fused += [{**c, "direction": "push"} for c in fused]
            for cfg in [gemm.fit_default(kernel, gemm.Problem(m, n, k, world))] + fused:
                try:
                    gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(m, n, k, world))
                except ValueError as e:
                    say(f"# {kernel} {shape} {cfg['impl']}: {e}")
                    continue
                with forced(cfg):
                    fn = ours(kernel)
                    name = cfg["impl"] + (":graph" if cfg["impl"] != "pipeline" and cfg["graph"] else "") + \
                        (":epilogue" if cfg.get("reduce") == "epilogue" else "") + \
                        (":push" if cfg.get("direction") == "push" else "")
                    res[f"symmtune:{name}"] = bench(lambda: fn(a, bt))
            try:
                if kernel == gemm.AGMM:
                    res["torch_fused"] = bench(lambda: torch.ops.symm_mem.fused_all_gather_matmul(a, [b], 0, g))
                else:
                    res["torch_fused"] = bench(lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, g))
            except Exception as ex:  # noqa: BLE001 - a peer op missing is reported, not fatal
                say(f"# torch fused {kernel} {shape}: {ex!r}"[:300])
            for impl, us in res.items():
                say(f"{kernel},{impl},{shape},{us:.1f}")
            rows.append((kernel, shape, res))
    flag = torch.tensor([0 if ok else 1], device="cuda")
    dist.all_reduce(flag)
    say(f"\n{world} ranks, {torch.cuda.get_device_name()}; µs, median of 50, max over ranks; "
        "(ratio to torch.mm alone of the full product)")
    for kernel, shape, res in rows:
        base = res["mm_alone"]
        say(f"| {kernel} | {shape} | " + " | ".join(f"{impl} {us:.1f} ({us / base:.3f})" for impl, us in res.items()) + " |")
    say("\ncorrectness:", "every check within tolerance" if flag.item() == 0 else "FAILED")
    dist.destroy_process_group()
    sys.exit(0 if flag.item() == 0 else 1)


if __name__ == "__main__":
    main()

"""symmtune.torch's ops at the edges, on W GPUs: a rank that arrives seconds
late, and bad input.

    PYTHONPATH=python:bench torchrun --nproc-per-node 2 bench/torch_edge.py [LATE_SECONDS]

late: every op (all_reduce, all_gather_matmul, matmul_reduce_scatter; the
GEMMs with the cache's config and with a fused config forced, as
torch_ops.py forces it) is called while the last rank sleeps LATE_SECONDS
(default 3) on the host before its call, and the others go ahead. Each
result is checked against a float64 reference: a late rank must be waited
for, not failed, and no call may hang (torchrun's timeout would say so).
bad: a wrong dtype, a shape mismatch and M not divisible by the world size,
given on every rank, must raise one clear error (TypeError or ValueError
naming the argument) before any collective work, so the next good call
still runs and is right.

Prints "section,name,key,value" lines and FAIL lines; exits 1 on any failure.
"""
from __future__ import annotations

import os
import sys
import time

import torch
import torch.distributed as dist

import symmtune.torch as st
import torch_ops
from torch_ops import FAILS, FORCED, FUSED, fail, on_world, fresh, out, ref_agmm, ref_all_reduce, ref_mmrs, rel_err, reset_gemm


def late(seconds: float) -> None:
    rank, w = dist.get_rank(), dist.get_world_size()
    gen = torch.Generator(device="cuda").manual_seed(71 + rank)
    m, n, k = 4096, 1792, 4096
    for impl in ("cache", "fused"):
        FORCED.clear()
        if impl == "fused":
            FORCED.update(on_world(FUSED, w))
        reset_gemm()
        cases = [
            ("all_reduce", lambda: [fresh((1 << 20,), gen)], lambda xs: st.all_reduce(xs[0]), lambda xs: ref_all_reduce(xs[0])),
            ("agmm", lambda: [fresh((m // w, k), gen), fresh((k, n), gen)],
             lambda xs: st.all_gather_matmul(xs[0], xs[1]), lambda xs: ref_agmm(*xs)),
            ("mmrs", lambda: [fresh((m, k), gen), fresh((k, n), gen)],
             lambda xs: st.matmul_reduce_scatter(xs[0], xs[1]), lambda xs: ref_mmrs(*xs)),
        ]
        for name, make, run, ref in cases:
            if impl == "fused" and name == "all_reduce":
                continue
            xs = make()
            want = ref([x.clone() for x in xs])
            run([x.clone() for x in xs])  # warm: the layout is made, collectively
            torch.cuda.synchronize()
            dist.barrier()
            if rank == w - 1:
                time.sleep(seconds)
            t0 = time.perf_counter()
            got = run(xs)
            torch.cuda.synchronize()
            waited = time.perf_counter() - t0
            err = rel_err(got, want)
            if not err <= torch_ops.TOL:
                fail(f"late {name}:{impl}: rel err {err:.3g} after a {seconds:.0f} s late rank")
            t = torch.tensor([err, waited], device="cuda", dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            out("late", f"{name}:{impl}", f"rank {w - 1} {seconds:.0f} s late",
                f"{'ok' if t[0].item() <= torch_ops.TOL else 'WRONG'} rel err {t[0].item():.2e}, "
                f"longest wait {t[1].item():.2f} s")
    FORCED.clear()
    reset_gemm()


def bad() -> None:
    w = dist.get_world_size()
    bf = dict(dtype=torch.bfloat16, device="cuda")
    cases = [
        ("agmm:dtype", TypeError, lambda: st.all_gather_matmul(torch.ones(64, 128, dtype=torch.float32, device="cuda"),
                                                               torch.ones(128, 96, **bf))),
        ("agmm:shape", ValueError, lambda: st.all_gather_matmul(torch.ones(64, 128, **bf), torch.ones(120, 96, **bf))),
        ("mmrs:dtype", TypeError, lambda: st.matmul_reduce_scatter(torch.ones(64, 128, **bf),
                                                                    torch.ones(128, 96, dtype=torch.float16,
                                                                               device="cuda"))),
        ("mmrs:shape", ValueError, lambda: st.matmul_reduce_scatter(torch.ones(64, 128, **bf),
                                                                    torch.ones(100, 96, **bf))),
        ("mmrs:m%world", ValueError, lambda: st.matmul_reduce_scatter(torch.ones(64 * w + 1, 128, **bf),
                                                                      torch.ones(128, 96, **bf))),
        ("all_reduce:dtype", TypeError, lambda: st.all_reduce(torch.ones(1024, dtype=torch.int64, device="cuda"))),
    ]
    for name, want, call in cases:
        try:
            call()
            fail(f"bad {name}: no error")
            continue
        except (TypeError, ValueError) as e:
            line = str(e)
            ok = isinstance(e, want) and "\n" not in line
            if not ok:
                fail(f"bad {name}: {type(e).__name__} (want {want.__name__}): {line}")
            out("bad", name, type(e).__name__, f"{'ok' if ok else 'WRONG'}: {line[:110]}".replace(",", ";"))
        except Exception as e:  # noqa: BLE001 - any other error is a failure, reported with its type
            fail(f"bad {name}: {type(e).__name__}: {e}")
    # The ranks are still in step: a good call runs and is right.
    gen = torch.Generator(device="cuda").manual_seed(5 + dist.get_rank())
    a, b = fresh((256 // w, 128), gen), fresh((128, 96), gen)
    err = rel_err(st.all_gather_matmul(a, b), ref_agmm(a, b))
    if not err <= torch_ops.TOL:
        fail(f"bad: the good call after the bad ones: rel err {err:.3g}")
    out("bad", "good call after", "rel err", f"{err:.2e}")


def main() -> None:
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    if rank == 0:
        print(f"# {torch.cuda.get_device_name()} x{dist.get_world_size()}, torch {torch.__version__}, "
              f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}", flush=True)
    late(seconds)
    bad()
    n = torch.tensor([len(FAILS)], device="cuda")
    dist.all_reduce(n)
    if rank == 0:
        print(f"# failures over ranks: {int(n.item())}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if n.item() else 0)


if __name__ == "__main__":
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    main()

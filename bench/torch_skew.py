"""symmtune.torch's fused GEMMs when one rank reaches the call seconds after
the others (a data loader stall, I/O): the call must wait for it, not time
out. The kernel's waits are bounded (2 s) to turn a lost copy into an
error; a peer's late host must not count against that bound.

    PYTHONPATH=python:bench torchrun --nproc-per-node W bench/torch_skew.py [--delay 3]

Per kernel, a fused config forced (agmm pushing, matmulrs reducing in the
epilogue, whose kernels both wait on peers' flags), rank W-1 sleeps --delay
seconds before each of three calls; every call is checked against a float64
reference, and a fourth call shows the group's fused GEMMs still usable.
Exit code 1 when any check failed.
"""
import argparse
import sys
import time

import torch
import torch.distributed as dist

from symmtune import _torch_fused, gemm, hopper
from torch_fused import TOL, forced, reference64, rel_err
from torch_gemm import inputs, join_group, ours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=3.0)
    ap.add_argument("--shape", default="4096x1792x4096")
    args = ap.parse_args()
    rank, world, _ = join_group()
    m, n, k = map(int, args.shape.split("x"))
    tile = f"fused:{hopper.searched()[0]}"
    configs = {gemm.AGMM: {**gemm.default_config(gemm.AGMM), "impl": tile, "direction": "push", "graph": 0},
               gemm.MATMULRS: {**gemm.default_config(gemm.MATMULRS), "impl": tile, "reduce": "epilogue", "graph": 0}}
    ok = True
    for kernel, cfg in configs.items():
        gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(m, n, k, world))
        with forced(cfg):
            for t in range(4):
                a, b = inputs(kernel, m, n, k, world, rank, t + 1)
                torch.cuda.synchronize()
                dist.barrier()
                if rank == world - 1 and t < 3:
                    time.sleep(args.delay)
                try:
                    got = ours(kernel)(a, b)
                    err = rel_err(got, reference64(kernel, a, b, world))
                    what = f"rel err {err:.3g}"
                    good = err <= TOL
                except _torch_fused.FusedError as e:
                    good, what = False, f"FusedError: {str(e)[:80]}"
                flag = torch.tensor([0 if good else 1], device="cuda")
                dist.all_reduce(flag)
                ok &= flag.item() == 0
                if rank == 0:
                    print(f"skew,{kernel},{args.shape},call {t},delay {args.delay if t < 3 else 0} s,"
                          f"{'ok' if flag.item() == 0 else 'FAILED'},{what}", flush=True)
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

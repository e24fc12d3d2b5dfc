"""The FP8 operands of bench/torch_fp8.py and what its parts do with them:
Case (one kernel's e4m3 operands and fp32 scales on this rank, filled in
place, with symmtune's call, the torch op's call and a float64 reference),
the cases of a run, rel_rms, the NaN-poisoned block, torch._scaled_mm as
the parts call it, and the config symmtune chose. bench/torch_paired.py and
bench/experiments/fp8_timeline.py use Case too.
"""
from __future__ import annotations

import os

import torch
import torch.distributed as dist

import symmtune.torch as st
from symmtune import _torch_gemm, gemm

FP8 = torch.float8_e4m3fn
BF16 = torch.bfloat16


# ------------------------------------------------------------------ inputs
class Case:
    """One kernel's operands on this rank: a (agmm: the shard [M/W, K];
    matmulrs: [M, K]) and b [K, N] (w.t() of a contiguous w [N, K]), e4m3,
    with their fp32 scales, made and refreshed in place (graph replays read
    the same tensors)."""

    def __init__(self, kernel: str, m: int, n: int, k: int, row: bool) -> None:
        self.kernel, self.m, self.n, self.k, self.row = kernel, m, n, k, row
        w = dist.get_world_size()
        self.rows = m // w if kernel == gemm.AGMM else m
        self.a = torch.empty(self.rows, k, dtype=FP8, device="cuda")
        self.w = torch.empty(n, k, dtype=FP8, device="cuda")
        self.b = self.w.t()
        self.a_scale = torch.empty((self.rows, 1) if row else (), dtype=torch.float32, device="cuda")
        self.b_scale = torch.empty((1, n) if row else (), dtype=torch.float32, device="cuda")

    def fill(self, seed: int) -> None:
        rank = dist.get_rank()
        gen = torch.Generator(device="cuda").manual_seed(seed * 1009 + rank)
        same = torch.Generator(device="cuda").manual_seed(seed * 1009 + 997)  # the same on every rank

        def q(x: torch.Tensor) -> None:  # e4m3 over its whole range, subnormals included
            u = torch.rand(x.shape, device="cuda", generator=gen, dtype=torch.float32) * 2 - 1
            x.copy_((u * 448).to(FP8))

        def scale(x: torch.Tensor, g: torch.Generator) -> None:
            x.copy_(2.0 ** -9 * (1 + torch.rand(x.shape, device="cuda", generator=g)))
        q(self.a)
        q(self.w)
        # agmm tensor-wise: one scale for the whole gathered A, the same everywhere.
        scale(self.a_scale, same if (self.kernel == gemm.AGMM and not self.row) else gen)
        scale(self.b_scale, gen)

    def ours(self):
        if self.kernel == gemm.AGMM:
            return st.all_gather_scaled_matmul(self.a, self.b, self.a_scale, self.b_scale)
        return st.scaled_matmul_reduce_scatter(self.a, self.b, self.a_scale, self.b_scale)

    def op(self, g: str):
        if self.kernel == gemm.AGMM:
            return torch.ops.symmtune.all_gather_scaled_matmul(self.a, self.b, self.a_scale, self.b_scale, g)
        return torch.ops.symmtune.scaled_matmul_reduce_scatter(self.a, self.b, self.a_scale, self.b_scale, g)

    def gathered(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The full A [M, K] (agmm: gathered) and its scale (row-wise: [M, 1])."""
        if self.kernel != gemm.AGMM:
            return self.a, self.a_scale
        w = dist.get_world_size()
        full = torch.empty(self.m, self.k, dtype=FP8, device="cuda")
        dist.all_gather_into_tensor(full.view(torch.uint8), self.a.view(torch.uint8))
        if not self.row:
            return full, self.a_scale
        sa = torch.empty(self.rows * w, 1, dtype=torch.float32, device="cuda")
        dist.all_gather_into_tensor(sa, self.a_scale)
        return full, sa

    def reference(self) -> torch.Tensor:
        """float64, of the dequantized operands (q * scale), this rank's result."""
        a, sa = self.gathered()
        c = (a.double() * sa.double()) @ (self.b.double() * self.b_scale.double())
        if self.kernel == gemm.AGMM:
            return c
        dist.all_reduce(c)
        r, rows = dist.get_rank(), self.m // dist.get_world_size()
        return c[r * rows:(r + 1) * rows]

    def label(self) -> str:
        return f"{self.kernel}:{'row' if self.row else 'tensor'}:{self.m}x{self.n}x{self.k}"


def rel_rms(got: torch.Tensor, ref: torch.Tensor) -> float:
    """||got - ref|| / ||ref||, inf when any element of got is not finite."""
    if not torch.isfinite(got).all():
        return float("inf")
    return ((got.double() - ref).norm() / ref.norm()).item()


def poison(rows: int, n: int) -> int:
    """Leaves a NaN-filled block of an [rows, n] bf16 tensor in the caching
    allocator, for the next allocation of that size to get: its address."""
    t = torch.empty(rows, n, dtype=BF16, device="cuda").fill_(float("nan"))
    return t.data_ptr()


def scaled_mm(a, b, sa, sb) -> torch.Tensor:
    return torch._scaled_mm(a, b, sa, sb, out_dtype=BF16, use_fast_accum=True)


def chosen() -> str:
    pipe = next(iter(_torch_gemm.opened()), None)
    if pipe is None:
        return "-"
    return f"{pipe.choice.source} {pipe.dt} {pipe.choice.config}".replace(",", ";")


def reset() -> None:
    _torch_gemm.reset()


def cases(shapes: list[tuple[int, int, int]], scales: list[str]):
    only = os.environ.get("FP8_KERNEL")  # agmm or matmulrs: one kernel's cases
    for kernel in gemm.KERNELS:
        if only and kernel != only:
            continue
        for m, n, k in shapes:
            for s in scales:
                yield Case(kernel, m, n, k, s == "row")

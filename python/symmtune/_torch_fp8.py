"""symmtune.torch's FP8 GEMMs (docs/fp8.md): all-gather + scaled matmul and
scaled matmul + reduce-scatter of float8_e4m3fn operands with fp32 scales,
writing bf16, with torch._scaled_mm's conventions.

    a        [rows, K] float8_e4m3fn, row-major
    b        [K, N] float8_e4m3fn, the transpose of a contiguous [N, K]
             (b = w.t() of an nn.Linear-style weight w), as _scaled_mm's
             second operand; no other layout is taken (FP8 tensor cores
             read K-major operands only, and a copy per call would cost
             more than the fusion saves)
    a_scale  float32: one element (tensor-wise) or [rows, 1] (row-wise)
    b_scale  float32: one element (tensor-wise) or [1, N] (row-wise)
    result   bf16, D = a_scale[row] * b_scale[col] * (a @ b), fp32 accumulation

The scales' shapes pick the dtype the cache and the kernels know it by:
both one element, e4m3; [rows, 1] and [1, N], e4m3_row; one of each is
refused. Everything after the checks is symmtune._torch_gemm's (one runner
per kernel, problem, dtype and group, the Go launch sequence through
libsymmtune's symmtune_gemm_enqueue_scaled). The eager functions here are
also the CUDA implementations of torch.ops.symmtune.all_gather_scaled_matmul
and scaled_matmul_reduce_scatter (symmtune._ops).
"""

from __future__ import annotations

import os

import torch

from . import _native
from .gemm import AGMM, MATMULRS
from ._torch_gemm import _constant_group_name, _pipeline
from ._torchrt import group_info

FP8 = torch.float8_e4m3fn

# The (device index, dtype) pairs whose GPU can multiply the dtype, once
# asked (whether it has FP8 tensor cores is Dtype.CheckDevice's rule, Go's:
# the library's gemm.check_device).
_fits: set[tuple[int, str]] = set()


def scale_dtype(what: str, a_scale: torch.Tensor, b_scale: torch.Tensor, rows: int, n: int) -> str:
    """e4m3 (both scales one element) or e4m3_row (a_scale [rows, 1] and
    b_scale [1, N]); TypeError or ValueError naming the scale otherwise."""
    for name, s in (("a_scale", a_scale), ("b_scale", b_scale)):
        if not isinstance(s, torch.Tensor):
            raise TypeError(f"symmtune.torch.{what}: {name} is {type(s).__name__}; want a float32 tensor")
        if s.dtype != torch.float32:
            raise TypeError(f"symmtune.torch.{what}: {name} is {s.dtype}; want torch.float32 (as torch._scaled_mm)")
    tensor_a, tensor_b = a_scale.numel() == 1, b_scale.numel() == 1
    if tensor_a and tensor_b:
        return "e4m3"
    row_a, row_b = tuple(a_scale.shape) == (rows, 1), tuple(b_scale.shape) == (1, n)
    if row_a and row_b:
        return "e4m3_row"
    if tensor_a and row_b or row_a and tensor_b:
        raise ValueError(f"symmtune.torch.{what}: a_scale {tuple(a_scale.shape)} and b_scale {tuple(b_scale.shape)} "
                         "mix a tensor-wise and a row-wise scale; want both one element (tensor-wise) or "
                         f"a_scale [{rows}, 1] and b_scale [1, {n}] (row-wise)")
    name, s, want = (("a_scale", a_scale, f"[{rows}, 1]") if not (tensor_a or row_a)
                     else ("b_scale", b_scale, f"[1, {n}]"))
    raise ValueError(f"symmtune.torch.{what}: {name} has shape {tuple(s.shape)}; want one element (tensor-wise) "
                     f"or {want} (row-wise)")


def check_fp8(what: str, a: torch.Tensor, a_name: str, b: torch.Tensor, a_scale: torch.Tensor,
              b_scale: torch.Tensor, out_dtype) -> str:
    """The checks of an FP8 call, before any GPU or group is touched but the
    device's: the dtype name (e4m3 or e4m3_row) of its scales."""
    if out_dtype != torch.bfloat16:
        raise ValueError(f"symmtune.torch.{what}: out_dtype {out_dtype}; the FP8 kernels write torch.bfloat16 only")
    for name, x in ((a_name, a), ("b", b)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"symmtune.torch.{what}: {name} is {type(x).__name__}; want a torch.float8_e4m3fn tensor")
        if x.dtype != FP8:
            raise TypeError(f"symmtune.torch.{what}: {name} is {x.dtype}; want torch.float8_e4m3fn")
        if x.dim() != 2:
            raise ValueError(f"symmtune.torch.{what}: {name} has shape {tuple(x.shape)}; want a 2-D matrix")
    rows, k = a.shape
    if b.shape[0] != k:
        raise ValueError(f"symmtune.torch.{what}: {a_name} is [{rows}, {k}] but b is {list(b.shape)}; want b [{k}, N]")
    n = b.shape[1]
    if b.stride() != (1, k) and not (n == 1 and b.stride()[0] == 1):
        raise ValueError(f"symmtune.torch.{what}: b [{k}, {n}] has strides {b.stride()}; want the transpose of a "
                         f"contiguous [{n}, {k}] tensor (strides (1, {k})): b = w.t() of an nn.Linear-style weight "
                         "w, as torch._scaled_mm takes its second operand")
    dt = scale_dtype(what, a_scale, b_scale, rows, n)
    operands = ((a_name, a), ("b", b), ("a_scale", a_scale), ("b_scale", b_scale))
    dev = -1
    for name, x in operands:
        if x.is_cuda and dev < 0:
            dev = torch.cuda.current_device()
        if not x.is_cuda or x.device.index != dev:
            raise ValueError(f"symmtune.torch.{what}: {name} is on {x.device}; want this rank's current CUDA device")
    if (dev, dt) not in _fits:
        major, minor = torch.cuda.get_device_capability(dev)
        try:
            _native.call("gemm.check_device", dtype=dt, major=major, minor=minor)
        except ValueError as e:
            raise ValueError(f"symmtune.torch.{what}: {a_name} is on cuda:{dev}: {e}") from None
        _fits.add((dev, dt))
    return dt


def all_gather_scaled_matmul(a_shard: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor,
                             group=None, *, out_dtype: torch.dtype = torch.bfloat16,
                             cache: str | os.PathLike | None = None) -> torch.Tensor:
    """C = all_gather(a_shard) @ b, scaled, with the tuned agmm config of
    dtype e4m3 or e4m3_row: the FP8 form of all_gather_matmul, as
    torch.ops.symm_mem.fused_all_gather_scaled_matmul computes it for 2-D
    operands (gather_dim 0, one B).

    a_shard: [M/W, K] float8_e4m3fn, this rank's rows of A (rank q holds rows
    [q*M/W, (q+1)*M/W)); b: [K, N] float8_e4m3fn, the transpose of a
    contiguous [N, K] (w.t()), this rank's. Scales, float32 on the device:
    tensor-wise, a_scale and b_scale one element each, and a_scale must be
    the same value on every rank (it scales the whole gathered A, as torch's
    op takes a tensor-wise A_scale); row-wise, a_scale [M/W, 1] this rank's
    rows' scales (gathered with the rows) and b_scale [1, N]. out_dtype:
    torch.bfloat16 only. Returns C [M, N] bf16, a new tensor. Collective:
    every rank calls it with the same shapes and scale kinds, in the same
    order. As a registered op: torch.ops.symmtune.all_gather_scaled_matmul."""
    if torch.compiler.is_compiling():
        return torch.ops.symmtune.all_gather_scaled_matmul(a_shard, b, a_scale, b_scale, _constant_group_name(group),
                                                           out_dtype, None if cache is None else os.fspath(cache))
    what = "all_gather_scaled_matmul"
    dt = check_fp8(what, a_shard, "a_shard", b, a_scale, b_scale, out_dtype)
    _, _, world = group_info(group)
    rows, k = a_shard.shape
    m = rows * world
    return _pipeline(AGMM, m, b.shape[1], k, FP8, group, cache, dt).scaled_call(a_shard, b, a_scale, b_scale, m)


def scaled_matmul_reduce_scatter(a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor,
                                 group=None, *, out_dtype: torch.dtype = torch.bfloat16,
                                 cache: str | os.PathLike | None = None) -> torch.Tensor:
    """Rank r's rows [r*M/W, (r+1)*M/W) of the sum over ranks of the scaled
    a @ b, with the tuned matmulrs config of dtype e4m3 or e4m3_row: the FP8
    form of matmul_reduce_scatter, as
    torch.ops.symm_mem.fused_scaled_matmul_reduce_scatter computes it for
    2-D operands (reduce "sum", scatter_dim 0).

    a: [M, K] float8_e4m3fn, this rank's (M divisible by the world size); b:
    [K, N] float8_e4m3fn, the transpose of a contiguous [N, K] (w.t()).
    Scales, float32 on the device, each rank its own (each rank's partial
    is scaled before the reduction): tensor-wise one element each;
    row-wise a_scale [M, 1] and b_scale [1, N]. out_dtype: torch.bfloat16
    only. Returns [M/W, N] bf16, a new tensor (fp32 accumulation in each
    product and in the reduction). Collective: every rank calls it with
    the same shapes and scale kinds, in the same order. As a registered op:
    torch.ops.symmtune.scaled_matmul_reduce_scatter."""
    if torch.compiler.is_compiling():
        return torch.ops.symmtune.scaled_matmul_reduce_scatter(a, b, a_scale, b_scale, _constant_group_name(group),
                                                               out_dtype, None if cache is None else os.fspath(cache))
    what = "scaled_matmul_reduce_scatter"
    dt = check_fp8(what, a, "a", b, a_scale, b_scale, out_dtype)
    _, _, world = group_info(group)
    m, k = a.shape
    if m % world:
        raise ValueError(f"symmtune.torch.{what}: a has {m} rows, not divisible by the {world} ranks: every rank "
                         "gets the same number of rows")
    return _pipeline(MATMULRS, m, b.shape[1], k, FP8, group, cache, dt).scaled_call(a, b, a_scale, b_scale, m)

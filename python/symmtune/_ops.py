"""symmtune's kernels as registered PyTorch ops: ``torch.ops.symmtune``.

    all_reduce_(Tensor(a!) x, str group_name, str? cache=None) -> ()
    all_gather_matmul(Tensor a_shard, Tensor b, str group_name, str? cache=None) -> Tensor
    all_gather_matmul_a(Tensor a_shard, Tensor b, str group_name, str? cache=None) -> (Tensor, Tensor)
    matmul_reduce_scatter(Tensor a, Tensor b, str group_name, str? cache=None) -> Tensor
    all_gather_scaled_matmul(Tensor a_shard, Tensor b, Tensor a_scale, Tensor b_scale, str group_name,
                             ScalarType? out_dtype=None, str? cache=None) -> Tensor
    scaled_matmul_reduce_scatter(Tensor a, Tensor b, Tensor a_scale, Tensor b_scale, str group_name,
                                 ScalarType? out_dtype=None, str? cache=None) -> Tensor

The scaled ones are the FP8 GEMMs (symmtune._torch_fp8): float8_e4m3fn
operands, float32 scales, bf16 results (out_dtype None means bf16, the only
one they write).

Each has a CUDA kernel (the eager implementation of symmtune.torch) and a
fake one (shapes and dtypes only), so ``torch.compile`` traces through them
with ``fullgraph=True`` and, under ``mode="reduce-overhead"``, captures them
in its CUDA graphs. The process group travels by name, as torch's own
symm_mem ops take it.

Why ``torch.library.Library`` and not ``custom_op``: both register an op
with the dispatcher; ``custom_op`` adds a Python wrapper layer that measured
47 µs per call on the 2 x H100 machine (runtime-notes.md), more than an
all-reduce's GPU time. The public functions of symmtune.torch call the
implementation directly in eager mode and the op only while torch.compile
traces (``torch.compiler.is_compiling``), so an eager call costs no dispatch
and a compiled one is a node of the graph.
"""

from __future__ import annotations

import torch
import torch.distributed.distributed_c10d as c10d

# The registry of this process's symmtune ops; made once, on import of
# symmtune.torch (torch.library keeps a definition for the process's life).
_LIB = torch.library.Library("symmtune", "DEF")
_LIB.define("all_reduce_(Tensor(a!) x, str group_name, str? cache=None) -> ()")
_LIB.define("all_gather_matmul(Tensor a_shard, Tensor b, str group_name, str? cache=None) -> Tensor")
_LIB.define("all_gather_matmul_a(Tensor a_shard, Tensor b, str group_name, str? cache=None) -> (Tensor, Tensor)")
_LIB.define("matmul_reduce_scatter(Tensor a, Tensor b, str group_name, str? cache=None) -> Tensor")
# The FP8 ops take b only as the transpose of a contiguous [N, K]: inductor
# must hand them their inputs' strides as they are (as torch's symm_mem ops
# ask).
_FIXED_STRIDES = (torch._C.Tag.needs_fixed_stride_order,)
_LIB.define("all_gather_scaled_matmul(Tensor a_shard, Tensor b, Tensor a_scale, Tensor b_scale, str group_name, "
            "ScalarType? out_dtype=None, str? cache=None) -> Tensor", tags=_FIXED_STRIDES)
_LIB.define("scaled_matmul_reduce_scatter(Tensor a, Tensor b, Tensor a_scale, Tensor b_scale, str group_name, "
            "ScalarType? out_dtype=None, str? cache=None) -> Tensor", tags=_FIXED_STRIDES)


def group_world(group_name: str) -> int:
    """The size of the process group named group_name."""
    return c10d._resolve_process_group(group_name).size()


@torch.library.register_fake("symmtune::all_reduce_")
def _all_reduce_fake(x: torch.Tensor, group_name: str, cache: str | None = None) -> None:
    return None


@torch.library.register_fake("symmtune::all_gather_matmul")
def _agmm_fake(a_shard: torch.Tensor, b: torch.Tensor, group_name: str, cache: str | None = None) -> torch.Tensor:
    return a_shard.new_empty((a_shard.shape[0] * group_world(group_name), b.shape[1]))


@torch.library.register_fake("symmtune::all_gather_matmul_a")
def _agmm_a_fake(a_shard: torch.Tensor, b: torch.Tensor, group_name: str,
                 cache: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    w = group_world(group_name)
    return (a_shard.new_empty((a_shard.shape[0] * w, a_shard.shape[1])),
            a_shard.new_empty((a_shard.shape[0] * w, b.shape[1])))


@torch.library.register_fake("symmtune::matmul_reduce_scatter")
def _mmrs_fake(a: torch.Tensor, b: torch.Tensor, group_name: str, cache: str | None = None) -> torch.Tensor:
    return a.new_empty((a.shape[0] // group_world(group_name), b.shape[1]))


@torch.library.register_fake("symmtune::all_gather_scaled_matmul")
def _agsmm_fake(a_shard: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor,
                group_name: str, out_dtype: torch.dtype | None = None, cache: str | None = None) -> torch.Tensor:
    return a_shard.new_empty((a_shard.shape[0] * group_world(group_name), b.shape[1]),
                             dtype=out_dtype or torch.bfloat16)


@torch.library.register_fake("symmtune::scaled_matmul_reduce_scatter")
def _smmrs_fake(a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor, group_name: str,
                out_dtype: torch.dtype | None = None, cache: str | None = None) -> torch.Tensor:
    return a.new_empty((a.shape[0] // group_world(group_name), b.shape[1]), dtype=out_dtype or torch.bfloat16)


def register_scaled(all_gather_scaled_matmul, scaled_matmul_reduce_scatter) -> None:
    """Gives the FP8 ops their CUDA implementations: the eager functions of
    symmtune._torch_fp8 (tensors..., group, *, out_dtype, cache)."""

    def ag(a_shard: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor, group_name: str,
           out_dtype: torch.dtype | None = None, cache: str | None = None) -> torch.Tensor:
        return all_gather_scaled_matmul(a_shard, b, a_scale, b_scale, group_name,
                                        out_dtype=out_dtype or torch.bfloat16, cache=cache)

    def rs(a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor, group_name: str,
           out_dtype: torch.dtype | None = None, cache: str | None = None) -> torch.Tensor:
        return scaled_matmul_reduce_scatter(a, b, a_scale, b_scale, group_name,
                                            out_dtype=out_dtype or torch.bfloat16, cache=cache)

    _LIB.impl("all_gather_scaled_matmul", ag, "CUDA")
    _LIB.impl("scaled_matmul_reduce_scatter", rs, "CUDA")


def register(all_reduce, all_gather_matmul, matmul_reduce_scatter) -> None:
    """Gives the ops their CUDA implementations: the eager functions of
    symmtune.torch, each taking (tensors..., group, *, cache) with the group
    given by name."""

    def ar(x: torch.Tensor, group_name: str, cache: str | None = None) -> None:
        all_reduce(x, group_name, cache=cache)

    def ag(a_shard: torch.Tensor, b: torch.Tensor, group_name: str, cache: str | None = None) -> torch.Tensor:
        return all_gather_matmul(a_shard, b, group_name, cache=cache)

    def ag_a(a_shard: torch.Tensor, b: torch.Tensor, group_name: str,
             cache: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return all_gather_matmul(a_shard, b, group_name, return_a=True, cache=cache)

    def rs(a: torch.Tensor, b: torch.Tensor, group_name: str, cache: str | None = None) -> torch.Tensor:
        return matmul_reduce_scatter(a, b, group_name, cache=cache)

    _LIB.impl("all_reduce_", ar, "CUDA")
    _LIB.impl("all_gather_matmul", ag, "CUDA")
    _LIB.impl("all_gather_matmul_a", ag_a, "CUDA")
    _LIB.impl("matmul_reduce_scatter", rs, "CUDA")

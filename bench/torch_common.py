"""What bench/torch_ops.py and the modules it runs share: result lines,
failures, and random inputs (torch_ops re-exports them, so torch_edge.py's
imports stay as they were)."""
from __future__ import annotations

import torch
import torch.distributed as dist

TOL = 1e-2
FAILS: list[str] = []


def out(section: str, name: str, key, value) -> None:
    if dist.get_rank() == 0:
        v = f"{value:.2f}" if isinstance(value, float) else value
        print(f"{section},{name},{key},{v}", flush=True)


def fail(msg: str) -> None:
    FAILS.append(msg)
    print(f"FAIL rank {dist.get_rank()}: {msg}", flush=True)


def rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    if torch.isnan(got).any():
        return float("inf")
    return ((got.double() - ref).norm() / ref.norm()).item()


def fresh(shape, gen: torch.Generator, dtype=torch.bfloat16) -> torch.Tensor:
    return torch.randn(shape, dtype=dtype, device="cuda", generator=gen)

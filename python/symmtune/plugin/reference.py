"""Inputs and references for verifying a kernel, bit-identical to the Go SDK's
(sdk/random.go): every rank derives every rank's input from (seed, rank, i),
so a float64 reference needs no data exchange, and a fresh seed per check
gives fresh inputs. numpy is imported only when these are called; the torch
variant runs on the GPU for large problems.
"""

from __future__ import annotations

import math
import os
from typing import Any

from ..kernels import source_hash


def script_version(path: str | os.PathLike[str]) -> str:
    """The kernel version of a plugin script: :func:`source_hash` of the
    file with its ``#!`` line left out. That line names the interpreter of
    one machine (``make python-plugins`` rewrites it to the local Python),
    so hashing it would give the same kernel another version on every
    machine, and its tuned entries would never carry over. A plugin calls
    ``script_version(__file__)`` in ``describe``."""
    with open(path, "rb") as f:
        text = f.read()
    if text.startswith(b"#!"):
        nl = text.find(b"\n")
        text = b"" if nl < 0 else text[nl + 1:]
    return source_hash(text)

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX_I = 0xD1B54A32D192ED03
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB


def uniform_scalar(seed: int, rank: int, i: int) -> float:
    """sdk.Uniform for one element, in plain Python: a value in [-1, 1)."""
    x = (seed ^ ((rank + 1) * _GOLDEN) ^ (i * _MIX_I)) & _MASK
    x = (x + _GOLDEN) & _MASK
    x = ((x ^ (x >> 30)) * _M1) & _MASK
    x = ((x ^ (x >> 27)) * _M2) & _MASK
    x ^= x >> 31
    return float(x >> 11) * (1.0 / (1 << 53)) * 2 - 1


def uniform(seed: int, rank: int, n: int, start: int = 0) -> Any:
    """Elements start..start+n-1 of rank's input under seed, as a float64
    numpy array (sdk.Uniform, vectorized)."""
    import numpy as np

    u64 = np.uint64
    i = np.arange(start, start + n, dtype=np.uint64)
    # Array arithmetic on uint64 wraps modulo 2^64, as Go's does.
    x = u64((seed ^ ((rank + 1) * _GOLDEN)) & _MASK) ^ (i * u64(_MIX_I))
    x += u64(_GOLDEN)
    x = (x ^ (x >> u64(30))) * u64(_M1)
    x = (x ^ (x >> u64(27))) * u64(_M2)
    x ^= x >> u64(31)
    return (x >> u64(11)).astype(np.float64) * (1.0 / (1 << 53)) * 2 - 1


def uniform_sum(seed: int, world: int, n: int) -> Any:
    """The float64 reference of an all-reduce (sum) over world ranks whose
    inputs come from uniform under seed, each element rounded to float32 as
    the ranks hold it (sdk.UniformSum)."""
    import numpy as np

    ref = np.zeros(n, dtype=np.float64)
    for r in range(world):
        ref += uniform(seed, r, n).astype(np.float32).astype(np.float64)
    return ref


def rel_err(got: Any, ref: Any) -> float:
    """‖got − ref‖₂ / ‖ref‖₂ (‖got − ref‖₂ when ref is all zero); NaN or Inf
    anywhere in got gives +Inf, so a poisoned element never passes (sdk.RelErr)."""
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return math.inf
    d = got - ref
    num = float(np.dot(d, d))
    den = float(np.dot(ref, ref))
    if den == 0:
        return math.sqrt(num)
    return math.sqrt(num / den)


# --- torch (GPU) variants ----------------------------------------------------


def _signed(c: int) -> int:
    return c - (1 << 64) if c >= 1 << 63 else c


def _lshr(x: Any, k: int) -> Any:
    # Logical shift right of int64 values: >> on int64 is arithmetic.
    return (x >> k) & ((1 << (64 - k)) - 1)


def uniform_torch(seed: int, rank: int, n: int, device: Any) -> Any:
    """uniform() computed on device with torch (int64 arithmetic wraps modulo
    2^64 on CPU and GPU alike), as a float64 tensor: the same values, without
    moving a large input from the host."""
    import torch

    i = torch.arange(n, dtype=torch.int64, device=device)
    x = torch.bitwise_xor(i * _signed(_MIX_I), _signed((seed ^ ((rank + 1) * _GOLDEN)) & _MASK))
    x = x + _signed(_GOLDEN)
    x = torch.bitwise_xor(x, _lshr(x, 30)) * _signed(_M1)
    x = torch.bitwise_xor(x, _lshr(x, 27)) * _signed(_M2)
    x = torch.bitwise_xor(x, _lshr(x, 31))
    return _lshr(x, 11).to(torch.float64) * (1.0 / (1 << 53)) * 2 - 1


def rel_err_torch(got: Any, ref: Any) -> float:
    """rel_err on torch tensors (on their device)."""
    import torch

    got = got.to(torch.float64)
    ref = ref.to(torch.float64)
    if not bool(torch.isfinite(got).all()):
        return math.inf
    num = float(torch.sum((got - ref) ** 2))
    den = float(torch.sum(ref * ref))
    if den == 0:
        return math.sqrt(num)
    return math.sqrt(num / den)

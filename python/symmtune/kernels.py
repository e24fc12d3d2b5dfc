"""The CUDA C sources of symmtune's kernels and what the Python runtime
needs to know about them, without importing torch.

The sources are the very files the Go plugins embed (python/symmtune/_kernels
links to kernels/allreduce/kernels and symm/cudamem/barrier.cuh; a wheel
copies them), so the Python runtime compiles what was tuned. The all-reduce's
rules (padding, macros, ALGO numbers, kernel version; the default config
and what symmtune.torch runs come with its choice, allreduce.choose) are
kernels/allreduce's, asked of libsymmtune (symmtune._native) and cached.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import _native


@dataclass(frozen=True)
class Choice:
    """What a kernel runs for one (shape, dtype, group): the config, and
    where it came from ("tuned", "nearest", "other-driver", "default")."""
    config: dict
    source: str
    median_us: float | None = None


def source_hash(*sources: bytes | str) -> str:
    """The kernel version for Description.kernel_version: the first 12 hex
    digits of the SHA-256 of the sources, each followed by a NUL byte (as
    sdk.SourceHash), so cache entries go stale when the kernel changes."""
    h = hashlib.sha256()
    for s in sources:
        h.update(s.encode() if isinstance(s, str) else s)
        h.update(b"\0")
    return h.hexdigest()[:12]

_KERNELS = Path(__file__).resolve().parent / "_kernels"

# Module attributes the library owns, fetched on first access: symm/cudamem's
# pad layout (PadSlots x MaxWorld u32 counters, then the barrier's timeout
# flag; MaxBlocks is the slots a kernel's blocks may use) and the CUDA
# plugin's algorithms with the ALGO number each compiles as (those
# symmtune.torch does not run are the library's to say: allreduce.choose).
_CONSTANTS = {
    "_PAD_SLOTS": ("allreduce", "pad_slots"), "_MAX_WORLD": ("allreduce", "max_world"),
    "_PAD_BYTES": ("allreduce", "pad_bytes"), "_MAX_BLOCKS": ("allreduce", "max_blocks"),
    "_ALGOS": ("allreduce", "algorithms"),
}


def __getattr__(name: str) -> Any:
    return _native.bind_constants(globals(), _CONSTANTS, name)


@lru_cache(maxsize=1024)
def _default(n: int, elt: int, world: int) -> dict[str, Any]:
    return _native.call("allreduce.default", n=n, elt=elt, world=world)


def padded(n: int, elt: int, world: int) -> int:
    """n elements padded with zeros to whole 16-byte vectors on every rank,
    as the Go plugin's geometry pads them (allreduce.Padded): any n runs on
    the vector path and splits evenly over the ranks."""
    return _default(n, elt, world)["padded"]


@lru_cache(maxsize=256)
def _macros(dtype: str, world: int) -> tuple[str, ...]:
    return tuple(_native.call("allreduce.macros", dtype=dtype, world=world))


def macros(dtype: str, world: int) -> list[str]:
    """The element type and team size as the kernels take them
    (allreduce.Macros)."""
    return list(_macros(dtype, world))


def _source(name: str) -> str:
    return (_KERNELS / name).read_text()


def kernel_sources() -> tuple[str, str, str, str]:
    """barrier.cuh, common.cuh, the all-reduce (allreduce.cu, algos.cu and
    lamport.cu, one text: allreduce.Allreduce) and util.cu: the texts the Go
    plugin embeds, read from the same files."""
    ar = "".join(_source("allreduce/" + f) for f in ("allreduce.cu", "algos.cu", "lamport.cu"))
    return (_source("barrier.cuh"), _source("allreduce/common.cuh"), ar, _source("allreduce/util.cu"))


@lru_cache(maxsize=None)
def kernel_version() -> str:
    """The CUDA all-reduce plugin's KernelVersion (allreduce.KernelVersion,
    asked of the library): cache entries of another version are stale."""
    return _native.call("kernel_version", kernel="allreduce")["version"]

"""The CUDA C sources of symmtune's kernels and what the Python runtime
needs to know about them, without importing torch.

The sources are the very files the Go plugins embed (python/symmtune/_kernels
links to kernels/allreduce/kernels and symm/cudamem/barrier.cuh; a wheel
copies them), so the Python runtime compiles what was tuned. The all-reduce's
rules (default config, padding, macros, ALGO numbers, kernel version) are
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
# plugin's algorithms with the ALGO number each compiles as.
_CONSTANTS = {
    "_PAD_SLOTS": ("allreduce", "pad_slots"), "_MAX_WORLD": ("allreduce", "max_world"),
    "_PAD_BYTES": ("allreduce", "pad_bytes"), "_MAX_BLOCKS": ("allreduce", "max_blocks"),
    "_PLUGIN_ALGOS": ("allreduce", "algorithms"),
}
# Algorithms of the plugin that symmtune.torch does not run (yet), with the
# reason: a tuned entry naming one falls back to the default config, with a
# warning.
_NOT_RUN = {"two_shot_ce_ag": "its host-side copy-engine pipeline (kernels/allreduce/stages.go) is not ported"}


def __getattr__(name: str) -> Any:
    if name == "_ALGOS":
        # The algorithms symmtune.torch runs, with their ALGO numbers
        # (two_shot_overlap leaves its sum in the output region past the
        # scratch, as the plugin's push variants do).
        algos = _native.bind_constants(globals(), _CONSTANTS, "_PLUGIN_ALGOS")
        globals()["_ALGOS"] = {k: v for k, v in algos.items() if k not in _NOT_RUN}
        return globals()["_ALGOS"]
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


LAMPORT = "one_shot_lamport"
# The smallest workspace one_shot_lamport's runners get: buffers for 2^19
# elements (1 MiB of bf16), so warming up at growing sizes does not grow it
# (and reopen every runner on it) at each.
_LAMPORT_MIN_ELEMENTS = 1 << 19


def lamport_max_bytes() -> int:
    """The largest message one_shot_lamport takes (allreduce.MaxLamportBytes)."""
    return int(_native.constants()["allreduce"]["lamport_max_bytes"])


@lru_cache(maxsize=1024)
def _region(n: int, elt: int, world: int, algorithm: str) -> tuple[int, str]:
    r = _native.call("allreduce.region", n=n, elt=elt, world=world, algorithm=algorithm)
    return r["bytes"], r["workspace"]


def workspace(n: int, elt: int, world: int, algorithm: str) -> tuple[str, int]:
    """Which workspace symmtune.torch's all-reduce runner of algorithm takes
    for n elements of elt bytes, and the symmetric bytes per rank it needs
    there (allreduce.region, the library's): "staging", [input | scratch |
    output] of n padded, or "lamport", one_shot_lamport's buffers, a
    workspace of their own (a runner of another algorithm would overwrite
    their sentinels), at least _LAMPORT_MIN_ELEMENTS' worth or the cap."""
    nbytes, kind = _region(n, elt, world, algorithm)
    if kind == "lamport":
        floor = min(_LAMPORT_MIN_ELEMENTS, lamport_max_bytes() // elt)
        nbytes = max(nbytes, _region(floor, elt, world, algorithm)[0])
    return kind, nbytes


def not_run(config: dict, n: int, elt: int) -> str | None:
    """Why symmtune.torch cannot run config for n elements of elt bytes
    (None if it can): an algorithm of _NOT_RUN, or one_shot_lamport past
    its cap (a tuned entry of the nearest size may name it)."""
    algo = str(config.get("algorithm"))
    if algo in _NOT_RUN:
        return _NOT_RUN[algo]
    cap = lamport_max_bytes()
    if algo == LAMPORT and n * elt > cap:
        return f"its buffers take messages up to {cap} bytes, this one is {n * elt}"
    return None


def default_config(n: int, elt: int, world: int) -> dict:
    """What runs when nothing is tuned: the CUDA plugin's DefaultFor
    (allreduce.Default, from kernels/allreduce/kernels/defaults.json's rules).
    A new dict on every call."""
    return dict(_default(n, elt, world)["config"])


def _source(name: str) -> str:
    return (_KERNELS / name).read_text()


def kernel_sources() -> tuple[str, str, str, str]:
    """barrier.cuh, common.cuh, allreduce.cu and util.cu: the texts the Go
    plugin embeds, read from the same files."""
    return (_source("barrier.cuh"), _source("allreduce/common.cuh"), _source("allreduce/allreduce.cu"),
            _source("allreduce/util.cu"))


@lru_cache(maxsize=None)
def kernel_version() -> str:
    """The CUDA all-reduce plugin's KernelVersion (allreduce.KernelVersion,
    asked of the library): cache entries of another version are stale."""
    return _native.call("kernel_version", kernel="allreduce")["version"]

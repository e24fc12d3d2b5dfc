"""The CUDA C sources of symmtune's kernels and what the Python runtime
needs to know about them, without importing torch.

The sources are the very files the Go plugins embed (python/symmtune/_kernels
links to kernels/allreduce/kernels and symm/cudamem/barrier.cuh; a wheel
copies them), so the Python runtime compiles what was tuned, and its kernel
version, the hash the cache entries carry, is computed the Go way.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


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

# symm/cudamem's pad layout: PadSlots x MaxWorld u32 counters, then the
# barrier's timeout flag; MaxBlocks is the slots a kernel's blocks may use.
_PAD_SLOTS, _MAX_WORLD = 1024, 8
_PAD_BYTES = _PAD_SLOTS * _MAX_WORLD * 4 + 256
_MAX_BLOCKS = _PAD_SLOTS - 1

# The CUDA plugin's algorithms, as its ALGO macro numbers them, that
# symmtune.torch runs (two_shot_overlap leaves its sum in the output region
# past the scratch, as the plugin's push variants do).
_ALGOS = {"one_shot": 1, "two_shot": 2, "two_shot_push": 3, "two_shot_ce": 4, "two_shot_overlap": 5}
# Algorithms of the plugin that symmtune.torch does not run (yet), with the
# reason: a tuned entry naming one falls back to the default config, with a
# warning.
_NOT_RUN = {"two_shot_ce_ag": "its host-side copy-engine pipeline (plugins/allreduce/stages.go) is not ported"}



def padded(n: int, elt: int, world: int) -> int:
    """n elements padded with zeros to whole 16-byte vectors on every rank,
    as the Go plugin's geometry pads them: any n runs on the vector path and
    splits evenly over the ranks."""
    unit = world * (16 // elt)
    return (n + unit - 1) // unit * unit


def macros(dtype: str, world: int) -> list[str]:
    """The element type and team size as the kernels take them (the Go
    plugin's macros)."""
    return [f"-DDTYPE_BF16={int(dtype == 'bf16')}", f"-DDTYPE_F16={int(dtype == 'f16')}", f"-DWORLD={world}"]


def default_config(n: int, elt: int, world: int) -> dict:
    """What runs when nothing is tuned: the CUDA plugin's DefaultFor, from
    the same rules file (kernels/allreduce/kernels/defaults.json; see its
    doc and plugins/allreduce/defaults.go)."""
    import json

    r = json.loads(_source("allreduce/defaults.json"))
    rule = next((x for x in r["rules"] if x["max_bytes"] == 0 or n * elt <= x["max_bytes"]), r["rules"][-1])
    work = padded(n, elt, world) * elt // 16 // world
    blocks = next(b for b in r["block_ladder"]
                  if b <= rule["blocks"] and (b == 1 or (b - 1) * rule["threads"] * rule["unroll"] < work))
    return {"algorithm": r["algorithm"], "blocks": blocks, "threads": rule["threads"], "unroll": rule["unroll"],
            "stages": 1}


def _source(name: str) -> str:
    return (_KERNELS / name).read_text()


def kernel_sources() -> tuple[str, str, str, str]:
    """barrier.cuh, common.cuh, allreduce.cu and util.cu: the texts the Go
    plugin embeds, read from the same files."""
    return (_source("barrier.cuh"), _source("allreduce/common.cuh"), _source("allreduce/allreduce.cu"),
            _source("allreduce/util.cu"))


def kernel_version() -> str:
    """The CUDA all-reduce plugin's KernelVersion (sdk.SourceHash of its
    embedded sources): cache entries of another version are stale."""
    return source_hash(*kernel_sources())



"""Hardware fingerprints, asked of libsymmtune (symmtune._native): package
hardware's ID and CPU fingerprint, and the cuda backend's GPU fingerprint
(symm/cudamem: CUDA driver and NVML, loaded by the library on first use),
so that a cache key written by ``symmtune search`` is found again from
Python. Fingerprint itself is plain data.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Dict

from . import _native
from ._errors import HardwareError


@dataclass(frozen=True)
class Fingerprint:
    """The hardware a config was tuned on (Go: hardware.Fingerprint). Zero
    fields mean unknown / not applicable."""

    kind: str = ""
    name: str = ""
    count: int = 0
    cores: int = 0
    sms: int = 0
    memory_mib: int = 0
    compute: str = ""
    driver: str = ""
    interconnect: str = ""

    def id(self) -> str:
        """The stable cache-key form, e.g. ``gpu/NVIDIA H200/x4/sm90/132sm/140GiB/drv580.95.05/NVLink x18``
        (hardware.Fingerprint.ID's)."""
        return _id(self)

    def __str__(self) -> str:
        return self.id()

    def without_driver(self) -> Fingerprint:
        """The same hardware with the driver version left out (hardware.Fingerprint.WithoutDriver)."""
        return dataclasses.replace(self, driver="")

    def as_dict(self) -> Dict[str, Any]:
        """The non-zero fields, keyed as in the cache's hardware_info table."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) not in ("", 0)}


@lru_cache(maxsize=256)
def _id(f: Fingerprint) -> str:
    return _native.call("hardware.id", fingerprint=f.as_dict())["id"]


def for_backend(backend: str, world: int) -> Fingerprint:
    """The fingerprint a search on backend ("cpu" or "cuda") with world
    ranks records. HardwareError when this machine cannot be fingerprinted
    (no GPU, no driver, fewer GPUs than world), ValueError for another
    backend."""
    answer = _native.call("hardware.fingerprint", backend=backend, world=world)
    if "error" in answer:
        raise HardwareError(answer["error"]["message"])
    return Fingerprint(**answer["fingerprint"])


def cpu() -> Fingerprint:
    """This machine's CPU, as hardware.CPU(): the first "model name" of
    /proc/cpuinfo, the usable logical cores, count 1, interconnect shm."""
    return for_backend("cpu", 1)


def cuda(world: int) -> Fingerprint:
    """GPUs 0..world-1 as the Go CUDA backend's ranks see them (CUDA
    ordinals, so CUDA_VISIBLE_DEVICES selects them)."""
    return for_backend("cuda", world)

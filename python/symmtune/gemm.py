"""The GPU GEMM plugins (agmm, matmulrs) without importing torch: their
search space and config rules, the default config and the kernel version,
as the benchmarks and tests ask them. The plans, flags, fused tables and
layout the launch sequences use live in Go (libsymmtune runs them); tests
ask the library for them directly (symmtune._native.call).

Every rule is kernels/gemm/gpu's own, asked of libsymmtune (symmtune._native):
this module holds the Python types of its answers (Problem, Config, the
dtype names) and converts to and from the library's JSON, caching answers.
Layout constants (PAYLOAD_OFFSET, FLAG_STRIDE, MAX_*, COPY_THREADS,
REDUCE_THREADS) and SPACE are the library's too, fetched on first access.
A runtime's first call asks the library once for its whole choice
(gemm.choose: the cache's config or the default, checked, and the
layout; see symmtune._torch_gemm), not this module: it takes only the
kernel and dtype names from here, never a call into it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import _native, hopper

AGMM, MATMULRS = "agmm", "matmulrs"
KERNELS = (AGMM, MATMULRS)

# The dtypes of the GPU GEMM kernels (ParseProblem's). The FP8 ones
# (docs/fp8.md) take e4m3 operands with fp32 scales, one per tensor (e4m3)
# or one per row of A and of B stored [N, K] (e4m3_row), and write bf16;
# a cache keeps their winners apart by the dtype in its key.
DTYPES = ("bf16", "f16", "e4m3", "e4m3_row")
SCALED_DTYPES = ("e4m3", "e4m3_row")

# space.go's impls: the cuBLASLt pipeline, or the persistent Hopper GEMM
# with a tile ("fused:" + a tile name of hopper.searched()).
IMPL_PIPELINE, IMPL_FUSED = "pipeline", "fused"

_GPU = Path(__file__).resolve().parent / "_kernels" / "gemm"

# Module attributes the library owns (layout.go, space.go, fusedplan.go and
# the cuda build's launch constants): fetched on first access.
_CONSTANTS = {
    "MAX_WORLD": ("gemm", "max_world"), "MAX_CHUNKS": ("gemm", "max_chunks"), "MAX_STREAMS": ("gemm", "max_streams"),
    "MAX_RS_CHUNKS": ("gemm", "max_rs_chunks"), "FLAG_STRIDE": ("gemm", "flag_stride"),
    "PAYLOAD_OFFSET": ("gemm", "payload_offset"), "COPY_THREADS": ("gemm", "copy_threads"),
    "REDUCE_THREADS": ("gemm", "reduce_threads"),
}


def __getattr__(name: str) -> Any:
    if name in ("SPACE", "_ADDED_LATER"):
        spaces = {k: _native.call("gemm.space", kernel=k) for k in KERNELS}
        globals()["SPACE"] = {k: {p["name"]: tuple(p["values"]) for p in sp["params"]} for k, sp in spaces.items()}
        globals()["_ADDED_LATER"] = {n: v for sp in spaces.values() for n, v in sp["added_later"].items()}
        return globals()[name]
    return _native.bind_constants(globals(), _CONSTANTS, name)


@dataclass(frozen=True)
class Problem:
    """A GEMM on a team: M rows in all (agmm: of the gathered A and of C;
    matmulrs: of each rank's A and partial product), split evenly over
    world ranks; B is [k, n]."""
    m: int
    n: int
    k: int
    world: int

    @property
    def rows(self) -> int:
        return self.m // self.world

    def request(self, **extra: Any) -> dict[str, Any]:
        return {"m": self.m, "n": self.n, "k": self.k, "world": self.world, **extra}


@lru_cache(maxsize=64)
def check_device(dtype: str, capability: tuple[int, int]) -> None:
    """Dtype.CheckDevice: ValueError with the reason when a GPU of compute
    capability (major, minor) cannot multiply dtype (FP8 needs FP8 tensor
    cores)."""
    _native.call("gemm.check_device", dtype=dtype, major=capability[0], minor=capability[1])


@dataclass(frozen=True)
class Config:
    """A parsed config of either kernel (fields of the other kernel unset);
    impl is IMPL_PIPELINE or IMPL_FUSED, with the fused GEMM's tile."""
    kernel: str
    chunks: int
    streams: int
    batch: bool
    impl: str = IMPL_PIPELINE
    tile: hopper.Tile | None = None
    algo: int = 0
    sm_reserve: int = 0
    graph: bool = False
    copy: str = ""
    copy_blocks: int = 0
    direction: str = ""
    push: str = ""
    reduce_blocks: int = 0
    reduce: str = ""
    no_fast_accum: bool = False  # fast_accum=0 (FP8 only)

    def request(self) -> dict[str, Any]:
        """The config as the library's typed config (tile as its fields)."""
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["tile"] = asdict(self.tile) if self.tile is not None else None
        return d


def parse_config(kernel: str, c: dict) -> Config:
    """ParseConfig: every parameter of kernel's space present with one of its
    values (parameters added later default to what configs without them ran)."""
    return _parse_config(kernel, json.dumps(c, sort_keys=True))


@lru_cache(maxsize=1024)
def _parse_config(kernel: str, config: str) -> Config:
    d = _native.call("gemm.parse_config", kernel=kernel, config=json.loads(config))
    tile = d.pop("tile")
    return Config(tile=hopper.Tile(**tile) if tile else None, **d)


@lru_cache(maxsize=1024)
def validate(c: Config, p: Problem, dtype: str | None = None) -> None:
    """space.go's Validate: ValueError with the reason a config cannot run
    on p (of dtype, when given: an FP8 problem's rules differ)."""
    _native.call("gemm.validate", config=c.request(), problem=p.request(**({} if dtype is None else {"dtype": dtype})))


@lru_cache(maxsize=None)
def _default(kernel: str) -> dict[str, Any]:
    return _native.call("gemm.default", kernel=kernel)


def default_config(kernel: str) -> dict:
    """The plugin's Default (a new dict on every call)."""
    return dict(_default(kernel))


@lru_cache(maxsize=None)
def kernel_version(kernel: str) -> str:
    """The plugin's KernelVersion (gpu.KernelVersion, asked of the library:
    the sources it was built from)."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown GPU GEMM kernel {kernel!r}")
    return _native.call("kernel_version", kernel=kernel)["version"]


def util_source() -> str:
    """kernels/gemm/gpu/kernels/gemm_util.cu: the pipelines' helper kernels
    (the SM copy, the reduce-scatter's fp32 reduction)."""
    return (_GPU / "kernels" / "gemm_util.cu").read_text()

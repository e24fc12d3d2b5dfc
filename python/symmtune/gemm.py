"""The GPU GEMM plugins (agmm, matmulrs) as symmtune.torch runs them, without
importing torch: their search space and config rules, the symmetric
layout, the default config and the kernel version. The plans, flags and
fused tables the launch sequences use live in Go (libsymmtune runs them);
tests ask the library for them directly (symmtune._native.call).

Every rule is kernels/gemm/gpu's own, asked of libsymmtune (symmtune._native):
this module holds the Python types the runtime uses and converts to and
from the library's JSON, caching answers per problem (the runtime asks once
per problem and config, never per launch). Layout constants (PAYLOAD_OFFSET,
FLAG_STRIDE, MAX_*, COPY_THREADS, REDUCE_THREADS) and SPACE are the
library's too, fetched on first access. What is left here is the runtime's
own policy: choose() and choose_runnable() (cache lookup, fallback, warnings).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import _native, hopper
from .cache import NoTunedConfig, lookup, shape_string
from .kernels import Choice

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


@lru_cache(maxsize=1024)
def check_problem(kernel: str, p: Problem, dtype: str = "bf16") -> None:
    """ParseProblem's rules (the element type's too): ValueError with the
    reason."""
    _native.call("gemm.check_problem", **p.request(kernel=kernel, dtype=dtype))


@lru_cache(maxsize=64)
def check_device(dtype: str, capability: tuple[int, int]) -> None:
    """Dtype.CheckDevice: ValueError with the reason when a GPU of compute
    capability (major, minor) cannot multiply dtype (FP8 needs FP8 tensor
    cores)."""
    _native.call("gemm.check_device", dtype=dtype, major=capability[0], minor=capability[1])


def _dtype(dtype: str | None) -> dict[str, str]:
    """A request's dtype: none (the lax problem the rules take as in Go)
    or the dtype, whose ParseProblem's rules and layout apply."""
    return {} if dtype is None else {"dtype": dtype}


@lru_cache(maxsize=1024)
def _layout(kernel: str, p: Problem, elem: int, dtype: str | None = None) -> dict[str, int]:
    if dtype is not None:
        return _native.call("gemm.layout", **p.request(kernel=kernel, dtype=dtype))
    return _native.call("gemm.layout", **p.request(kernel=kernel, elem=elem))


def symmetric_bytes(kernel: str, p: Problem, elem: int = 2, dtype: str | None = None) -> int:
    """The symmetric region kernel needs per rank (layout.go's
    SymmetricBytes): of elem-byte elements, or, given a dtype, of that
    dtype's problem (FP8: 1-byte operands, bf16 partials, row scales)."""
    return _layout(kernel, p, elem, dtype)["symmetric_bytes"]


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
    _native.call("gemm.validate", config=c.request(), problem=p.request(**_dtype(dtype)))


@lru_cache(maxsize=None)
def _default(kernel: str) -> dict[str, Any]:
    return _native.call("gemm.default", kernel=kernel)


def default_config(kernel: str) -> dict:
    """The plugin's Default (a new dict on every call)."""
    return dict(_default(kernel))


@lru_cache(maxsize=1024)
def _fit_default(kernel: str, p: Problem, dtype: str | None,
                 capability: tuple[int, int] | None = None, sms: int | None = None) -> dict[str, Any]:
    gpus: dict[str, Any] = {}
    if capability is not None:
        gpus = {"major": capability[0], "minor": capability[1]}
        if sms is not None:
            gpus["sms"] = sms
    return _native.call("gemm.default", kernel=kernel, problem=p.request(**_dtype(dtype)), **gpus)


def fit_default(kernel: str, p: Problem, dtype: str | None = None,
                capability: tuple[int, int] | None = None, sms: int | None = None) -> dict:
    """FitDefault: the default config made to run on p (of dtype, when
    given) (Default as is where Validate takes it, else with fewer chunks),
    or ValueError with why none runs. Given the GPUs' compute capability
    (major, minor) and, optionally, their SM count, DefaultOn instead: the
    family measured best on such GPUs (the fused GEMM on sm_90), fitted the
    same way. A new dict on every call."""
    return dict(_fit_default(kernel, p, dtype, capability, sms))


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


_warned: set[tuple] = set()


def _warn_once(key: tuple, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=5)


def choose(kernel: str, p: Problem, dtype: str, cache: str | os.PathLike | None = None,
           hardware=None, capability: tuple[int, int] | None = None, sms: int | None = None) -> Choice:
    """The config kernel runs on p of dtype (one of DTYPES: an FP8 dtype
    looks up its own winners): the cache's answer for this machine if
    it was tuned for the plugin's current sources and runs on p, else the
    plugin's default (fitted to p: fit_default), with a warning (once per
    kernel, problem and dtype) saying how to tune. Errors of the cache
    (corrupt, unreadable) and of the fingerprint propagate. hardware: as
    symmtune.lookup's (None: this machine). capability and sms: the GPU's,
    for the default of its family (fit_default: the fused GEMM on sm_90)."""
    check_problem(kernel, p, dtype)
    shape = f"m={p.m},n={p.n},k={p.k}"
    how = f"tune it with: symmtune search --backend cuda --kernel {kernel} --world {p.world} --shape {shape} --dtype {dtype}"
    key = (kernel, p, dtype)
    version = kernel_version(kernel)
    try:
        m = lookup(kernel, p.world, dtype, {"m": p.m, "n": p.n, "k": p.k}, backend="cuda", cache=cache,
                   kernel_version=version, hardware=hardware)
    except NoTunedConfig:
        _warn_once(key, f"symmtune: no tuned {kernel} for {p.world} ranks, {dtype}, {shape} (for these kernel "
                        f"sources, version {version}); running the default config; {how}")
        return Choice(fit_default(kernel, p, dtype, capability, sms), "default")
    cfg = dict(m.entry.config)
    try:
        validate(parse_config(kernel, cfg), p, dtype)
    except ValueError as e:
        _warn_once(key, f"symmtune: the {kernel} config tuned for {shape_string(m.entry.shape)} does not run on "
                        f"{shape} ({e}); running the default config; {how}")
        return Choice(fit_default(kernel, p, dtype, capability, sms), "default")
    source = "other-driver" if m.other_driver else ("tuned" if m.exact else "nearest")
    return Choice(cfg, source, m.entry.median_us)


def choose_runnable(kernel: str, p: Problem, dtype: str, cache: str | os.PathLike | None = None,
                    hardware=None, no_fused: str | None = None, capability: tuple[int, int] | None = None,
                    sms: int | None = None) -> Choice:
    """choose(), for a runtime that may not run impl=fused here: when
    no_fused says why (e.g. the GPU is not sm_90), a chosen fused config is
    replaced by the default (fitted to p), with a warning, once per config,
    that names it and the reason. capability and sms: as choose's."""
    c = choose(kernel, p, dtype, cache, hardware, capability, sms)
    impl = c.config.get("impl", IMPL_PIPELINE)
    if impl == IMPL_PIPELINE or no_fused is None:
        return c
    named = ",".join(f"{k}={v}" for k, v in sorted(c.config.items()))
    _warn_once(("fused", kernel, named),
               f"symmtune: the {c.source} {kernel} config for {p.world} ranks, {dtype}, m={p.m},n={p.n},k={p.k} is "
               f"impl={impl} ({named}); {no_fused}, so symmtune.torch runs the default pipeline config")
    return Choice(fit_default(kernel, p, dtype), "default")  # without the GPU: the pipeline default

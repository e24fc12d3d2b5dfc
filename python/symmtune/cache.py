"""The tuned-config cache from Python: load the TOML file ``symmtune search``
writes and pick the config to run, by exactly the rules of the Go API
(cache/file.go for what a valid file is, cache/lookup.go for the choice).

The rules, in order:

1. Candidates have the query's kernel, world size and dtype, exactly the
   query's dimension names, and the kernel version and backend when the
   query names them.
2. Hardware: entries tuned on this machine's fingerprint are used when there
   are any. Only when there are none, entries from the same GPU model, SM
   count, memory and link topology under another driver version are used,
   and the match says so (``other_driver``): a driver upgrade keeps its
   tuning. A different GPU, count or topology never matches.
3. The exact shape wins (``exact``); among several, the newest ``tuned_at``.
   Otherwise the nearest shape, by the sum over dimensions of |log2(a/b)|,
   ties broken by the newest ``tuned_at``, then the canonical key string.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from . import _redis
from . import hardware as _hw
from .hardware import Fingerprint

VERSION = 1
MAX_DIM = 1 << 40
MAX_COUNT = 1 << 30
_INT64 = (-(1 << 63), (1 << 63) - 1)
ZERO_TIME = _dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc)

_ENTRY_KEYS = {"kernel", "kernel_version", "backend", "hardware", "world", "dtype", "shape", "config",
               "median_us", "min_us", "p90_us", "default_median_us", "trials", "tuned_at", "hardware_info"}
_HW_STR = ("kind", "name", "compute", "driver", "interconnect")
_HW_INT = ("count", "cores", "sms", "memory_mib")
_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


class CacheError(ValueError):
    """The cache file is not a symmtune cache (not TOML, another format
    version, an unknown key, a broken entry). The message names the file."""


class NoTunedConfig(LookupError):
    """No tuned entry answers the query (or there is no cache file yet)."""


@dataclass(frozen=True)
class Entry:
    """One tuned winner and its measurements (Go: cache.Entry)."""

    kernel: str
    kernel_version: str
    backend: str
    hardware: str
    world: int
    dtype: str
    shape: dict[str, int]
    config: dict[str, int | str]
    median_us: float = 0.0
    min_us: float = 0.0
    p90_us: float = 0.0
    default_median_us: float = 0.0
    trials: int = 0
    tuned_at: _dt.datetime = ZERO_TIME
    hardware_info: Fingerprint = field(default_factory=Fingerprint)

    def key_string(self) -> str:
        """The canonical key text, kernel@version/backend/hardware/w<world>/dtype/shape."""
        version = "@" + self.kernel_version if self.kernel_version else ""
        return f"{self.kernel}{version}/{self.backend}/{self.hardware}/w{self.world}/{self.dtype}/{shape_string(self.shape)}"

    def ident(self) -> tuple:
        return (self.kernel, self.kernel_version, self.backend, self.hardware, self.world, self.dtype,
                shape_string(self.shape))


@dataclass(frozen=True)
class Match:
    """A lookup's answer: the entry, whether its shape is the query's
    (``exact``) and whether it was tuned under another driver version of the
    same hardware (``other_driver``)."""

    entry: Entry
    exact: bool
    other_driver: bool = False

    @property
    def config(self) -> dict[str, int | str]:
        return dict(self.entry.config)

    def to_json(self) -> dict:
        """The object ``symmtune lookup --json`` prints for this match."""
        e = self.entry
        return {
            "exact": self.exact, "other_driver": self.other_driver, "kernel": e.kernel,
            "kernel_version": e.kernel_version, "backend": e.backend, "hardware": e.hardware, "world": e.world,
            "dtype": e.dtype, "shape": dict(e.shape), "config": dict(e.config), "median_us": e.median_us,
            "min_us": e.min_us, "p90_us": e.p90_us, "default_median_us": e.default_median_us,
            "trials": e.trials, "tuned_at": go_time(e.tuned_at),
        }


def shape_string(shape: dict[str, int]) -> str:
    """Canonical shape text, name-sorted: "m=64,n=128"."""
    return ",".join(f"{k}={shape[k]}" for k in sorted(shape))


def go_time(t: _dt.datetime) -> str:
    """t as Go's encoding/json writes a UTC time.Time (RFC 3339, trailing
    zeros of the fraction dropped)."""
    t = t.astimezone(_dt.timezone.utc)
    s = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if t.microsecond:
        s += ("." + f"{t.microsecond:06d}").rstrip("0")
    return s + "Z"


def default_path() -> str:
    """$SYMMTUNE_CACHE, else $XDG_CACHE_HOME/symmtune/configs.toml (when
    absolute), else ~/.cache/symmtune/configs.toml: cache.DefaultPath."""
    p = os.environ.get("SYMMTUNE_CACHE")
    if p:
        return p
    x = os.environ.get("XDG_CACHE_HOME", "")
    if x and os.path.isabs(x):
        return os.path.join(x, "symmtune", "configs.toml")
    home = os.environ.get("HOME")
    if home:
        return os.path.join(home, ".cache", "symmtune", "configs.toml")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", "symmtune", "configs.toml")


# --- loading -----------------------------------------------------------------


def load(path: str | os.PathLike | None = None) -> list[Entry]:
    """The entries of the cache file at path (default_path() when None), or
    of the Redis server a redis:// or rediss:// URL names, sorted as the Go
    store sorts them. A missing file raises NoTunedConfig; a file or an entry
    the Go code would refuse raises CacheError; an unreachable server
    _redis.CacheUnavailable."""
    path = os.fspath(path) if path is not None else default_path()
    if _redis.is_redis_url(path):
        return _load_redis(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NoTunedConfig(f"no tuned configs: cache {path} does not exist (run `symmtune search` first)") from None
    return parse(data, path)


def _load_redis(url: str) -> list[Entry]:
    try:
        where, values = _redis.fetch(url)
    except ValueError as e:
        raise CacheError(str(e)) from None
    entries: list[Entry] = []
    seen: set[tuple] = set()
    for key, value in values:
        one = parse(value, f"{where} key {key!r}")
        if len(one) != 1:
            raise CacheError(f"cache {where} key {key!r}: holds {len(one)} entries, want 1")
        if one[0].ident() in seen:
            raise CacheError(f"cache {where}: two entries with the key {one[0].key_string()}")
        seen.add(one[0].ident())
        entries.extend(one)
    entries.sort(key=_sort_key)
    return entries


def location(path: str) -> str:
    """path as it may be shown: a Redis URL without its credentials."""
    if _redis.is_redis_url(path):
        try:
            return _redis.parse_url(path).location()
        except ValueError:
            return _redis._redact_raw(path)
    return path


def parse(data: bytes, path: str = "<cache>") -> list[Entry]:
    """Decodes and validates cache file contents; path only names the file."""
    tomllib = _toml()
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CacheError(f"cache {path}: not UTF-8 text: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise CacheError(f"cache {path}: {e}") from None
    for k in doc:
        if k not in ("version", "entry"):
            raise CacheError(f'cache {path}: unknown key "{k}"')
    raw_entries = doc.get("entry", [])
    if not isinstance(raw_entries, list) or not all(isinstance(e, dict) for e in raw_entries):
        raise CacheError(f"cache {path}: entry: want an array of tables ([[entry]])")
    for raw in raw_entries:
        _check_keys(path, raw)
    if "version" in doc:
        v = doc["version"]
        if type(v) is not int:
            raise CacheError(f"cache {path}: version: want an integer")
        if v != VERSION:
            raise CacheError(f"cache {path}: format version {v} is not supported (this symmtune reads version "
                             f"{VERSION}); upgrade symmtune or move the file away")
    elif raw_entries:
        raise CacheError(f"cache {path}: no format version: want `version = {VERSION}` at the top")
    entries: list[Entry] = []
    seen: dict[tuple, int] = {}
    for i, raw in enumerate(raw_entries):
        note = f' (kernel "{raw["kernel"]}")' if isinstance(raw.get("kernel"), str) and raw.get("kernel") else ""
        try:
            entry = _entry(raw)
        except ValueError as err:
            raise CacheError(f"cache {path}: [[entry]] #{i + 1}{note}: {err}") from None
        if entry.ident() in seen:
            raise CacheError(f"cache {path}: [[entry]] #{i + 1}{note}: same key as [[entry]] "
                             f"#{seen[entry.ident()] + 1} ({entry.key_string()})")
        seen[entry.ident()] = i
        entries.append(entry)
    entries.sort(key=_sort_key)
    return entries


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
        return tomllib
    try:
        import tomli  # the same parser, packaged for older Pythons
    except ImportError:
        raise ImportError("reading the cache needs Python >= 3.11 or the tomli package") from None
    return tomli


def _sort_key(e: Entry) -> tuple:
    return (e.kernel.encode(), e.backend.encode(), e.hardware.encode(), e.world, e.dtype.encode(),
            shape_string(e.shape).encode(), e.kernel_version.encode())


def _check_keys(path: str, e: dict) -> None:
    for k, v in e.items():
        if k not in _ENTRY_KEYS:
            raise CacheError(f'cache {path}: unknown key "entry.{k}"')
        if k in ("shape", "config") and isinstance(v, dict):
            for name, x in v.items():
                if isinstance(x, dict):
                    raise CacheError(f'cache {path}: unknown key "entry.{k}.{name}.{next(iter(x), "")}"')
        if k == "hardware_info" and isinstance(v, dict):
            for name in v:
                if name not in _HW_STR and name not in _HW_INT:
                    raise CacheError(f'cache {path}: unknown key "entry.hardware_info.{name}"')


def _str(raw: dict, key: str, where: str = "") -> str:
    v = raw.get(key, "")
    if not isinstance(v, str):
        raise ValueError(f"{where}{key}: want a string, not {_toml_type(v)}")
    return v


def _int(raw: dict, key: str, where: str = "") -> int:
    v = raw.get(key, 0)
    if type(v) is not int or not _INT64[0] <= v <= _INT64[1]:
        raise ValueError(f"{where}{key}: want an integer, not {_toml_type(v)}")
    return v


def _float(raw: dict, key: str) -> float:
    v = raw.get(key, 0.0)
    if type(v) is int:
        if not _INT64[0] <= v <= _INT64[1]:
            raise ValueError(f"{key}: integer out of range")
        v = float(v)
    if type(v) is not float:
        raise ValueError(f"{key}: want a number, not {_toml_type(v)}")
    if math.isnan(v) or math.isinf(v) or v < 0:
        raise ValueError(f"{key} = {v}: must be a finite time >= 0")
    return v


def _toml_type(x) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", list: "array",
            dict: "table"}.get(type(x), "datetime")


def _check_name(name: str) -> None:
    if name == "":
        raise ValueError("with an empty name")
    if any(c in name for c in ",= \t\r\n"):
        raise ValueError(f"{name!r}: name contains ',', '=' or whitespace")


def _tuned_at(v) -> _dt.datetime:
    if v is None:
        return ZERO_TIME
    if isinstance(v, str):
        # Go decodes a string through time.Time's RFC 3339 text form.
        m = _RFC3339.match(v)
        if not m:
            raise ValueError(f"tuned_at {v!r}: not an RFC 3339 time")
        tz = m.group(8)
        v = _dt.datetime.fromisoformat(v[:19].replace("t", "T") + (m.group(7) or "")[:7] +
                                       ("+00:00" if tz in "Zz" else tz))
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:  # a TOML local date-time: Go reads it as UTC
            v = v.replace(tzinfo=_dt.timezone.utc)
        try:
            return v.astimezone(_dt.timezone.utc)
        except OverflowError:
            raise ValueError(f"tuned_at {v.isoformat()}: year outside 1..9999") from None
    if isinstance(v, _dt.date):
        return _dt.datetime(v.year, v.month, v.day, tzinfo=_dt.timezone.utc)
    if isinstance(v, _dt.time):
        raise ValueError(f"tuned_at {v} has no date (or year 0)")
    raise ValueError(f"tuned_at: want a date-time, not {_toml_type(v)}")


def _entry(raw: dict) -> Entry:
    kernel = _str(raw, "kernel")
    if not kernel:
        raise ValueError("kernel is missing")
    world = _int(raw, "world")
    if not 1 <= world <= MAX_COUNT:
        raise ValueError(f"world {world}: must be in 1..{MAX_COUNT}")
    trials = _int(raw, "trials")
    if not 0 <= trials <= MAX_COUNT:
        raise ValueError(f"trials {trials}: must be in 0..{MAX_COUNT}")
    tuned_at = _tuned_at(raw.get("tuned_at"))
    shape_raw = raw.get("shape", {})
    config_raw = raw.get("config", {})
    hw_raw = raw.get("hardware_info", {})
    for name, v in (("shape", shape_raw), ("config", config_raw), ("hardware_info", hw_raw)):
        if not isinstance(v, dict):
            raise ValueError(f"{name}: want a table, not {_toml_type(v)}")
    shape: dict[str, int] = {}
    for name in sorted(shape_raw):
        v = shape_raw[name]
        if type(v) is not int:
            raise ValueError(f"shape: dimension {name!r} = {v} ({_toml_type(v)}) is not an integer")
        shape[name] = v
    config: dict[str, int | str] = {}
    for name in sorted(config_raw):
        v = config_raw[name]
        if type(v) is float and v == math.trunc(v) and abs(v) <= 1 << 53:
            v = int(v)
        if type(v) not in (int, str):
            raise ValueError(f"config: parameter {name!r} = {v} ({_toml_type(v)}) is neither an integer nor a string")
        config[name] = v
    hw_fields: dict[str, Any] = {k: _str(hw_raw, k, "hardware_info.") for k in _HW_STR}
    hw_fields.update({k: _int(hw_raw, k, "hardware_info.") for k in _HW_INT})
    hw = Fingerprint(**hw_fields)
    dtype = _str(raw, "dtype")
    if not dtype:
        raise ValueError("dtype is missing")
    if not shape:
        raise ValueError("shape is missing or empty")
    for name, v in shape.items():
        try:
            _check_name(name)
        except ValueError as err:
            raise ValueError(f"shape: dimension {err}") from None
        if not 0 < v <= MAX_DIM:
            raise ValueError(f"shape: dimension {name!r} = {v} must be in 1..{MAX_DIM}")
    for name in config:
        try:
            _check_name(name)
        except ValueError as err:
            raise ValueError(f"config: parameter {err}") from None
    figures = {k: _float(raw, k) for k in ("median_us", "min_us", "p90_us", "default_median_us")}
    for k in _HW_INT:
        if getattr(hw, k) < 0:
            raise ValueError(f"hardware_info: hardware {k} {getattr(hw, k)} is negative")
    return Entry(kernel=kernel, kernel_version=_str(raw, "kernel_version"), backend=_str(raw, "backend"),
                 hardware=_str(raw, "hardware"), world=world, dtype=dtype, shape=shape, config=config,
                 trials=trials, tuned_at=tuned_at, hardware_info=hw, **figures)


# --- lookup ------------------------------------------------------------------

_DIST_EPSILON = 1e-9


def _shape_distance(a: dict[str, int], b: dict[str, int]) -> float | None:
    if len(a) != len(b):
        return None
    d = 0.0
    for name, x in a.items():
        y = b.get(name)
        if y is None or x <= 0 or y <= 0:
            return None
        d += abs(math.log2(x) - math.log2(y))
    return d


def _better(a: Entry, a_exact: bool, a_dist: float, b: Entry, b_exact: bool, b_dist: float) -> bool:
    if a_exact != b_exact:
        return a_exact
    if abs(a_dist - b_dist) > _DIST_EPSILON:
        return a_dist < b_dist
    if a.tuned_at != b.tuned_at:
        return a.tuned_at > b.tuned_at
    ak, bk = a.key_string().encode(), b.key_string().encode()
    if ak != bk:
        return ak < bk
    return repr(a.ident()) < repr(b.ident())


def select(entries: list[Entry], kernel: str, world: int, dtype: str, shape: dict[str, int], *,
           kernel_version: str | None = None, backend: str | None = None,
           hardware: Fingerprint | None = None) -> Match | None:
    """The rules of the module doc over already loaded entries (Go:
    Store.Lookup); None when nothing answers. Unset filters match anything."""
    if not kernel or not dtype or world < 1 or not shape or any(v <= 0 for v in shape.values()):
        return None

    def pick(hw_ok) -> tuple[Entry, bool] | None:
        best: tuple[Entry, bool, float] | None = None
        for e in entries:
            if (e.kernel != kernel or e.world != world or e.dtype != dtype
                    or (kernel_version and e.kernel_version != kernel_version)
                    or (backend and e.backend != backend) or not hw_ok(e)):
                continue
            exact = e.shape == shape
            dist = 0.0
            if not exact:
                d = _shape_distance(e.shape, shape)
                if d is None:
                    continue
                dist = d
            if best is None or _better(e, exact, dist, *best):
                best = (e, exact, dist)
        return None if best is None else (best[0], best[1])

    if hardware is None:
        found = pick(lambda e: True)
        return None if found is None else Match(found[0], found[1])
    want = hardware.id()
    found = pick(lambda e: e.hardware == want)
    if found is not None:
        return Match(found[0], found[1])
    # No entry of this exact fingerprint: the same hardware under another driver.
    base = hardware.without_driver().id()
    found = pick(lambda e: e.hardware_info.kind != "" and e.hardware_info.without_driver().id() == base)
    return None if found is None else Match(found[0], found[1], other_driver=True)


def lookup(kernel: str, world: int, dtype: str, shape: dict[str, int], backend: str | None = "cuda",
           cache: str | os.PathLike | None = None, *, kernel_version: str | None = None,
           hardware: Fingerprint | str | None = None) -> Match:
    """The tuned config to run kernel at world ranks, dtype and shape
    (e.g. ``{"n": 1 << 20}``), by cache.Lookup's rules (see the module doc).

    backend: the entries' backend ("cuda", "cpu"; None for any).
    cache: the cache file or redis:// URL (default: $SYMMTUNE_CACHE or ~/.cache/symmtune/configs.toml).
    kernel_version: only entries of this kernel version (None for any; the
    Go CLI passes the plugin's current version).
    hardware: the fingerprint to match (None: this machine's for backend and
    world, computed as the Go side does; "any": every machine's).

    Raises NoTunedConfig when nothing answers (or there is no cache file),
    CacheError for a corrupt cache, _redis.CacheUnavailable (a
    ConnectionError) for a Redis server that cannot be read,
    hardware.HardwareError when this machine's GPUs cannot be fingerprinted.
    """
    if not isinstance(shape, dict) or not shape:
        raise ValueError(f"shape {shape!r}: want a dict of dimension name to size, e.g. {{'n': 1048576}}")
    for name, v in shape.items():
        if type(v) is not int or v <= 0:
            raise ValueError(f"shape: dimension {name!r} = {v!r} must be a positive integer")
    if world < 1:
        raise ValueError(f"world size {world}: want at least 1")
    path = os.fspath(cache) if cache is not None else default_path()
    entries = load(path)
    if hardware is None:
        if backend is None:
            raise ValueError('hardware=None fingerprints this machine for a backend: name one, or pass hardware="any"')
        fp: Fingerprint | None = _hw.for_backend(backend, world)
    elif hardware == "any":
        fp = None
    elif isinstance(hardware, Fingerprint):
        fp = hardware
    else:
        raise TypeError(f'hardware {hardware!r}: want a Fingerprint, None (this machine) or "any"')
    m = select(entries, kernel, world, dtype, shape, kernel_version=kernel_version, backend=backend, hardware=fp)
    if m is None:
        raise NoTunedConfig(f"no tuned config for {kernel} world {world} {dtype} {shape_string(shape)} in {location(path)}")
    return m

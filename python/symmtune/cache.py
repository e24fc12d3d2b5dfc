"""The tuned-config cache from Python: the entries ``symmtune search`` wrote
(to a file, or to a Redis server named by a redis:// or rediss:// URL) and
the config to run, asked of libsymmtune (symmtune._native). The Go cache
package owns the file format, the Redis layout and the choice
(cache.Lookup): this module converts its answers.

The rules, in short: candidates have the query's kernel, world size, dtype
and dimension names (and kernel version and backend when named); entries
tuned on this machine's fingerprint first, else the same hardware under
another driver version (``other_driver``); the exact shape (``exact``),
else the nearest one. cache/lookup.go says it in full.

The library reads the caller's environment as passed with each request
($SYMMTUNE_CACHE, $SYMMTUNE_REDIS_USERNAME, ...): variables set after it
loaded count.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._errors import CacheError, CacheUnavailable, NoTunedConfig  # noqa: F401 (their public home)
from .hardware import Fingerprint

# The largest dimension size a cache or a job file holds (space.MaxDim).
MAX_DIM = 1 << 40
ZERO_TIME = _dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc)


class CacheWarning(UserWarning):
    """An entry of the cache is damaged (cut short, failing its checksum, a
    field missing or out of range) and was skipped; the other entries
    answer. The message names the file and line, or the server's key."""


@dataclass(frozen=True)
class Entry:
    """One tuned winner and its measurements (Go: cache.Entry)."""

    kernel: str
    kernel_version: str
    backend: str
    hardware: str
    world: int
    dtype: str
    shape: Dict[str, int]
    config: Dict[str, Union[int, str]]
    median_us: float = 0.0
    min_us: float = 0.0
    p90_us: float = 0.0
    default_median_us: float = 0.0
    trials: int = 0
    tuned_at: _dt.datetime = ZERO_TIME
    hardware_info: Fingerprint = field(default_factory=Fingerprint)


@dataclass(frozen=True)
class Match:
    """A lookup's answer: the entry, whether its shape is the query's
    (``exact``) and whether it was tuned under another driver version of the
    same hardware (``other_driver``). When ``exact`` is false the config was
    tuned for another shape and is NOT checked at the asked one here (no
    plugin runs); ``symmtune lookup`` checks it with the plugin, and
    symmtune.torch's calls check the config before they run it."""

    entry: Entry
    exact: bool
    other_driver: bool = False
    _answer: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def config(self) -> Dict[str, Union[int, str]]:
        return dict(self.entry.config)

    def to_json(self) -> Dict[str, Any]:
        """The object ``symmtune lookup --json`` prints for this match."""
        return {k: v for k, v in self._answer.items() if k != "hardware_info"}


def shape_string(shape: Dict[str, int]) -> str:
    """Canonical shape text, name-sorted: "m=64,n=128" (for messages)."""
    return ",".join(f"{k}={shape[k]}" for k in sorted(shape))


# An answer's error and a first call's warnings are the library binding's
# (symmtune._native, where symmtune.torch takes its answers); kept here by
# name for callers of symmtune.cache.
checked, chosen, user_stacklevel = _native.checked, _native.chosen, _native.user_stacklevel


def _ask(op: str, **request: Any) -> Dict[str, Any]:
    """The library's answer to a cache operation, with this process's
    environment; an answer that is an error raises its exception, and each
    damaged entry the load skipped is a CacheWarning."""
    answer = checked(_native.call(op, env=dict(os.environ), **request))
    for msg in answer.get("damaged") or []:
        warnings.warn(msg, CacheWarning, stacklevel=3)
    return answer


def default_path() -> str:
    """$SYMMTUNE_CACHE, else $XDG_CACHE_HOME/symmtune/configs.toml (when
    absolute), else ~/.cache/symmtune/configs.toml: cache.DefaultPath."""
    return _ask("cache.default_path")["path"]


_FRACTION = re.compile(r"\.(\d+)")


def _time(text: str) -> _dt.datetime:
    """An RFC 3339 time as Go's encoding/json writes it, in UTC (the
    fraction cut to microseconds: Python 3.9's fromisoformat wants 6
    digits and an offset, not "Z")."""
    text = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], text, count=1)
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    return _dt.datetime.fromisoformat(text).astimezone(_dt.timezone.utc)


def _entry(d: Dict[str, Any]) -> Entry:
    return Entry(kernel=d["kernel"], kernel_version=d["kernel_version"], backend=d["backend"],
                 hardware=d["hardware"], world=d["world"], dtype=d["dtype"], shape=dict(d["shape"]),
                 config=dict(d["config"]), median_us=float(d["median_us"]), min_us=float(d["min_us"]),
                 p90_us=float(d["p90_us"]), default_median_us=float(d["default_median_us"]), trials=d["trials"],
                 tuned_at=_time(d["tuned_at"]), hardware_info=Fingerprint(**d.get("hardware_info", {})))


def load(path: Union[str, "os.PathLike[str]", None] = None) -> List[Entry]:
    """The entries of the cache file at path (default_path() when None), or
    of the Redis server a redis:// or rediss:// URL names, sorted as the Go
    store sorts them. A missing file raises NoTunedConfig; a file the Go
    code refuses CacheError; an unreachable server CacheUnavailable. A
    damaged entry is left out with a CacheWarning."""
    answer = _ask("cache.load", cache=os.fspath(path) if path is not None else "")
    return [_entry(e) for e in answer["entries"]]


def lookup(kernel: str, world: int, dtype: str, shape: Dict[str, int], backend: Optional[str] = "cuda",
           cache: Union[str, "os.PathLike[str]", None] = None, *, kernel_version: Optional[str] = None,
           hardware: Union[Fingerprint, str, None] = None) -> Match:
    """The tuned config to run kernel at world ranks, dtype and shape
    (e.g. ``{"n": 1 << 20}``), by cache.Lookup's rules (see the module doc).

    backend: the entries' backend ("cuda", "cpu"; None for any).
    cache: the cache file or redis:// URL (default: $SYMMTUNE_CACHE or ~/.cache/symmtune/configs.toml).
    kernel_version: only entries of this kernel version (None for any; the
    Go CLI passes the plugin's current version).
    hardware: the fingerprint to match (None: this machine's for backend and
    world, as a search records it; "any": every machine's).

    Raises NoTunedConfig when nothing answers (or there is no cache file),
    CacheError for a corrupt cache, CacheUnavailable (a ConnectionError)
    for a Redis server that cannot be read, hardware.HardwareError when
    this machine's GPUs cannot be fingerprinted, ValueError for a malformed
    query, and _native.NativeError (saying how to get it) where libsymmtune
    cannot be loaded.
    """
    hw: Union[Dict[str, Any], str, None]
    if hardware is None:
        hw = None
    elif hardware == "any":
        hw = "any"
    elif isinstance(hardware, Fingerprint):
        hw = hardware.as_dict()
    else:
        raise TypeError(f'hardware {hardware!r}: want a Fingerprint, None (this machine) or "any"')
    answer = _ask("cache.lookup", kernel=kernel, world=world, dtype=dtype, shape=shape, backend=backend or "",
                  kernel_version=kernel_version or "", hardware=hw,
                  cache=os.fspath(cache) if cache is not None else "")
    m = answer["match"]
    return Match(_entry(m), m["exact"], m["other_driver"], m)

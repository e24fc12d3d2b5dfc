"""The exceptions of the library's answers (symmtune._native raises them),
defined below every module that raises or re-exports them, so that none
imports upward. Their public homes are symmtune.cache and
symmtune.hardware, which re-export them, and their __module__ says so."""

from __future__ import annotations


class CacheError(ValueError):
    """The cache is not a symmtune cache (not TOML, another format version,
    an unknown key) or its location is malformed. The message names the
    file (and the line, where known) or the server."""


class NoTunedConfig(LookupError):
    """No tuned entry answers the query (or there is no cache file yet)."""


class CacheUnavailable(ConnectionError):
    """The Redis server could not be reached or refused us (Go:
    cache.ErrUnavailable). The message names the server, never credentials."""


class HardwareError(RuntimeError):
    """The hardware cannot be fingerprinted (no GPU, no driver, too few GPUs)."""


for _cls in (CacheError, NoTunedConfig, CacheUnavailable):
    _cls.__module__ = "symmtune.cache"
HardwareError.__module__ = "symmtune.hardware"

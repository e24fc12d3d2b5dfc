"""symmtune from Python: tuned configs at run time and the plugin SDK.

``symmtune.lookup`` finds the tuned config for a kernel, world size, dtype
and shape in the cache ``symmtune search`` writes (a file, or a Redis server
given as a redis:// URL): the Go API (cache.Lookup) answers it, through
libsymmtune (symmtune._native, loaded at the first lookup: importing
symmtune needs no library). ``symmtune.plugin`` is the SDK for writing kernel
plugins in Python. Nothing heavy is imported here: GPU runtime modules (such
as ``symmtune.torch``) are imported by name when used.
"""

from .cache import CacheError, CacheUnavailable, CacheWarning, Entry, Match, NoTunedConfig, default_path, load, lookup
from .hardware import Fingerprint

__all__ = ["CacheError", "CacheUnavailable", "CacheWarning", "Entry", "Fingerprint", "Match", "NoTunedConfig", "default_path", "load",
           "lookup"]

"""symmtune from Python: tuned configs at run time and the plugin SDK.

``symmtune.lookup`` finds the tuned config for a kernel, world size, dtype
and shape in the cache ``symmtune search`` writes (a file, or a Redis server
given as a redis:// URL), by exactly the rules of
the Go API (cache.Lookup). ``symmtune.plugin`` is the SDK for writing kernel
plugins in Python. Nothing heavy is imported here: GPU runtime modules (such
as ``symmtune.torch``) are imported by name when used.
"""

from ._redis import CacheUnavailable
from .cache import CacheError, Entry, Match, NoTunedConfig, default_path, load, lookup
from .hardware import Fingerprint

__all__ = ["CacheError", "CacheUnavailable", "Entry", "Fingerprint", "Match", "NoTunedConfig", "default_path", "load",
           "lookup"]

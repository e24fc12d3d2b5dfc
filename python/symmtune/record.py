"""Record the kernel calls a program makes, as a job file ``symmtune search``
tunes: tune what a program uses, not only shapes someone typed.

    import symmtune.record as rec
    rec.record("jobs.toml")                 # or run with SYMMTUNE_RECORD=jobs.toml
    rec.note("allreduce", 8, "bf16", {"n": 1 << 20})
    ...
    rec.stop()

then ``symmtune search --config jobs.toml`` tunes every (kernel, world size,
dtype, shape) recorded, and the program reads the winners from the cache
the next time it runs.

The file is a TOML job file (tuner/job.go): a comment header saying who
created it and how to use it, then one ``[[job]]`` table per recorded call::

    [[job]]
    kernel = "allreduce"
    backend = "cuda"
    worlds = [8]
    dtypes = ["bf16"]
    shapes = ["n=1048576"]

Each (kernel, world, dtype, shape, backend) is written once, also across
processes: many ranks may record into one file at the same time. A writer
takes an exclusive lock on the file (``fcntl.flock``), re-reads the entries
already in it, appends only a new one, as one complete block in a single
write, and fsyncs before it lets go. A write that fails is cut back off, so
the file always parses and never loses what it held.

``note`` is meant for hot paths: each recorder remembers what its process
has written or seen in the file, so a repeat call is one set lookup, no I/O;
with recording off it returns at once without looking at its arguments.
A caller that does not want to enter this module at all when nothing
records may test the module's state first, which is note()'s own test::

    if record.active is None and (record.env_read or not os.environ.get(record.ENV)):
        pass  # note() would return False: nothing records
    else:
        record.note(...)

(symmtune.torch's first calls do.) The one difference: a skipped call does
not settle $SYMMTUNE_RECORD, which stays to be read at the first note()
that runs.

Standard library only (TOML is read with tomllib, or tomli on Python < 3.11).
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import operator
import os
import re
import socket
import sys
import threading
from typing import Dict, Optional, Set, Tuple, Union

from .cache import MAX_DIM, shape_string

__all__ = ["ENV", "RecordError", "Recorder", "note", "record", "stop"]

ENV = "SYMMTUNE_RECORD"
"""The environment variable that turns recording on: SYMMTUNE_RECORD=FILE.
Read at the first note() call, not at import."""

BACKENDS = ("cpu", "cuda")

# Names end up unquoted in shape text ("m=8192,n=...") and quoted in TOML:
# plain words keep both trivially valid. Kernel names may not hold "." or a
# path separator (tuner.PluginPath refuses them).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")
_DIM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Shape = Tuple[Tuple[str, int], ...]
Key = Tuple[str, int, str, Shape, str]
"""An entry's canonical key, as a recorder remembers it: (kernel, world,
dtype, shape as name-sorted (dim, size) pairs, backend)."""


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
        return tomllib
    try:
        import tomli  # the same parser, packaged for older Pythons
    except ImportError:
        raise ImportError("reading a job file needs Python >= 3.11 or the tomli package") from None
    return tomli


class RecordError(RuntimeError):
    """The record file holds something other than a job file symmtune can
    read; nothing is written to it."""


def _check(kernel: object, world: object, dtype: object, shape: object, backend: object) -> Key:
    """The canonical key of one call, or an exception naming the bad argument."""
    p = "symmtune.record: "
    for name, v in (("kernel", kernel), ("dtype", dtype), ("backend", backend)):
        if not isinstance(v, str):
            raise TypeError(f"{p}{name} must be a str, got {type(v).__name__}")
    if not _NAME.match(kernel):  # type: ignore[arg-type]
        raise ValueError(f"{p}kernel must be a plain name such as allreduce (letters, digits, _ and -), got {kernel!r}")
    if not _NAME.match(dtype):  # type: ignore[arg-type]
        raise ValueError(f"{p}dtype must be a plain name such as bf16 (letters, digits, _ and -), got {dtype!r}")
    if backend not in BACKENDS:
        raise ValueError(f"{p}backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    w = _int(world, "world")
    if w < 1:
        raise ValueError(f"{p}world must be >= 1, got {w}")
    if not isinstance(shape, dict):
        raise TypeError(f"{p}shape must be a dict of dimension name -> size, got {type(shape).__name__}")
    if not shape:
        raise ValueError(f"{p}shape must name at least one dimension, got {{}}")
    dims = []
    for d, v in shape.items():
        if not isinstance(d, str) or not _DIM.match(d):
            raise ValueError(f"{p}shape dimension names must be identifiers such as n or m, got {d!r}")
        n = _int(v, f"shape[{d!r}]")
        if not 1 <= n <= MAX_DIM:
            raise ValueError(f"{p}shape[{d!r}] must be between 1 and {MAX_DIM}, got {n}")
        dims.append((d, n))
    return kernel, w, dtype, tuple(sorted(dims)), backend  # type: ignore[return-value]


def _int(v: object, name: str) -> int:
    """v as an int: ints and integer types such as numpy's, never bools."""
    if isinstance(v, bool):
        raise TypeError(f"symmtune.record: {name} must be an int, got bool")
    try:
        return operator.index(v)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"symmtune.record: {name} must be an int, got {type(v).__name__}") from None


def _block(key: Key) -> bytes:
    kernel, world, dtype, shape, backend = key
    return (f'\n[[job]]\nkernel = "{kernel}"\nbackend = "{backend}"\nworlds = [{world}]\n'
            f'dtypes = ["{dtype}"]\nshapes = ["{shape_string(dict(shape))}"]\n').encode()


def _printable(s: str, limit: int = 200) -> str:
    """s fit for a TOML comment: no control characters, not too long."""
    s = "".join(c if c.isprintable() else "?" for c in s)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _header(path: str) -> bytes:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    prog = _printable(sys.argv[0] if sys.argv and sys.argv[0] else sys.executable or "python")
    f = _printable(path)
    return (f"# symmtune job file: the kernel calls a program made, recorded by symmtune.record.\n"
            f"# Created {now} by {prog} (pid {os.getpid()} on {_printable(socket.gethostname(), 80)}).\n"
            f"# Each [[job]] is one kernel, world size, dtype and shape, written once; programs\n"
            f"# that record into this file ({ENV}={f}) append to it.\n"
            f"# Tune them, then run the program again: it reads the tuned configs from the cache.\n"
            f"#   symmtune search --config {f}\n"
            f"# --backend cuda (or cpu) tunes every job on that backend; --budget-trials N or\n"
            f"# --budget-time 10m bounds each job.\n").encode()


def _recorded(path: str, data: bytes) -> Set[Key]:
    """The (kernel, world, dtype, shape, backend) combinations the job file
    text data lists. A [[job]] without a backend (nor a top-level default)
    has backend "" and matches no note."""
    if not data.strip():
        return set()
    try:
        doc = _toml().loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:  # tomllib.TOMLDecodeError is a ValueError
        raise RecordError(f"symmtune.record: {path} is not a job file symmtune can read ({e}); not writing to it") from None
    jobs = doc.get("job", [])
    if not isinstance(jobs, list):
        raise RecordError(f"symmtune.record: {path}: job is not a list of [[job]] tables; not writing to it")
    default = doc.get("backend", "")
    out: Set[Key] = set()
    for j in jobs:
        if not isinstance(j, dict):
            continue
        backend = j.get("backend", default)
        worlds, dtypes, shapes = j.get("worlds", []), j.get("dtypes", []), j.get("shapes", [])
        if not all(isinstance(x, list) for x in (worlds, dtypes, shapes)):
            continue  # symmtune search says what is wrong; nothing here can match it
        for text in shapes:
            shape = _parse_shape(text)
            if shape is None:
                continue
            for w in worlds:
                for dt in dtypes:
                    try:
                        out.add(_check(j.get("kernel"), w, dt, shape, backend))
                    except (TypeError, ValueError):
                        pass
    return out


def _parse_shape(text: object) -> Optional[Dict[str, int]]:
    """Shape text such as "m=64, n=128" as a dict, None if it is not one."""
    if not isinstance(text, str):
        return None
    shape: Dict[str, int] = {}
    for part in text.split(","):
        name, eq, raw = part.partition("=")
        name, raw = name.strip(), raw.strip()
        if not eq or name in shape:
            return None
        try:
            shape[name] = int(raw, 10)
        except ValueError:
            return None
    return shape


class Recorder:
    """Records note()d calls into the job file at path.

    Two sets, both for the recorder's lifetime and only growing:
    ``seen`` holds the canonical key (kernel, world, dtype, name-sorted shape
    pairs, backend) of every entry this recorder wrote or found in the file;
    ``calls`` the key of every call it has handled as the caller passed it
    (kernel, world, dtype, tuple(shape.items()) in the dict's own order,
    backend), so that a repeat costs one set lookup and no sort, no I/O.
    An entry removed from the file by hand while the recorder lives is not
    written again by this process.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"symmtune.record: path must be a str or os.PathLike, got {type(path).__name__}")
        p = os.fspath(path)
        if not isinstance(p, str) or not p:
            raise ValueError(f"symmtune.record: path must be a non-empty file name, got {p!r}")
        self.path: str = p
        self.seen: Set[Key] = set()
        self.calls: Set[Tuple[object, ...]] = set()
        self._lock = threading.Lock()  # one writer per process at a time; flock orders processes
        self._sync(None)  # create the file with its header; refuse an unreadable one now

    def note(self, kernel: str, world: int, dtype: str, shape: Dict[str, int], backend: str = "cuda") -> bool:
        """Records the call unless it is recorded already; True when this
        call wrote it. Bad arguments raise TypeError or ValueError naming
        the argument."""
        try:
            if (kernel, world, dtype, tuple(shape.items()), backend) in self.calls:
                return False
        except (TypeError, AttributeError):
            pass  # not a dict, or unhashable: _check says what is wrong
        key = _check(kernel, world, dtype, shape, backend)
        with self._lock:
            wrote = key not in self.seen and self._sync(key)
            try:
                self.calls.add((kernel, world, dtype, tuple(shape.items()), backend))
            except TypeError:
                pass  # an unhashable int-like size: such calls take the checked path each time
        return wrote

    def _sync(self, key: Optional[Key]) -> bool:
        """Under the file lock: reads what the file holds into seen, and
        appends key when it is new (and the header when the file is empty)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = _read_all(fd)
            self.seen |= _recorded(self.path, data)
            block = b""
            if key is not None and key not in self.seen:
                block = _block(key)
            if not data:
                block = _header(self.path) + block
            elif block and not data.endswith(b"\n"):
                block = b"\n" + block
            if block:
                _append(fd, len(data), block, self.path)
            if key is None or key in self.seen:
                return False
            self.seen.add(key)
            return True
        finally:
            os.close(fd)  # releases the lock


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    off = 0
    while True:
        b = os.pread(fd, 1 << 20, off)
        if not b:
            return b"".join(chunks)
        chunks.append(b)
        off += len(b)


def _append(fd: int, size: int, block: bytes, path: str) -> None:
    """Writes block at the end of the file (size bytes long) in one write
    and fsyncs; on any failure cuts the file back to size."""
    try:
        n = os.write(fd, block)
        if n != len(block):
            raise OSError(errno.ENOSPC, f"short write ({n} of {len(block)} bytes)", path)
        os.fsync(fd)
    except BaseException:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass
        raise


# The process's active recorder: set by record(), or from $SYMMTUNE_RECORD
# at the first note() when record() was never called; cleared by stop().
# Its lifetime is until stop() or another record(); its ``seen`` set is the
# only per-call cache.
active: Optional[Recorder] = None
"""The recorder note() writes to, None when none is active (yet). Read-only
outside this module: record() and stop() set it, and the first note() from
$SYMMTUNE_RECORD."""
env_read = False
"""Whether $SYMMTUNE_RECORD was looked at (by a note()), or made moot by
record() or stop(). Read-only outside this module."""
_state_lock = threading.Lock()


def record(path: Union[str, "os.PathLike[str]"]) -> Recorder:
    """Starts recording into the job file at path (created with a comment
    header when missing or empty; appended to otherwise) and returns the
    recorder. Replaces any active recorder, $SYMMTUNE_RECORD's included.
    A file that is not a job file raises RecordError and records nothing."""
    global active, env_read
    r = Recorder(path)
    with _state_lock:
        active, env_read = r, True
    return r


def stop() -> None:
    """Stops recording. $SYMMTUNE_RECORD is not looked at again: only
    record() starts recording after this."""
    global active, env_read
    with _state_lock:
        active, env_read = None, True


def note(kernel: str, world: int, dtype: str, shape: Dict[str, int], backend: str = "cuda") -> bool:
    """Records that the program ran kernel at world ranks, dtype and shape
    (e.g. ``note("allreduce", 8, "bf16", {"n": 1 << 20})``) on backend;
    True when this call added it to the file. A no-op returning False when
    nothing records: no record() and no $SYMMTUNE_RECORD (read at the
    first call). A repeat costs one set lookup."""
    r = active
    if r is None:
        if env_read:
            return False
        r = _from_env()
        if r is None:
            return False
    return r.note(kernel, world, dtype, shape, backend)


def _after_fork_in_child() -> None:
    # A lock another thread held at fork() would never be released in the
    # child; what the recorder has seen stays true there.
    global _state_lock
    _state_lock = threading.Lock()
    if active is not None:
        active._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _from_env() -> Optional[Recorder]:
    global active, env_read
    with _state_lock:
        if not env_read:
            path = os.environ.get(ENV, "")
            env_read = True  # also when Recorder() raises: one error, not one per call
            if path:
                active = Recorder(path)
        return active

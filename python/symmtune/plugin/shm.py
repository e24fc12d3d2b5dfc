"""The CPU backend of symmetric memory for Python plugins (the "cpu" backend).

Regions are laid out and named as the Go backend (symm/shm) lays them out: a
file ``symmtune-<group>-r<rank>`` in /dev/shm (else $TMPDIR or /tmp) of a
4096-byte signal-pad area followed by the data rounded up to 4096 bytes,
mapped MAP_SHARED by every rank of the group and unlinked as soon as all of
them have mapped it. The blob a rank publishes at setup is its file's path.
So the host's clean-up of a group killed mid-setup finds Python ranks' files
exactly as it finds Go ranks'.

Synchronization is this module's own (a group is always all-Python, one
plugin binary per search): each rank owns one 32-bit generation word in its
signal pad, which only it writes; a barrier bumps the own word and waits,
with shared futexes, until every peer's word has caught up. Single-writer
words need no atomic read-modify-write, which Python cannot do, but they do
rely on x86-64's ordering of stores (data written before the word is seen
before it), so the backend refuses to run on other CPUs.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
from typing import Any

from .. import hardware
from .kernel import Call

PAD_BYTES = 4096
FILE_PREFIX = "symmtune-"

_SYS_FUTEX_X86_64 = 202
_FUTEX_WAIT, _FUTEX_WAKE = 0, 1  # shared (not private) futexes: waiters are in other processes
_SPIN_ROUNDS = 64
_WAIT_SLICE_NS = 5_000_000  # re-check cancellation every 5 ms


def shm_dir() -> str:
    """Where regions are created: /dev/shm when it is a writable directory,
    else $TMPDIR or /tmp (Go's os.TempDir), as shm.Dir."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return os.environ.get("TMPDIR") or "/tmp"


def _round_up(x: int, to: int) -> int:
    return (x + to - 1) // to * to


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


_libc = None


def _futex(addr: int, op: int, val: int, timeout_ns: int | None = None) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    ts = None
    if timeout_ns is not None:
        ts = ctypes.byref(_Timespec(timeout_ns // 1_000_000_000, timeout_ns % 1_000_000_000))
    # Spurious wake-ups and EAGAIN (the word already changed) are fine:
    # callers re-check their condition in a loop.
    _libc.syscall(ctypes.c_long(_SYS_FUTEX_X86_64), ctypes.c_void_p(addr), ctypes.c_int(op),
                  ctypes.c_uint32(val), ts, ctypes.c_void_p(0), ctypes.c_int(0))


def cpu_fingerprint() -> hardware.Fingerprint:
    """This machine's CPU as Go's hardware.CPU() fingerprints it (the first
    "model name" of /proc/cpuinfo, else its "Model" or "Hardware" line, the
    usable logical cores, count 1, interconnect shm), in Python: a CPU search
    then needs no libsymmtune. A test holds it equal to the library's."""
    name, fallback = "", ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, val = line.partition(":")
                key, val = key.strip(), " ".join(val.split())
                if not sep or not val:
                    continue
                if key == "model name":
                    name = val
                    break
                if key in ("Model", "Hardware") and not fallback:
                    fallback = val
    except OSError:
        pass
    # Go's runtime.GOARCH where /proc/cpuinfo names nothing.
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine().lower(), platform.machine().lower())
    return hardware.Fingerprint(kind="cpu", name=name or fallback or arch, count=1,
                                cores=len(os.sched_getaffinity(0)), interconnect="shm")


def _check_cpu() -> None:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        raise RuntimeError(f"the Python cpu backend's barrier relies on x86-64 store ordering; this is {platform.machine()}")


class CpuBackend:
    """Allocates regions in shared memory (Go: shm.Backend)."""

    name = "cpu"

    def hardware(self, world: int) -> hardware.Fingerprint:
        return cpu_fingerprint()

    def allocate(self, rank: int, world: int, nbytes: int, group_id: str) -> tuple["ShmPending", bytes]:
        _check_cpu()
        if world < 1 or rank < 0 or rank >= world:
            raise ValueError(f"rank {rank} of world {world}")
        if nbytes < 0:
            raise ValueError(f"negative size {nbytes}")
        if not group_id or "/" in group_id or "\0" in group_id:
            raise ValueError(f"bad group id {group_id!r}")
        path = os.path.join(shm_dir(), f"{FILE_PREFIX}{group_id}-r{rank}")
        size = PAD_BYTES + _round_up(nbytes, PAD_BYTES)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as e:
            raise OSError(f"create shared memory {path}: {e.strerror}") from None
        try:
            os.ftruncate(fd, size)
            mem = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as e:
            os.unlink(path)
            raise OSError(f"size and map shared memory {path} ({size} bytes): {e.strerror}") from None
        finally:
            os.close(fd)
        return ShmPending(rank, world, path, size, mem), path.encode()


class ShmPending:
    """A rank's mapped region waiting for its peers' paths."""

    def __init__(self, rank: int, world: int, path: str, size: int, own: mmap.mmap) -> None:
        self.rank, self.world, self.path, self.size = rank, world, path, size
        self.own: mmap.mmap | None = own

    def connect(self, blobs: list[bytes], call: Call) -> "ShmTeam":
        """Maps every peer's region, waits until every rank has, and unlinks
        this rank's file."""
        if len(blobs) != self.world:
            raise ValueError(f"got {len(blobs)} blobs for world {self.world}")
        regions: list[mmap.mmap | None] = [None] * self.world
        try:
            for r, blob in enumerate(blobs):
                if r == self.rank:
                    regions[r] = self.own
                    continue
                try:
                    regions[r] = _map_peer(blob.decode(errors="replace"), self.size)
                except OSError as e:
                    raise OSError(f"rank {self.rank}: map peer {r}: {e}") from None
            team = ShmTeam(self.rank, self.world, regions, call)
            team.barrier()
        except BaseException:
            for r, m in enumerate(regions):
                if m is not None and r != self.rank:
                    m.close()
            raise
        os.unlink(self.path)
        self.own, self.path = None, ""
        return team

    def close(self) -> None:
        if self.own is not None:
            self.own.close()
            self.own = None
        if self.path:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self.path = ""


def _map_peer(path: str, size: int) -> mmap.mmap:
    if not os.path.basename(path).startswith(FILE_PREFIX):
        raise OSError(f"{path!r} is not a symmtune shared-memory file")
    fd = os.open(path, os.O_RDWR)
    try:
        have = os.fstat(fd).st_size
        if have != size:
            raise OSError(f"{path} has {have} bytes, want {size}")
        return mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)


class ShmTeam:
    """One rank's view of the group's regions (Go: shm.Team)."""

    def __init__(self, rank: int, world: int, regions: list[Any], call: Call) -> None:
        self.rank, self.world = rank, world
        self._regions = regions
        self._call = call
        self._gen = 0
        # Addresses of each rank's generation word. The temporary ctypes
        # view is dropped at once: a live export would keep close() from
        # unmapping the region.
        self._words = []
        for m in regions:
            view = ctypes.c_uint32.from_buffer(m, 0)
            self._words.append(ctypes.addressof(view))
            del view

    def data(self, r: int) -> memoryview:
        """Rank r's data region (this rank's own when r == rank), writable."""
        return memoryview(self._regions[r])[PAD_BYTES:]

    def array(self, r: int, dtype: Any, count: int, offset: int = 0) -> Any:
        """A numpy view of count elements of dtype at byte offset of rank r's
        data region."""
        import numpy as np

        return np.frombuffer(self._regions[r], dtype=dtype, count=count, offset=PAD_BYTES + offset)

    def barrier(self) -> None:
        """Blocks until every rank of the team has called it; may be called
        any number of times back to back. Raises Cancelled when the host
        gives up on the call in flight."""
        if self._regions[self.rank] is None:
            raise RuntimeError("barrier on a closed team")
        self._gen = (self._gen + 1) & 0xFFFFFFFF
        own = self._words[self.rank]
        ctypes.c_uint32.from_address(own).value = self._gen
        _futex(own, _FUTEX_WAKE, 0x7FFFFFFF)
        for r, addr in enumerate(self._words):
            if r != self.rank:
                self._wait_reached(addr, self._gen)

    def _wait_reached(self, addr: int, gen: int) -> None:
        word = ctypes.c_uint32.from_address(addr)
        spins = 0
        while True:
            v = word.value
            if (v - gen) & 0xFFFFFFFF < 0x80000000:  # v >= gen, modulo wrap-around
                return
            spins += 1
            if spins < _SPIN_ROUNDS:
                continue
            self._call.check()
            _futex(addr, _FUTEX_WAIT, v, _WAIT_SLICE_NS)

    def close(self) -> None:
        """Unmaps every region. A region some numpy view still uses stays
        mapped until that view is gone."""
        for r, m in enumerate(self._regions):
            if m is not None:
                try:
                    m.close()
                except BufferError:
                    pass
                self._regions[r] = None

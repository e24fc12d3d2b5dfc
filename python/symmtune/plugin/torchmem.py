"""The "cuda" backend for Python plugins: torch symmetric memory, with the
ranks' rendezvous done through the host's setup/connect exchange of blobs.

At setup, every rank selects GPU ``rank`` (as the Go CUDA backend does; so
CUDA_VISIBLE_DEVICES picks and orders the GPUs) and rank 0 starts a torch
TCPStore on a port the kernel picks (port 0), publishing "host:port" as its
blob; the other ranks publish nothing. At connect, every rank has rank 0's
blob, joins the store (under a prefix of the host's group id, so concurrent
searches never meet), creates the process group and allocates its
symmetric buffer with torch.distributed._symmetric_memory, whose handle
gives every rank's buffer and signal-pad pointers. No fixed port, no
environment variables (MASTER_ADDR and friends) are involved.

torch is imported at setup, not when the plugin starts, so describe and
validate stay fast and need no GPU. Only the standard library is used here
otherwise, so this module imports anywhere.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from .. import hardware
from .kernel import Call

#: How long ranks wait for each other in the store and the process group's
#: creation; the host's setup deadline usually ends a stuck start first.
RENDEZVOUS_TIMEOUT = _dt.timedelta(seconds=120)


def rendezvous_blob(host: str, port: int) -> bytes:
    """Rank 0's blob: where its TCPStore listens."""
    return json.dumps({"store": f"{host}:{port}"}).encode()


def parse_rendezvous(blobs: list[bytes]) -> tuple[str, int]:
    """The store address in rank 0's blob (the others are empty)."""
    if not blobs or not blobs[0]:
        raise ValueError("rank 0 published no rendezvous address")
    try:
        host, _, port = json.loads(blobs[0].decode())["store"].rpartition(":")
        return host, int(port)
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"rank 0's rendezvous blob {blobs[0][:80]!r} is not a store address: {e}") from None


class TorchBackend:
    """Symmetric memory on GPUs through torch (the "cuda" backend).

    signal_pad_bytes asks torch for signal pads of at least that size (where
    torch lets one set it) before the first allocation; kernels whose
    barriers use one slot per block and rank need blocks x world x 4 bytes.
    """

    name = "cuda"

    def __init__(self, signal_pad_bytes: int = 0, process_group_backend: str = "nccl") -> None:
        self.signal_pad_bytes = signal_pad_bytes
        self.process_group_backend = process_group_backend

    def hardware(self, world: int) -> hardware.Fingerprint:
        return hardware.cuda(world)

    def allocate(self, rank: int, world: int, nbytes: int, group_id: str) -> tuple["TorchPending", bytes]:
        import torch
        import torch.distributed as dist

        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        n = torch.cuda.device_count()
        if rank >= n:
            raise RuntimeError(f"rank {rank} needs GPU {rank} but torch sees {n}")
        torch.cuda.set_device(rank)
        store, blob = None, b""
        if rank == 0:
            # Port 0: the store binds a free port and reports it.
            store = dist.TCPStore("127.0.0.1", 0, world, is_master=True, wait_for_workers=False,
                                  timeout=RENDEZVOUS_TIMEOUT)
            blob = rendezvous_blob("127.0.0.1", store.port)
        return TorchPending(self, rank, world, nbytes, group_id, store), blob


class TorchPending:
    """A rank that has picked its GPU (and, on rank 0, started the store)."""

    def __init__(self, backend: TorchBackend, rank: int, world: int, nbytes: int, group_id: str, store: Any) -> None:
        self.backend, self.rank, self.world, self.nbytes, self.group_id = backend, rank, world, nbytes, group_id
        self.store = store

    def connect(self, blobs: list[bytes], call: Call) -> "TorchTeam":
        import torch
        import torch.distributed as dist
        import torch.distributed._symmetric_memory as symm_mem

        if len(blobs) != self.world:
            raise ValueError(f"got {len(blobs)} blobs for world {self.world}")
        host, port = parse_rendezvous(blobs)
        store = self.store
        if store is None:
            store = dist.TCPStore(host, port, self.world, is_master=False, timeout=RENDEZVOUS_TIMEOUT)
        prefixed = dist.PrefixStore(f"symmtune/{self.group_id}", store)
        device = torch.device("cuda", self.rank)
        dist.init_process_group(self.backend.process_group_backend, store=prefixed, rank=self.rank,
                                world_size=self.world, timeout=RENDEZVOUS_TIMEOUT, device_id=device)
        try:
            if self.backend.signal_pad_bytes and hasattr(symm_mem, "set_signal_pad_size"):
                current = symm_mem.get_signal_pad_size() if hasattr(symm_mem, "get_signal_pad_size") else 0
                if self.backend.signal_pad_bytes > current:
                    symm_mem.set_signal_pad_size(self.backend.signal_pad_bytes)
            group = dist.group.WORLD
            if hasattr(symm_mem, "enable_symm_mem_for_group"):  # required before rendezvous up to torch 2.7
                symm_mem.enable_symm_mem_for_group(group.group_name)
            buf = symm_mem.empty(max(self.nbytes, 16), dtype=torch.uint8, device=device)
            handle = symm_mem.rendezvous(buf, group.group_name)
        except BaseException:
            dist.destroy_process_group()
            raise
        return TorchTeam(self.rank, self.world, device, group, buf, handle, store)

    def close(self) -> None:
        self.store = None


class TorchTeam:
    """One rank's view of the group's symmetric memory on GPUs.

    buffer is this rank's symmetric buffer (uint8, at least the kernel's
    symmetric_bytes); handle is torch's symmetric-memory handle, whose
    buffer_ptrs_dev and signal_pad_ptrs_dev are device arrays of every
    rank's buffer and signal-pad addresses for kernels, and whose
    barrier(channel) is a device-side barrier on signal-pad slots
    0..world-1 of that channel (kernels should keep their own slots apart).
    """

    def __init__(self, rank: int, world: int, device: Any, group: Any, buffer: Any, handle: Any, store: Any) -> None:
        self.rank, self.world, self.device, self.group = rank, world, device, group
        self.buffer, self.handle = buffer, handle
        self._store = store  # rank 0 serves the store for as long as the group lives

    @property
    def signal_pad_bytes(self) -> int:
        return int(getattr(self.handle, "signal_pad_size", 2048))

    def barrier(self) -> None:
        """Blocks until every rank's GPU work before it is done: a device
        barrier on the current stream, then a wait for that stream."""
        import torch

        self.handle.barrier(channel=0)
        torch.cuda.current_stream().synchronize()

    def close(self) -> None:
        import torch.distributed as dist

        self.handle = self.buffer = None
        if dist.is_initialized():
            dist.destroy_process_group()
        self._store = None

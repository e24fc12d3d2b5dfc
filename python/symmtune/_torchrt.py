"""What symmtune.torch's kernels share: the group's name, rank and size, the
raw current stream, symmetric buffers on torch symmetric memory with their
device pointer tables, the first calls' rounds and recording (the launch
sequences themselves run in Go, through libsymmtune)."""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d
import torch.distributed._symmetric_memory as symm_mem

from . import _group, _native, record as _record
from ._arena import Arena

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


# (rank, world size) of each process group this process called with, by the
# group's name: a group keeps its name and members for the process's life.
_groups: dict[str, tuple[int, int]] = {}


def group_name(group) -> str:
    """The name of group: a ProcessGroup, its name, or None for the default
    group (the form torch's ops take a group in)."""
    if isinstance(group, str):
        return group
    return (group or dist.group.WORLD).group_name


def group_info(group) -> tuple[str, int, int]:
    """(name, this process's rank, world size) of group (see group_name)."""
    name = group_name(group)
    rw = _groups.get(name)
    if rw is None:
        pg = c10d._resolve_process_group(name)
        rw = _groups[name] = (dist.get_rank(pg), dist.get_world_size(pg))
    return name, rw[0], rw[1]


def capturing() -> bool:
    """Whether the current stream is being captured into a CUDA graph (the
    caller's, or torch.compile's): then every call enqueues its work as it
    is, since a graph may neither be captured nor launched inside a capture."""
    return torch.cuda.is_current_stream_capturing()


try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # one C call; what Triton's launcher uses
except AttributeError:  # pragma: no cover - older torch
    def _raw_stream(index: int) -> int:
        return torch.cuda.current_stream(index).cuda_stream


def raw_stream(index: int) -> int:
    """The current stream of device index, as a CUstream handle."""
    return _raw_stream(index)


def pad_bytes() -> int:
    """The signal pad bytes the kernels' barriers need (symm/cudamem's
    layout, the library's constant)."""
    return int(_native.constants()["allreduce"]["pad_bytes"])


def _signed(v: int) -> int:
    """A u64 device address as the int64 a torch tensor holds."""
    return v - (1 << 64) if v >= 1 << 63 else v


def allocate(group_name: str, nbytes: int, device: torch.device, zero_bytes: int = 0):
    """nbytes of symmetric memory (uint8) with signal pads the kernels'
    barriers fit in, rendezvoused over the group: (buffer, handle, table),
    table being the device array [buffer pointers..., pad pointers...]
    (int64) the runners take. The first zero_bytes are zeroed on every rank
    before any rank returns. All three are made on the allocation thread
    (outside_pools), so none comes from a CUDA graph's pool, and the table
    is on the device before this returns. Not while the current stream is
    being captured (the rendezvous is a collective on the host): its
    caller, symmtune._arena's Arena.fit, refuses growth in a capture with
    CaptureError first."""
    need = pad_bytes()
    try:
        if symm_mem.get_signal_pad_size() < need:
            symm_mem.set_signal_pad_size(need)
    except AttributeError:
        pass  # older torch: the size is checked below

    def make():
        buf = symm_mem.empty(nbytes, dtype=torch.uint8, device=device)
        if zero_bytes:
            buf[:zero_bytes].zero_()
            torch.cuda.synchronize(device)  # zeroed before the rendezvous lets any rank go on
        hdl = symm_mem.rendezvous(buf, group_name)
        ptrs = [_signed(int(p)) for p in list(hdl.buffer_ptrs) + list(hdl.signal_pad_ptrs)]
        table = torch.tensor(ptrs, dtype=torch.int64, device=device)
        torch.cuda.synchronize(device)  # on the device before any runner's stream reads it
        return buf, hdl, table
    buf, hdl, table = outside_pools(make, device)
    if hdl.signal_pad_size < need:
        raise RuntimeError(f"symmtune.torch: signal pads of {hdl.signal_pad_size} bytes, the kernels need "
                           f"{need}: call torch.distributed._symmetric_memory.set_signal_pad_size({need}) "
                           "before allocating symmetric memory")
    return buf, hdl, table


def outside_pools(make: Callable[[], Any], device: torch.device) -> Any:
    """make(), on a thread of its own. torch.compile's reduce-overhead runs
    its warm-up with this thread's allocations routed to its CUDA graph's
    memory pool, and a first call there that makes symmetric memory would
    leave the rendezvous' small device tensors (the peers' pointer arrays,
    as long-lived as the memory) in that pool, which cudagraph trees then
    refuses ("tensors in the cudagraph pool not tracked as outputs"). The
    routing is per thread, so another thread allocates from the ordinary
    pool."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            torch.cuda.set_device(device)
            box["value"] = make()
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e
    t = threading.Thread(target=run, name="symmtune-allocate")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class Symmetric:
    """A symmetric allocation of nbytes per rank with its signal pads: this
    rank's buffer (uint8), every rank's buffer pointer, and the device table
    [buffer pointers..., pad pointers...] (an int64 tensor) the kernels
    take. The first zero_bytes are zeroed on every rank before any rank
    returns (rendezvous is collective), so flags there start clear.

    The object owns the buffer and the table alike: both go when it goes,
    which symmtune._arena allows only once no runner on it is open (no
    captured graph can replay one), in an eager call (growth, reap). The
    last eager calls on it may still run then, on any stream, while torch
    would hand the table's block to the next allocation in the order of
    the allocation thread's stream alone: so the device is synchronized
    first."""

    def __init__(self, group_name: str, nbytes: int, device: torch.device, zero_bytes: int = 0) -> None:
        self.group_name, self.nbytes = group_name, nbytes
        self.buf, self.hdl, self.table = allocate(group_name, nbytes, device, zero_bytes)
        self.ptrs = list(self.hdl.buffer_ptrs)
        self.world, self.rank = self.hdl.world_size, self.hdl.rank
        # Runs as the object goes, before its tensors are released.
        weakref.finalize(self, torch.cuda.synchronize, device).atexit = False

    def view(self, q: int, offset: int, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """numel elements of dtype at byte offset of rank q's buffer (this
        rank's own, or a peer's mapped here)."""
        b = self.buf if q == self.rank else self.hdl.get_buffer(q, (self.nbytes,), torch.uint8)
        elt = torch.empty((), dtype=dtype).element_size()
        return b[offset:offset + numel * elt].view(dtype)


def _retire(handles: list[int]) -> list[int]:
    """Hands runners a workspace's growth replaced to the library: it closes
    those no capture used and keeps the others (their handles, returned)
    until the graphs holding them are destroyed (reap_all)."""
    if not handles:
        return []
    return list(_native.call("runtime.retire", handles=handles)["kept"])


# Every arena of the process (they live as long as it): reap_all hands
# each the handles the library closed.
_arenas: list[Arena] = []


def new_arena(what: str, group_name: str, device: torch.device, zero_bytes: int = 0) -> Arena:
    """A workspace of the group on device that grows by generations of
    symmetric memory (symmtune._arena); the first zero_bytes of each
    generation start zeroed on every rank."""
    a = Arena(what, lambda nbytes: Symmetric(group_name, nbytes, device, zero_bytes), _retire, capturing)
    _arenas.append(a)
    return a


def reap_all() -> None:
    """Frees the retired generations whose graphs were all destroyed: the
    library closes the runners no graph holds any more (runtime.reap) and
    says which handles, and each arena drops the generations left with
    none. Eagerly only (never inside a capture)."""
    closed = set(_native.call("runtime.reap")["closed"])
    if closed:
        for a in _arenas:
            a.reap(closed)


def note(kernel: str, world: int, dtype: str, shape: dict[str, int]) -> None:
    """Records a first call's problem for symmtune search (symmtune.record,
    with SYMMTUNE_RECORD=FILE or record(FILE)). Enters that module only
    where it may record: the test before it is record's documented one for
    hot paths (note() would return False)."""
    if _record.active is None and (_record.env_read or not os.environ.get(_record.ENV)):
        return
    _record.note(kernel, world, dtype, shape)


def _store(group_name: str):
    """The process group's key-value store (the one its rendezvous used)."""
    pg = c10d._resolve_process_group(group_name)
    get = getattr(c10d, "_get_process_group_store", None)
    return get(pg) if get is not None else c10d._world.pg_map[pg][1]


def group_of(group_name: str, rank: int, world: int) -> _group.Group:
    """The process's Group of the process group (symmtune._group): its
    first calls' rounds, its lock, its failure."""
    return _group.group(group_name, rank, world, lambda: _store(group_name))


def first_call(group_name: str, rank: int, world: int, op: str, shape_key: str, what: str,
               choose: Callable[[], dict[str, Any]], open_: Callable[[dict[str, Any]], Any]) -> Any:
    """The first call of (op, shape_key) on the group, as every rank runs
    it: rank 0's choose() (a JSON object with its config and source),
    rendezvoused and agreed by every rank, then open_(choice) on every rank,
    returned once every rank opened it; any failure raises on every rank and
    makes the group unusable (symmtune._group). Under the group's lock, so
    two threads' first calls run in one order on this rank."""
    return group_of(group_name, rank, world).first_call(op, shape_key, what, choose, open_)

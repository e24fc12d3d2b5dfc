"""A stand-in for the few pieces of torch that symmtune.torch's first calls
touch, for CPU tests that run the real Python path (argument checks, the
group's round, the library's answers, the arena, recording) on a machine
without torch or a GPU. Tensors hold a shape, a dtype and a fake device
address, nothing else. install() puts it in sys.modules: only in a
subprocess of its own, never in pytest's (test_torch_gemm.py skips where
torch is missing, and must keep doing so).

What the library would do on the GPU is stood in for too (fake_runtime):
the runtime's open, enqueue and close functions that _native binds
become C callbacks that hand out handles, and the choose requests carry a
fixed GPU fingerprint (the library would read it from the driver).
"""

from __future__ import annotations

import ctypes
import itertools
import sys
import types
from typing import Any


class dtype:
    def __init__(self, name: str, itemsize: int) -> None:
        self.name, self.itemsize = name, itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


DTYPES = {n: dtype(n, s) for n, s in (("bfloat16", 2), ("float16", 2), ("float32", 4), ("int64", 8), ("uint8", 1),
                                       ("float8_e4m3fn", 1), ("float8_e5m2", 1))}


class device:
    def __init__(self, kind: str, index: int | None = None) -> None:
        self.type: str = kind
        self.index = index

    def __repr__(self) -> str:
        return f"{self.type}:{self.index}"


_addresses = itertools.count(1)


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= max(d, 1)
    return tuple(reversed(strides))


class Tensor:
    def __init__(self, shape, dt: dtype, dev: device, strides=None, ptr: int | None = None) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype, self.device = dt, dev
        self._strides = tuple(strides) if strides is not None else _contiguous(self.shape)
        self._ptr = ptr if ptr is not None else 0x7F00_0000_0000 + (next(_addresses) << 24)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def dim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self) -> int:
        return self.dtype.itemsize

    def stride(self) -> tuple[int, ...]:
        return self._strides

    def is_contiguous(self) -> bool:
        return self._strides == _contiguous(self.shape)

    def contiguous(self) -> "Tensor":
        return self if self.is_contiguous() else self.clone()

    def clone(self) -> "Tensor":
        return Tensor(self.shape, self.dtype, self.device)

    def t(self) -> "Tensor":
        return Tensor(self.shape[::-1], self.dtype, self.device, self._strides[::-1], self._ptr)

    def data_ptr(self) -> int:
        return self._ptr

    def __getitem__(self, sl: slice) -> "Tensor":
        start, stop, _ = sl.indices(self.shape[0])
        return Tensor((stop - start,) + self.shape[1:], self.dtype, self.device, self._strides,
                      self._ptr + start * self._strides[0] * self.dtype.itemsize)

    def view(self, *shape: Any) -> "Tensor":
        if len(shape) == 1 and isinstance(shape[0], dtype):
            dt = shape[0]
            return Tensor((self.numel() * self.dtype.itemsize // dt.itemsize,), dt, self.device, ptr=self._ptr)
        return Tensor(shape, self.dtype, self.device, ptr=self._ptr)

    def zero_(self) -> "Tensor":
        return self


def _empty(*size: Any, dtype: dtype | None = None, device: Any = None, **_: Any) -> Tensor:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return Tensor(size, dtype or DTYPES["float32"], _device(device))


def _device(d: Any) -> device:
    if d is None:
        return device("cpu")
    if isinstance(d, device):
        return d
    if isinstance(d, int):
        return device("cuda", d)
    kind, _, index = str(d).partition(":")
    return device(kind, int(index) if index else None)


def _tensor(values: list, dtype: dtype | None = None, device: Any = None) -> Tensor:
    return Tensor((len(values),), dtype or DTYPES["int64"], _device(device))


class _ProcessGroup:
    group_name = "0"


WORLD = _ProcessGroup()


class _Handle:
    """symm_mem.rendezvous's answer on a world of one."""

    def __init__(self, buf: Tensor, pad: int) -> None:
        self.buffer_ptrs = [buf.data_ptr()]
        self.signal_pad_ptrs = [0x7E00_0000_0000 + (next(_addresses) << 24)]
        self.signal_pad_size, self.world_size, self.rank = pad, 1, 0


_pad = [0]


def _module(name: str, **attrs: Any) -> Any:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


class _Library:
    """torch.library.Library: definitions and implementations are kept by
    nobody (the tests call the eager functions)."""

    def __init__(self, *a: Any) -> None:
        pass

    def define(self, *a: Any, **k: Any) -> None:
        pass

    def impl(self, *a: Any, **k: Any) -> None:
        pass


def install() -> None:
    """Puts the fake torch in sys.modules (torch, torch.cuda,
    torch.distributed and its c10d and _symmetric_memory, torch.library,
    torch.compiler, torch._C)."""
    cuda = _module("torch.cuda", current_device=lambda: 0, is_current_stream_capturing=lambda: False,
                   get_device_capability=lambda d=None: (9, 0),
                   get_device_properties=lambda d=None: types.SimpleNamespace(multi_processor_count=132),
                   set_device=lambda d: None, synchronize=lambda d=None: None,
                   current_stream=lambda i=None: types.SimpleNamespace(cuda_stream=0))
    c = _module("torch._C", _cuda_getCurrentRawStream=lambda index: 0,
                Tag=types.SimpleNamespace(needs_fixed_stride_order="needs_fixed_stride_order"))
    compiler = _module("torch.compiler", is_compiling=lambda: False, assume_constant_result=lambda fn: fn)
    library = _module("torch.library", Library=_Library, register_fake=lambda name: (lambda fn: fn))
    c10d = _module("torch.distributed.distributed_c10d", _resolve_process_group=lambda name: WORLD,
                   _get_process_group_store=lambda pg: None)
    symm = _module("torch.distributed._symmetric_memory", get_signal_pad_size=lambda: _pad[0],
                   set_signal_pad_size=lambda n: _pad.__setitem__(0, n),
                   empty=lambda numel, dtype=None, device=None: Tensor((numel,), dtype, _device(device)),
                   rendezvous=lambda buf, name: _Handle(buf, _pad[0]))
    dist = _module("torch.distributed", group=types.SimpleNamespace(WORLD=WORLD), get_rank=lambda pg=None: 0,
                   get_world_size=lambda pg=None: 1, distributed_c10d=c10d, _symmetric_memory=symm)
    torch = _module("torch", **DTYPES, dtype=dtype, device=device, Tensor=Tensor, empty=_empty, tensor=_tensor,
                    cuda=cuda, _C=c, compiler=compiler, library=library, distributed=dist)
    sys.modules.update({"torch": torch, "torch.cuda": cuda, "torch._C": c, "torch.compiler": compiler,
                        "torch.library": library, "torch.distributed": dist,
                        "torch.distributed.distributed_c10d": c10d, "torch.distributed._symmetric_memory": symm})


# The library's GPU runtime, stood in for: C callbacks of the signatures
# _native binds, kept alive here.
_callbacks: list[Any] = []
opened: list[tuple[str, dict]] = []  # (runtime, request) of every open
enqueued: list[tuple] = []  # (runtime, handle, m or n) of every enqueue


def fake_runtime(fingerprint: dict) -> None:
    """Makes symmtune._native's runtime calls callbacks (no GPU needed),
    runtime.retire take their handles (none held by a graph), and the
    choose requests carry fingerprint. The calls still go through
    _native.call to the library."""
    import json

    from symmtune import _native

    u64, i64, p, sz, i = ctypes.c_uint64, ctypes.c_int64, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
    handles = itertools.count(1)

    def opener(kind: str):
        @ctypes.CFUNCTYPE(i, p, ctypes.POINTER(u64), sz, u64, ctypes.POINTER(u64), ctypes.c_void_p, sz)
        def open_(req, regions, n, table, handle, msg, cap):
            assert n >= 1 and table != 0
            opened.append((kind, json.loads(req)))
            handle[0] = next(handles)
            return 0
        return open_

    @ctypes.CFUNCTYPE(i, u64, u64, i64, u64, u64, u64, u64, ctypes.c_void_p, sz)
    def gemm_enqueue(h, stream, m, a, b, c, extra, msg, cap):
        enqueued.append(("gemm", h, m))
        return 0

    @ctypes.CFUNCTYPE(i, u64, u64, i64, u64, u64, u64, u64, u64, u64, ctypes.c_void_p, sz)
    def gemm_scaled(h, stream, m, a, b, c, extra, sa, sb, msg, cap):
        enqueued.append(("gemm_scaled", h, m))
        return 0

    @ctypes.CFUNCTYPE(i, u64, u64, u64, i64, ctypes.c_void_p, sz)
    def ar_enqueue(h, stream, t, n, msg, cap):
        enqueued.append(("allreduce", h, n))
        return 0

    @ctypes.CFUNCTYPE(i, u64)
    def close(h):
        return 0

    _callbacks.extend([gemm_enqueue, gemm_scaled, ar_enqueue, close])
    gemm_open, ar_open = opener("gemm"), opener("allreduce")
    _callbacks.extend([gemm_open, ar_open])
    _native._gemm_fns = (gemm_open, gemm_enqueue, close, gemm_scaled)
    _native._ar_fns = (ar_open, ar_enqueue, close)

    call = _native.call

    def fake_call(op: str, **request: Any) -> Any:
        if op in ("gemm.choose", "allreduce.choose"):
            request.setdefault("hardware", fingerprint)
        elif op == "runtime.retire":  # the runtime's handles are the callbacks': none was captured
            retired.extend(request["handles"])
            return call(op, handles=[]) | {"kept": []}
        return call(op, **request)
    _native.call = fake_call


retired: list[int] = []  # the handles runtime.retire was given

"""The driver entry points Hopper (sm_90) kernels need beyond _cuda's, as
cuda/sm90 binds them for the Go plugins: TMA tensor maps
(cuTensorMapEncodeTiled), more than 48 KiB of dynamic shared memory, the
clusters that fit at once (cuOccupancyMaxActiveClusters), and launches whose
parameters are not all 8 bytes (a tensor map is a 128-byte by-value
parameter). Through ctypes, with the encoding settings cuda/sm90 uses, so a
tile gets the same tensor maps from either side."""

from __future__ import annotations

import ctypes
from typing import Any

from ._cuda import _check, driver

FLOAT16, BFLOAT16 = 6, 9  # CUtensorMapDataType
SWIZZLE_128B = 3
SWIZZLE_32B = 1
_L2_PROMOTION_256B = 3
_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3

_P, _U32, _U64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64


_entries: dict[str, object] = {}


def _entry(name: str, *argtypes) -> Any:
    """A driver function (CUDA 12 added some), by its exported name or,
    failing that, through cuGetProcAddress (as cuda/sm90 finds it); bound
    once per process."""
    if name in _entries:
        return _entries[name]
    try:
        f = getattr(driver(), name)
    except AttributeError:
        p = ctypes.c_void_p()
        get = driver().cuGetProcAddress
        get.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64]
        _check(f"cuGetProcAddress({name})", get(name.encode(), ctypes.byref(p), 12000, 0))
        if not p.value:
            raise RuntimeError(f"the CUDA driver has no {name}: the fused GEMM needs a CUDA 12 driver")
        f = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(p.value)
    f.argtypes = list(argtypes)
    f.restype = ctypes.c_int
    _entries[name] = f
    return f


class TensorMap:
    """An encoded CUtensorMap: 128 bytes, 64-byte aligned, that a launch
    passes by value."""

    def __init__(self) -> None:
        self._raw = ctypes.create_string_buffer(128 + 64)
        self.address = (ctypes.addressof(self._raw) + 63) & ~63


def encode_2d(dtype: int, addr: int, rows: int, cols: int, row_bytes: int, box_rows: int, box_cols: int,
              swizzle: int = SWIZZLE_128B, into: TensorMap | None = None) -> TensorMap:
    """sm90.Encode2D: a row-major matrix at addr of rows x cols two-byte
    elements with row_bytes between rows, read in boxes of box_rows x
    box_cols; elements outside the matrix read as zero. Encoded into into
    (a launcher's argument, changed in place) when given."""
    enc = _entry("cuTensorMapEncodeTiled", _P, ctypes.c_int, _U32, _P, ctypes.POINTER(_U64), ctypes.POINTER(_U64),
                 ctypes.POINTER(_U32), ctypes.POINTER(_U32), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)
    m = into or TensorMap()
    dims = (_U64 * 2)(cols, rows)
    strides = (_U64 * 1)(row_bytes)
    box = (_U32 * 2)(box_cols, box_rows)
    ones = (_U32 * 2)(1, 1)
    r = enc(m.address, dtype, 2, addr, dims, strides, box, ones, 0, swizzle, _L2_PROMOTION_256B, 0)
    if r:
        _check(f"cuTensorMapEncodeTiled ({rows}x{cols}, row {row_bytes} bytes, box {box_rows}x{box_cols})", r)
    return m


def set_dynamic_smem(fn: ctypes.c_void_p, nbytes: int) -> None:
    """Raises fn's dynamic shared-memory limit (past the default 48 KiB)."""
    f = _entry("cuFuncSetAttribute", _P, ctypes.c_int, ctypes.c_int)
    _check("cuFuncSetAttribute(max dynamic shared memory)", f(fn, _FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes))


def local_bytes(fn: ctypes.c_void_p) -> int:
    """fn's local memory per thread (register spills)."""
    v = ctypes.c_int()
    f = _entry("cuFuncGetAttribute", ctypes.POINTER(ctypes.c_int), ctypes.c_int, _P)
    _check("cuFuncGetAttribute(local bytes)", f(ctypes.byref(v), _FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn))
    return v.value


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared_mem_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.c_void_p), ("num_attrs", ctypes.c_uint)]


def max_active_clusters(fn: ctypes.c_void_p, cluster_size: int, threads: int, smem: int) -> int:
    """sm90.MaxActiveClusters: clusters of fn (compiled with __cluster_dims__
    of cluster_size CTAs) that can be resident at once."""
    f = _entry("cuOccupancyMaxActiveClusters", ctypes.POINTER(ctypes.c_int), _P, ctypes.POINTER(_LaunchConfig))
    c = _LaunchConfig((ctypes.c_uint * 3)(cluster_size * 64, 1, 1), (ctypes.c_uint * 3)(threads, 1, 1), smem)
    n = ctypes.c_int()
    _check("cuOccupancyMaxActiveClusters", f(ctypes.byref(n), fn, ctypes.byref(c)))
    return n.value


class Params:
    """A kernel's arguments of mixed sizes, each kept in its own C object
    for the life of the launcher: add them in the kernel's order."""

    def __init__(self) -> None:
        self._keep: list[object] = []
        self._ptrs: list[int] = []

    def map(self, m: TensorMap) -> "Params":
        self._keep.append(m)
        self._ptrs.append(m.address)
        return self

    def u64(self, v: int) -> "Params":
        return self._add(ctypes.c_uint64(v))

    def i32(self, v: int) -> "Params":
        return self._add(ctypes.c_int32(v))

    def last(self) -> Any:
        """The argument added last, to change between launches."""
        return self._keep[-1]

    def _add(self, v: ctypes._SimpleCData) -> "Params":
        self._keep.append(v)
        self._ptrs.append(ctypes.addressof(v))
        return self

    def array(self) -> ctypes.Array:
        return (ctypes.c_void_p * len(self._ptrs))(*self._ptrs)


class Launcher:
    """fn with fixed arguments on a 1-D grid with dynamic shared memory,
    prepared once so that each launch costs one foreign call."""

    def __init__(self, fn: ctypes.c_void_p, grid: int, threads: int, smem: int, params: Params) -> None:
        self._params, self._array = params, params.array()
        self._fn, self._grid, self._threads, self._smem = fn, grid, threads, smem
        self._launch = _entry("cuLaunchKernel", _P, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                              ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, _P, _P, _P)

    def __call__(self, stream: int) -> None:
        r = self._launch(self._fn, self._grid, 1, 1, self._threads, 1, 1, self._smem, stream, self._array, None)
        if r:
            _check("cuLaunchKernel", r)


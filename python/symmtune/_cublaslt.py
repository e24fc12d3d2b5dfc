"""cuBLASLt from Python: the products of symmtune's GEMM pipelines exactly as
the Go plugins run them (cuda/cublaslt, kernels/gemm/gpu's plan): the same
descriptors (row-major D[M,N] = A[M,K]·B with B stored [N,K], fp32
accumulation, an SM-count target, a strided batch), the same heuristic
request (MAX_ALGOS ranked algorithms within WORKSPACE_BYTES) and the same
index into its answer. A tuned config's algo and sm_reserve then mean in
symmtune.torch what they meant when the plugin timed them; torch.mm picks
its own algorithm and uses every SM.

The library is the one torch already loaded where there is one (the bare
soname finds it), so the process holds one cuBLASLt; $SYMMTUNE_CUBLASLT
overrides, as for the Go plugins. The heuristic's ranking can differ between
cuBLASLt versions: version() tells which one answered.
"""

from __future__ import annotations

import ctypes
import threading

from . import _cuda

# As kernels/gemm/gpu (workspaceBytes) and cuda/cublaslt (MaxAlgos) have them.
WORKSPACE_BYTES = 32 << 20
MAX_ALGOS = 8

# cublasLt.h, library_types.h, cublas_api.h (stable since CUDA 11).
_R_16F, _R_16BF, _R_32F = 2, 14, 0
_COMPUTE_32F = 68
_DESC_TRANSA, _DESC_SM_COUNT_TARGET = 3, 15
_OP_T = 1
_PREF_MAX_WORKSPACE_BYTES = 1
_LAYOUT_BATCH_COUNT, _LAYOUT_STRIDED_BATCH_OFFSET = 5, 6

DTYPES = {"bf16": _R_16BF, "f16": _R_16F}


class _Heuristic(ctypes.Structure):
    """cublasLtMatmulHeuristicResult_t: the 64-byte algorithm and what the
    heuristic says of it (96 bytes)."""
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_size", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


_P, _I32, _I64, _U64, _SZ = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint64, ctypes.c_size_t
_SIGNATURES = {
    "cublasLtCreate": [ctypes.POINTER(_P)],
    "cublasLtDestroy": [_P],
    "cublasLtGetVersion": [],
    "cublasLtGetStatusName": [ctypes.c_int],
    "cublasLtMatmulDescCreate": [ctypes.POINTER(_P), ctypes.c_int, ctypes.c_int],
    "cublasLtMatmulDescDestroy": [_P],
    "cublasLtMatmulDescSetAttribute": [_P, ctypes.c_int, _P, _SZ],
    "cublasLtMatrixLayoutCreate": [ctypes.POINTER(_P), ctypes.c_int, _U64, _U64, _I64],
    "cublasLtMatrixLayoutDestroy": [_P],
    "cublasLtMatrixLayoutSetAttribute": [_P, ctypes.c_int, _P, _SZ],
    "cublasLtMatmulPreferenceCreate": [ctypes.POINTER(_P)],
    "cublasLtMatmulPreferenceDestroy": [_P],
    "cublasLtMatmulPreferenceSetAttribute": [_P, ctypes.c_int, _P, _SZ],
    "cublasLtMatmulAlgoGetHeuristic": [_P, _P, _P, _P, _P, _P, _P, ctypes.c_int, ctypes.POINTER(_Heuristic),
                                       ctypes.POINTER(ctypes.c_int)],
    "cublasLtMatmul": [_P, _P, _P, _U64, _P, _U64, _P, _P, _U64, _P, _U64, _P, ctypes.POINTER(_Heuristic), _U64, _SZ,
                       _P],
}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_handles: dict[int, int] = {}


def candidates() -> list[str]:
    """What to load: $SYMMTUNE_CUBLASLT alone when set; else the bare
    sonames first, newest major version first (in a torch process they name
    the copy torch loaded), then the files _cuda.lib_candidates finds."""
    found = _cuda.lib_candidates("SYMMTUNE_CUBLASLT", "libcublasLt")
    if len(found) == 1 and "/" in found[0]:
        return found
    bare = [f"libcublasLt.so.{v}" for v in range(14, 10, -1)]
    return bare + [p for p in found if p not in bare]


def lib() -> ctypes.CDLL:
    """cuBLASLt, loaded once with its entry points' signatures bound."""
    global _lib
    with _lock:
        if _lib is None:
            tried = candidates()
            for name in tried:
                try:
                    lt = ctypes.CDLL(name)
                    for fn, args in _SIGNATURES.items():
                        f = getattr(lt, fn)
                        f.argtypes = args
                        f.restype = ctypes.c_int
                except (OSError, AttributeError):
                    continue
                lt.cublasLtGetVersion.restype = ctypes.c_size_t
                lt.cublasLtGetStatusName.restype = ctypes.c_char_p
                _lib = lt
                break
            else:
                raise RuntimeError("no usable cuBLASLt library (libcublasLt.so.N): install the CUDA toolkit's cuBLAS "
                                   f"or set SYMMTUNE_CUBLASLT to its path; tried {len(tried)} names")
        return _lib


def version() -> int:
    """cublasLtGetVersion of the loaded library (e.g. 130100 for 13.1.0)."""
    return lib().cublasLtGetVersion()


def _check(what: str, r: int) -> None:
    if r != 0:
        name = lib().cublasLtGetStatusName(r)
        raise RuntimeError(f"{what}: {name.decode() if name else 'status'} ({r})")


def handle(device: int) -> int:
    """This process's cuBLASLt handle for device (made once, kept)."""
    with _lock:
        h = _handles.get(device)
    if h is None:
        p = _P()
        _check("cublasLtCreate", lib().cublasLtCreate(ctypes.byref(p)))
        assert p.value, "cublasLtCreate gave no handle"
        with _lock:
            h = _handles.setdefault(device, p.value)
    return h


def _set(setter, obj: int | ctypes.c_void_p, attr: int, value: ctypes._SimpleCData, what: str) -> None:
    _check(what, setter(obj, attr, ctypes.byref(value), ctypes.sizeof(value)))


class Plan:
    """A row-major product D[m,n] = A[m,k]·B with B stored [n,k] (ldb k),
    A and D dense rows (lda k, ldd n), batch times (A and D of product i
    stride_a and stride_d elements after product i-1's, B shared), planned
    for sm_target SMs (0: all), with cuBLASLt's ranked algorithms for it:
    cuda/cublaslt's Plan for Matmul{BT: true}, descriptor for descriptor."""

    def __init__(self, device: int, m: int, n: int, k: int, dtype: str, *, batch: int = 1, stride_a: int = 0,
                 stride_d: int = 0, sm_target: int = 0, workspace: int = WORKSPACE_BYTES) -> None:
        if min(m, n, k) < 1:
            raise ValueError(f"matmul {m}x{n}x{k}: every dimension must be positive")
        if dtype not in DTYPES:
            raise ValueError(f"dtype {dtype!r}: cuBLASLt products here take bf16 or f16")
        batch = max(batch, 1)
        if batch > 1 and (stride_a < m * k or stride_d < m * n):
            raise ValueError(f"matmul {m}x{n}x{k} x{batch}: batch strides {stride_a},{stride_d} overlap the products")
        self.m, self.n, self.k, self.batch, self.workspace = m, n, k, batch, workspace
        self.stride_a, self.stride_d, self.sm_target = stride_a, stride_d, sm_target
        lt, self.h = lib(), handle(device)
        self._desc, self._la, self._lb, self._ld = _P(), _P(), _P(), _P()
        try:
            self._heur = self._plan(lt, DTYPES[dtype])
        except BaseException:
            self.close()
            raise
        if not self._heur:
            self.close()
            raise RuntimeError(f"matmul {self}: cuBLASLt has no algorithm for it")

    def _plan(self, lt: ctypes.CDLL, dt: int) -> list[_Heuristic]:
        # Row-major D = A·B is column-major Dᵀ = Bᵀ·Aᵀ: cuBLASLt's A is our B
        # (stored [n,k] row-major, the transpose of a column-major [k,n]),
        # its B our A (column-major [k,m]), its D our D (column-major [n,m]).
        m, n, k = self.m, self.n, self.k
        _check("cublasLtMatmulDescCreate", lt.cublasLtMatmulDescCreate(ctypes.byref(self._desc), _COMPUTE_32F, _R_32F))
        if self.sm_target > 0:
            _set(lt.cublasLtMatmulDescSetAttribute, self._desc, _DESC_SM_COUNT_TARGET, _I32(self.sm_target),
                 "set SM count target")
        _set(lt.cublasLtMatmulDescSetAttribute, self._desc, _DESC_TRANSA, _I32(_OP_T), "set transa")
        for lay, rows, cols, ld in ((self._la, k, n, k), (self._lb, k, m, k), (self._ld, n, m, n)):
            _check("cublasLtMatrixLayoutCreate", lt.cublasLtMatrixLayoutCreate(ctypes.byref(lay), dt, rows, cols, ld))
        if self.batch > 1:
            for lay, stride in ((self._la, 0), (self._lb, self.stride_a), (self._ld, self.stride_d)):
                _set(lt.cublasLtMatrixLayoutSetAttribute, lay, _LAYOUT_BATCH_COUNT, _I32(self.batch), "set batch")
                _set(lt.cublasLtMatrixLayoutSetAttribute, lay, _LAYOUT_STRIDED_BATCH_OFFSET, _I64(stride),
                     "set batch stride")
        pref = _P()
        _check("cublasLtMatmulPreferenceCreate", lt.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)))
        try:
            _set(lt.cublasLtMatmulPreferenceSetAttribute, pref, _PREF_MAX_WORKSPACE_BYTES, _U64(self.workspace),
                 "set workspace")
            heur = (_Heuristic * MAX_ALGOS)()
            got = ctypes.c_int()
            _check(f"heuristic for {self}", lt.cublasLtMatmulAlgoGetHeuristic(
                self.h, self._desc, self._la, self._lb, self._ld, self._ld, pref, MAX_ALGOS, heur, ctypes.byref(got)))
        finally:
            lt.cublasLtMatmulPreferenceDestroy(pref)
        return list(heur[:got.value])

    def __str__(self) -> str:
        b = f" x{self.batch} (strides {self.stride_a},{self.stride_d})" if self.batch > 1 else ""
        return f"{self.m}x{self.n}x{self.k}{b} (B [N,K], sm target {self.sm_target})"

    @property
    def algos(self) -> int:
        """How many algorithms the heuristic ranked (at most MAX_ALGOS)."""
        return len(self._heur)

    def algo_keys(self) -> list[str]:
        """Each ranked algorithm's 64 opaque bytes in hex: equal keys from
        two processes mean the same algorithm."""
        return ["".join(f"{w:016x}" for w in h.algo) for h in self._heur]

    def run(self, stream: int, algo: int, a: int, b: int, d: int, ws: int) -> None:
        """Enqueues D = A·B on stream with the algo-th ranked algorithm; a,
        b, d device addresses, ws a workspace of at least `workspace` bytes."""
        if not 0 <= algo < len(self._heur):
            raise ValueError(f"matmul {self}: algorithm {algo} of {len(self._heur)} ranked")
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        # Our B is cuBLASLt's A (see _plan).
        r = lib().cublasLtMatmul(self.h, self._desc, ctypes.byref(one), b, self._la, a, self._lb, ctypes.byref(zero),
                                 d, self._ld, d, self._ld, ctypes.byref(self._heur[algo]), ws, self.workspace, stream)
        if r:
            _check(f"cublasLtMatmul {self}", r)

    def close(self) -> None:
        lt = lib()
        for lay in (self._la, self._lb, self._ld):
            if lay.value:
                lt.cublasLtMatrixLayoutDestroy(lay)
                lay.value = None
        if self._desc.value:
            lt.cublasLtMatmulDescDestroy(self._desc)
            self._desc.value = None

"""libsymmtune, the Go rules as a native library: the one implementation of
the GEMM plans, config validation, Hopper tile rules, defaults, kernel
versions and layout constants, and of the tuned-config cache and hardware
fingerprints (cmd/libsymmtune, internal/libops). The modules gemm, hopper,
kernels, cache and hardware are thin bindings over it.
Built with CUDA (scripts/gpu-bundle.sh) it also runs the GEMM kernels'
launch sequences for symmtune.torch: the GEMMs' (gemm_open, gemm_enqueue,
gemm_enqueue_scaled for FP8, gemm_close) and the all-reduce's
(allreduce_open, allreduce_enqueue, allreduce_close); ABI version 5.

The library is loaded on the first call, never at import: from
$SYMMTUNE_LIB when set, else libsymmtune.so beside this package (`make lib`
builds it there; a wheel ships it there). Its ABI version must be this
module's ABI_VERSION. Errors: ValueError for a request the rules reject
(the library's one-line message, which names the argument), NativeError
for a missing or mismatched library and for the library's internal errors.
An answer can also be an error of its own ({"error": {kind, message}}, the
cache's kinds) or carry warnings (a first call's choice): checked and chosen
raise and give them, here, so a first call of symmtune.torch takes the
library's answer in this one module.

The Go runtime does not survive fork(): a process forked after the library
was loaded must not call it (it would hang), so a call there raises
NativeError instead. Answers callers cache (the bindings do) stay usable.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

from ._errors import CacheError, CacheUnavailable, HardwareError, NoTunedConfig

# symmtune.h's SYMMTUNE_ABI_VERSION and return codes.
ABI_VERSION = 5
OK, BAD_INPUT, TOO_SMALL, INTERNAL, CAPTURE = 0, 1, 2, 3, 4

ENV_LIB = "SYMMTUNE_LIB"
LIB_NAME = "libsymmtune.so"

# The first answer buffer; a larger answer is asked for again with the
# length the library says it needs.
_FIRST_CAP = 1 << 16


class NativeError(RuntimeError):
    """libsymmtune is missing, of another ABI, unusable in this process, or
    failed internally."""


def library_path() -> Path:
    """Where the library is loaded from: $SYMMTUNE_LIB, else beside the
    package."""
    env = os.environ.get(ENV_LIB)
    return Path(env) if env else Path(__file__).resolve().parent / LIB_NAME


class _Library:
    """A loaded libsymmtune, with the process that loaded it."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise NativeError(f"libsymmtune: {path} does not exist: build it with `make lib` (needs Go and gcc), "
                              f"install the symmtune wheel, or set {ENV_LIB} to the library's path")
        try:
            self.cdll = ctypes.CDLL(str(path))
        except OSError as e:
            raise NativeError(f"libsymmtune: cannot load {path}: {e}") from None
        self.path = path
        self.pid = os.getpid()
        self.cdll.symmtune_abi_version.restype = ctypes.c_int
        self.cdll.symmtune_abi_version.argtypes = []
        self.cdll.symmtune_call.restype = ctypes.c_int
        self.cdll.symmtune_call.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                            ctypes.POINTER(ctypes.c_size_t)]
        check_abi(self.cdll.symmtune_abi_version(), path)


def check_abi(version: int, path: Path) -> None:
    """NativeError unless the library's ABI version is this module's."""
    if version != ABI_VERSION:
        raise NativeError(f"libsymmtune: {path} has ABI version {version}, this symmtune package needs "
                          f"{ABI_VERSION}: rebuild it (`make lib`) or install the library of the same symmtune "
                          "release")


# The loaded library: one per process, kept for its lifetime (a native
# library cannot be unloaded); None until the first call.
_lib: _Library | None = None
_lock = threading.Lock()


def _library() -> _Library:
    global _lib
    lib = _lib
    if lib is None:
        with _lock:
            if _lib is None:
                _lib = _Library(library_path())
            lib = _lib
    if lib.pid != os.getpid():
        raise NativeError(f"libsymmtune was loaded by process {lib.pid} before it forked this one ({os.getpid()}); "
                          "the Go runtime does not survive fork, so this process cannot call it: make the call "
                          "before forking, or start workers with the 'spawn' or 'forkserver' method")
    return lib


def raw_call(op: str, request: bytes, cap: int = _FIRST_CAP) -> tuple[int, bytes]:
    """One symmtune_call with an answer buffer of cap bytes, retried once
    with the length the library asks for: the return code and the answer
    or message."""
    fn = _library().cdll.symmtune_call
    n = ctypes.c_size_t()
    for _ in range(2):
        buf = ctypes.create_string_buffer(cap)
        code = fn(op.encode(), request, buf, cap, ctypes.byref(n))
        if code != TOO_SMALL:
            return code, buf.raw[:n.value]
        cap = n.value
    raise NativeError(f"libsymmtune {op}: asked for {n.value} bytes twice")


def call(op: str, **request: Any) -> Any:
    """Runs op on the request (keyword arguments, as JSON) and returns the
    decoded answer. ValueError with the library's message for a request
    the rules reject; NativeError for anything else that fails."""
    code, text = raw_call(op, json.dumps(request, separators=(",", ":")).encode())
    if code == OK:
        return json.loads(text)
    msg = text.decode(errors="replace")
    if code == BAD_INPUT:
        raise ValueError(msg)
    raise NativeError(f"libsymmtune {op}: {msg} (code {code})")


def checked(answer: dict[str, Any]) -> dict[str, Any]:
    """answer, the library's to a request that reads the cache, unless it
    is an error ({"error": {kind, message}}): then its exception
    (symmtune.cache's NoTunedConfig, CacheError, CacheUnavailable; OSError;
    symmtune.hardware's HardwareError)."""
    err = answer.get("error")
    if err:
        raise _answer_error(err["kind"], err["message"])
    return answer


def _answer_error(kind: str, message: str) -> Exception:
    """The exception of an answer's error kind (symmtune._errors', public
    in symmtune.cache and symmtune.hardware)."""
    cls: type[Exception] = {"not_found": NoTunedConfig, "corrupt": CacheError, "unavailable": CacheUnavailable,
                            "io": OSError, "hardware": HardwareError}.get(kind, CacheError)
    return cls(message)


# The keys of the choice warnings given in this process (once each).
_warned: set[str] = set()


def chosen(answer: dict[str, Any], stacklevel: int | None = 2) -> dict[str, Any]:
    """The choice of a first call (the library's gemm.choose or
    allreduce.choose answer, symmtune.torch's): its error raised (see
    checked), its warnings (no tuned config, one that does not run here)
    given once per key in the process, then left out. stacklevel: as
    warnings.warn's, from the caller of chosen; None: the first frame
    outside the symmtune package (the user's call, however deep the
    group's round put this)."""
    out = dict(checked(answer))
    for w in out.pop("warnings"):
        if w["key"] not in _warned:
            _warned.add(w["key"])
            warnings.warn(w["message"], stacklevel=(stacklevel + 1) if stacklevel is not None else user_stacklevel())
    return out


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """warnings.warn's stacklevel, from its caller, of the first frame
    outside the symmtune package."""
    f: Any = sys._getframe(2)
    level = 2
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    return level


_constants: dict[str, Any] | None = None


def constants() -> dict[str, Any]:
    """The "constants" op's answer, fetched once: pure data."""
    global _constants
    if _constants is None:
        _constants = call("constants")
    return _constants


def bind_constants(module_globals: dict[str, Any], names: dict[str, tuple[str, str]], name: str) -> Any:
    """A module's __getattr__ for constants the library owns: names maps a
    module attribute to its (family, key) in constants(); the first access
    fetches them all into the module's globals (later ones are plain
    lookups)."""
    if name not in names:
        raise AttributeError(f"module {module_globals['__name__']!r} has no attribute {name!r}")
    c = constants()
    for attr, (family, key) in names.items():
        v = c[family][key]
        module_globals[attr] = tuple(v) if isinstance(v, list) else v
    return module_globals[name]


# The GEMM runtime (symmtune_gemm_*: the Go plugins' launch sequence, run
# on the caller's stream and thread). Bound once; every argument a plain
# int, so an enqueue is one foreign call.
_MSG_CAP = 1024
_gemm_fns: tuple[Any, Any, Any, Any] | None = None


class _Messages(threading.local):
    """Each thread's message buffer for the runtime calls: two threads'
    errors or warnings never overwrite each other's."""

    def __init__(self) -> None:
        self.buf = ctypes.create_string_buffer(_MSG_CAP)


_messages = _Messages()


class CaptureNeedsWarmup(RuntimeError):
    """A runtime call that would open a runner inside a CUDA graph capture
    (code SYMMTUNE_CAPTURE): symmtune.torch raises it as CaptureError."""


def _gemm() -> tuple[Any, Any, Any, Any]:
    global _gemm_fns
    if _gemm_fns is None:
        lib = _library().cdll
        u64, p, sz = ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t
        open_ = lib.symmtune_gemm_open
        open_.restype, open_.argtypes = ctypes.c_int, [p, ctypes.POINTER(u64), sz, u64, ctypes.POINTER(u64), p, sz]
        enq = lib.symmtune_gemm_enqueue
        i64 = ctypes.c_int64
        enq.restype, enq.argtypes = ctypes.c_int, [u64, u64, i64, u64, u64, u64, u64, p, sz]
        close = lib.symmtune_gemm_close
        close.restype, close.argtypes = ctypes.c_int, [u64]
        scaled = lib.symmtune_gemm_enqueue_scaled
        scaled.restype, scaled.argtypes = ctypes.c_int, [u64, u64, i64, u64, u64, u64, u64, u64, u64, p, sz]
        _gemm_fns = (open_, enq, close, scaled)
    return _gemm_fns


def _gemm_error(what: str, code: int, msg: bytes) -> Exception:
    text = msg.split(b"\0", 1)[0].decode(errors="replace")
    if code == BAD_INPUT:
        return ValueError(text)
    if code == CAPTURE:
        return CaptureNeedsWarmup(f"symmtune.torch: {text}")
    return NativeError(f"libsymmtune {what}: {text} (code {code})")


def _open(open_: Any, what: str, request: dict[str, Any], regions: list[int], table: int) -> tuple[int, str]:
    """Calls a runtime's open function (the GEMM's and the all-reduce's take
    the same arguments): the handle and the warning text ("" when none)."""
    arr = (ctypes.c_uint64 * len(regions))(*regions)
    handle = ctypes.c_uint64()
    msg = ctypes.create_string_buffer(_MSG_CAP)
    code = open_(json.dumps(request, separators=(",", ":")).encode(), arr, len(regions), table,
                 ctypes.byref(handle), msg, _MSG_CAP)
    if code != OK:
        raise _gemm_error(what, code, msg.raw)
    return handle.value, msg.value.decode(errors="replace")


def gemm_open(request: dict[str, Any], regions: list[int], table: int) -> tuple[int, str]:
    """Opens a GEMM runner (symmtune_gemm_open) in the current CUDA
    context: its handle, and a warning ("" when none) when the config had
    to change to run here. ValueError for a request the rules reject,
    NativeError for anything else (a library built without CUDA
    included)."""
    return _open(_gemm()[0], "gemm_open", request, regions, table)


def _warning(buf: Any) -> str:
    """The warning an OK runtime call left in buf ("" when none)."""
    return buf.value.decode(errors="replace") if buf.raw[0] else ""


def gemm_enqueue(handle: int, stream: int, m: int, a: int, b: int, c: int, extra: int = 0) -> str:
    """Enqueues one call of handle's op at m rows on stream
    (symmtune_gemm_enqueue): a warning ("" when none) the first time m's
    runner runs another config than the op's. CaptureNeedsWarmup for a
    first call of m inside a capture."""
    buf = _messages.buf
    buf[0] = b"\0"
    code = _gemm()[1](handle, stream, m, a, b, c, extra, buf, _MSG_CAP)
    if code != OK:
        raise _gemm_error("gemm_enqueue", code, buf.raw)
    return _warning(buf)


def gemm_enqueue_scaled(handle: int, stream: int, m: int, a: int, b: int, c: int, extra: int, scale_a: int,
                        scale_b: int) -> str:
    """Enqueues one call of an e4m3 or e4m3_row op at m rows on stream, with
    the device addresses of A's and B's fp32 scales
    (symmtune_gemm_enqueue_scaled); as gemm_enqueue."""
    buf = _messages.buf
    buf[0] = b"\0"
    code = _gemm()[3](handle, stream, m, a, b, c, extra, scale_a, scale_b, buf, _MSG_CAP)
    if code != OK:
        raise _gemm_error("gemm_enqueue_scaled", code, buf.raw)
    return _warning(buf)


def gemm_close(handle: int) -> None:
    """Retires handle: its runners close now or once the CUDA graphs holding
    them are destroyed."""
    code = _gemm()[2](handle)
    if code != OK:
        raise NativeError(f"libsymmtune gemm_close: handle {handle} (code {code})")


# The all-reduce runtime (symmtune_allreduce_*: kernels/allreduce's Runner),
# bound like the GEMM runtime.
_ar_fns: tuple[Any, Any, Any] | None = None


def _allreduce() -> tuple[Any, Any, Any]:
    global _ar_fns
    if _ar_fns is None:
        lib = _library().cdll
        u64, p, sz = ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t
        open_ = lib.symmtune_allreduce_open
        open_.restype, open_.argtypes = ctypes.c_int, [p, ctypes.POINTER(u64), sz, u64, ctypes.POINTER(u64), p, sz]
        enq = lib.symmtune_allreduce_enqueue
        enq.restype, enq.argtypes = ctypes.c_int, [u64, u64, u64, ctypes.c_int64, p, sz]
        close = lib.symmtune_allreduce_close
        close.restype, close.argtypes = ctypes.c_int, [u64]
        _ar_fns = (open_, enq, close)
    return _ar_fns


def allreduce_open(request: dict[str, Any], regions: list[int], table: int) -> int:
    """Opens an all-reduce runner (symmtune_allreduce_open) in the current
    CUDA context: its handle. ValueError for a request the rules reject,
    NativeError for anything else (a library built without CUDA
    included)."""
    return _open(_allreduce()[0], "allreduce_open", request, regions, table)[0]


def allreduce_enqueue(handle: int, stream: int, tensor: int, n: int) -> None:
    """Sums the n elements at tensor over the ranks, in place, on stream
    (symmtune_allreduce_enqueue)."""
    buf = _messages.buf
    code = _allreduce()[1](handle, stream, tensor, n, buf, _MSG_CAP)
    if code != OK:
        raise _gemm_error("allreduce_enqueue", code, buf.raw)


def allreduce_close(handle: int) -> None:
    """Frees handle's runner once the GPU is done with it."""
    code = _allreduce()[2](handle)
    if code != OK:
        raise NativeError(f"libsymmtune allreduce_close: handle {handle} (code {code})")

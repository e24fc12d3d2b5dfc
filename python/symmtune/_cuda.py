"""NVRTC from Python: compiling symmtune's CUDA C (the kernel-source tests
check the sources compile as the Go plugins compile them). The kernels
themselves load and launch in Go (libsymmtune); symmtune.torch's device
memory is torch's (symmetric memory and its pointer tables:
symmtune._torchrt).

NVRTC is loaded with ctypes, as the Go plugins load it with dlopen
(cuda/nvrtc, cuda/libpath): the newest libnvrtc.so.N in the CUDA toolkit's
folders or beside torch's own CUDA libraries, or $SYMMTUNE_NVRTC. Sources compile for an architecture (sm_90a on an
H100/H200) with the options the Go plugins use.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
from typing import Sequence

from .hardware import HardwareError

_LIB_DIRS = [
    "/usr/local/cuda/targets/x86_64-linux/lib",
    "/usr/local/cuda/lib64",
    "/usr/local/cuda-*/targets/x86_64-linux/lib",
    "/usr/local/cuda-*/lib64",
    "/usr/lib/x86_64-linux-gnu",
]


class CompileError(RuntimeError):
    """NVRTC rejected a kernel source; the message holds the compiler log."""


def lib_candidates(env: str, stem: str) -> list[str]:
    """Where to look for the CUDA library stem (libnvrtc, libcublasLt):
    $env alone when set, else every stem.so.N in the CUDA toolkit's folders
    and beside torch's own CUDA libraries, newest major version first
    (cuda/libpath's order), then the bare names for the loader's search."""
    if os.environ.get(env):
        return [os.environ[env]]
    dirs = list(_LIB_DIRS)
    try:
        import nvidia  # torch's CUDA wheels: nvidia/cu13/lib, nvidia/cuda_nvrtc/lib
        for base in getattr(nvidia, "__path__", []):
            dirs += glob.glob(os.path.join(base, "*", "lib"))
    except ImportError:
        pass
    found: list[tuple[int, str]] = []
    pattern = re.compile(re.escape(stem) + r"\.so\.(\d+)")
    for d in dirs:
        for path in glob.glob(os.path.join(d, stem + ".so.*")):
            m = pattern.match(os.path.basename(path))
            if m and path not in (p for _, p in found):
                found.append((int(m.group(1)), path))
    found.sort(key=lambda t: -t[0])
    return [p for _, p in found] + [f"{stem}.so.{v}" for v in range(14, 10, -1)]


def nvrtc_candidates() -> list[str]:
    """NVRTC libraries to try ($SYMMTUNE_NVRTC, else lib_candidates')."""
    return lib_candidates("SYMMTUNE_NVRTC", "libnvrtc")


_nvrtc: ctypes.CDLL | None = None


def _load_nvrtc() -> ctypes.CDLL:
    global _nvrtc
    if _nvrtc is None:
        for name in nvrtc_candidates():
            try:
                lib = ctypes.CDLL(name)
                lib.nvrtcGetCUBIN  # every NVRTC from 11.1 has it
            except (OSError, AttributeError):
                continue
            lib.nvrtcGetErrorString.restype = ctypes.c_char_p
            _nvrtc = lib
            break
        else:
            raise HardwareError("no usable NVRTC library (libnvrtc.so.N): install the CUDA toolkit's NVRTC "
                                "or set SYMMTUNE_NVRTC to its path")
    return _nvrtc


def arch(major: int, minor: int) -> str:
    """nvrtc.Arch: the architecture-specific target from Hopper on."""
    return f"sm_{major}{minor}" + ("a" if major >= 9 else "")


def compile_cubin(source: str, name: str, options: Sequence[str], target: str) -> bytes:
    """Compiles source for target (e.g. "sm_90a") with the Go side's base
    options (cuda/nvrtc: -std=c++17 -default-device) plus options."""
    lib = _load_nvrtc()
    prog = ctypes.c_void_p()
    r = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None)
    if r != 0:
        raise CompileError(f"nvrtcCreateProgram: {lib.nvrtcGetErrorString(r).decode()}")
    try:
        opts = [f"--gpu-architecture={target}", "-std=c++17", "-default-device", *options]
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        r = lib.nvrtcCompileProgram(prog, len(opts), arr)
        if r != 0:
            n = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value)
            lib.nvrtcGetProgramLog(prog, log)
            raise CompileError(f"compile {name} {options} for {target}: {lib.nvrtcGetErrorString(r).decode()}\n"
                               f"{log.value.decode(errors='replace')}")
        n = ctypes.c_size_t()
        if lib.nvrtcGetCUBINSize(prog, ctypes.byref(n)) != 0:
            raise CompileError("nvrtcGetCUBINSize failed")
        buf = ctypes.create_string_buffer(n.value)
        if lib.nvrtcGetCUBIN(prog, buf) != 0:
            raise CompileError("nvrtcGetCUBIN failed")
        return buf.raw
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))

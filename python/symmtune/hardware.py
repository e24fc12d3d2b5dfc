"""Hardware fingerprints, computed and written exactly as the Go side does
(hardware/hardware.go for the CPU and the ID, symm/cudamem for GPUs), so that
a cache key written by ``symmtune search`` is found again from Python.

GPUs are fingerprinted through the CUDA driver API (libcuda.so.1) and NVML
(libnvidia-ml.so.1), both loaded with ctypes: no torch, pynvml or compiled
extension is needed, and the answers are the ones the Go CUDA backend gets
from the same libraries.
"""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass, fields

# Go's unicode.IsSpace: what strings.TrimSpace strips.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029\u202f\u205f\u3000"
# The whitespace hardware.clean collapses inside a field.
_COLLAPSE = frozenset("\t\n\v\f\r \x85\xa0")


@dataclass(frozen=True)
class Fingerprint:
    """The hardware a config was tuned on (Go: hardware.Fingerprint). Zero
    fields mean unknown / not applicable."""

    kind: str = ""
    name: str = ""
    count: int = 0
    cores: int = 0
    sms: int = 0
    memory_mib: int = 0
    compute: str = ""
    driver: str = ""
    interconnect: str = ""

    def id(self) -> str:
        """The stable cache-key form, e.g. ``gpu/NVIDIA H200/x4/sm90/132sm/140GiB/drv580.95.05/NVLink x18``
        (see hardware.Fingerprint.ID for the rules)."""
        segs: list[str] = []

        def add(s: str) -> None:
            s = _clean(s)
            if s:
                segs.append(s)

        add(self.kind)
        add(self.name)
        if self.count not in (0, 1):
            add(f"x{self.count}")
        if self.cores != 0:
            add(f"{self.cores}c")
        c = _clean(self.compute)
        if c:
            add(_compute_seg(c))
        if self.sms != 0:
            add(f"{self.sms}sm")
        if self.memory_mib != 0:
            add(_memory_seg(self.memory_mib))
        d = _clean(self.driver)
        if d:
            add("drv" + d)
        ic = _clean(self.interconnect)
        if ic and not (_clean(self.kind) == "cpu" and ic == "shm"):
            add(ic)
        return "/".join(segs)

    def __str__(self) -> str:
        return self.id()

    def without_driver(self) -> "Fingerprint":
        """The same hardware with the driver version left out: entries whose
        fingerprints agree on this are the same GPUs, memory and links
        under another driver (see symmtune.cache.lookup)."""
        return Fingerprint(**{f.name: getattr(self, f.name) for f in fields(self) if f.name != "driver"})

    def as_dict(self) -> dict:
        """The non-zero fields, keyed as in the cache's hardware_info table."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) not in ("", 0)}


def _clean(s: str) -> str:
    out: list[str] = []
    space = False
    for ch in s.strip(_GO_SPACE):
        if ch in _COLLAPSE:
            space = True
            continue
        if ch == "/" or ord(ch) < 0x20 or ord(ch) == 0x7F:
            ch = "_"
        if space:
            out.append(" ")
            space = False
        out.append(ch)
    return "".join(out)


def _compute_seg(c: str) -> str:
    major, sep, minor = c.partition(".")
    if sep and _digits(major) and _digits(minor):
        return f"sm{major}{minor}"
    return "cc" + c


def _digits(s: str) -> bool:
    return s != "" and all("0" <= ch <= "9" for ch in s)


def _memory_seg(mib: int) -> str:
    if -512 < mib < 512:
        return f"{mib}MiB"
    # Go's integer division and remainder truncate toward zero.
    gib = abs(mib) // 1024 * (1 if mib >= 0 else -1)
    rem = mib - gib * 1024
    if rem >= 512:
        gib += 1
    elif rem <= -512:
        gib -= 1
    return f"{gib}GiB"


# --- CPU ---------------------------------------------------------------------

# runtime.GOARCH for the machines Python reports by platform.machine().
_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386",
           "i386": "386", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}


def cpu() -> Fingerprint:
    """This machine's CPU, as hardware.CPU(): the first "model name" of
    /proc/cpuinfo, the usable logical cores, count 1, interconnect shm."""
    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            name = _cpu_model(f.read())
    except OSError:
        pass
    if not name:
        m = platform.machine()
        name = _GOARCH.get(m.lower(), m.lower())
    return Fingerprint(kind="cpu", name=name, count=1, cores=len(os.sched_getaffinity(0)), interconnect="shm")


def _cpu_model(text: str) -> str:
    fallback = ""
    for line in text.splitlines():
        key, sep, val = line.partition(":")
        if not sep:
            continue
        key = key.strip(_GO_SPACE)
        val = " ".join(val.split())
        if not val:
            continue
        if key == "model name":
            return val
        if key in ("Model", "Hardware") and not fallback:
            fallback = val
    return fallback


# --- CUDA --------------------------------------------------------------------


class HardwareError(RuntimeError):
    """The hardware cannot be fingerprinted (no GPU, no driver, too few GPUs)."""


_CU_ATTR_SMS, _CU_ATTR_CC_MAJOR, _CU_ATTR_CC_MINOR = 16, 75, 76
_CU_P2P_ACCESS_SUPPORTED, _CU_P2P_NATIVE_ATOMIC = 2, 3
_NVML_ERROR_INVALID_ARGUMENT = 2


def _cuda_lib() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise HardwareError(f"no CUDA driver (libcuda.so.1): {e}") from None
    r = lib.cuInit(0)
    if r != 0:
        raise HardwareError(f"cuInit failed with CUDA error {r} (no usable GPU?)")
    return lib


def _cu(lib: ctypes.CDLL, what: str, r: int) -> None:
    if r != 0:
        raise HardwareError(f"{what}: CUDA error {r}")


class _NVML:
    """The few NVML calls the fingerprint needs; usable only when every one
    of them resolves and nvmlInit succeeds, as in symm/cudamem/nvml.go."""

    def __init__(self) -> None:
        self.lib = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            for sym in ("nvmlInit_v2", "nvmlShutdown", "nvmlSystemGetDriverVersion",
                        "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetNvLinkState"):
                getattr(lib, sym)
        except (OSError, AttributeError):
            return
        if lib.nvmlInit_v2() == 0:
            self.lib = lib

    def driver(self) -> str | None:
        if self.lib is None:
            return None
        buf = ctypes.create_string_buffer(96)
        if self.lib.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(len(buf))) != 0:
            return None
        return buf.value.decode("utf-8", "replace")

    def nvlinks(self, bus: str) -> int | None:
        if self.lib is None:
            return None
        dev = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByPciBusId_v2(bus.encode(), ctypes.byref(dev)) != 0:
            return None
        n = 0
        for link in range(32):
            active = ctypes.c_int()
            r = self.lib.nvmlDeviceGetNvLinkState(dev, ctypes.c_uint(link), ctypes.byref(active))
            if r == _NVML_ERROR_INVALID_ARGUMENT:
                break
            if r == 0 and active.value:
                n += 1
        return n


def _proc_driver_version() -> str | None:
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8", errors="replace") as f:
            words = f.read().split()
    except OSError:
        return None
    for i, w in enumerate(words):
        if w == "Module" and i + 1 < len(words):
            return words[i + 1]
    return None


def cuda(world: int) -> Fingerprint:
    """GPUs 0..world-1 as the Go CUDA backend's ranks see them (CUDA
    ordinals, so CUDA_VISIBLE_DEVICES selects them): name, SMs, memory and
    compute capability of GPU 0, the kernel driver version, and the link
    between the GPUs (active NVLinks of GPU 0, else PCIe P2P or PCIe)."""
    lib = _cuda_lib()
    n = ctypes.c_int()
    _cu(lib, "cuDeviceGetCount", lib.cuDeviceGetCount(ctypes.byref(n)))
    if world < 1 or world > n.value:
        raise HardwareError(f"world {world} but {n.value} CUDA devices visible")

    def device(i: int) -> ctypes.c_int:
        d = ctypes.c_int()
        _cu(lib, f"cuDeviceGet({i})", lib.cuDeviceGet(ctypes.byref(d), ctypes.c_int(i)))
        return d

    def name_of(d: ctypes.c_int) -> str:
        buf = ctypes.create_string_buffer(256)
        _cu(lib, "cuDeviceGetName", lib.cuDeviceGetName(buf, ctypes.c_int(len(buf)), d))
        return buf.value.decode("utf-8", "replace")

    def attr(a: int, d: ctypes.c_int) -> int:
        v = ctypes.c_int()
        _cu(lib, "cuDeviceGetAttribute", lib.cuDeviceGetAttribute(ctypes.byref(v), ctypes.c_int(a), d))
        return v.value

    dev0 = device(0)
    name = name_of(dev0)
    mem = ctypes.c_size_t()
    _cu(lib, "cuDeviceTotalMem", lib.cuDeviceTotalMem_v2(ctypes.byref(mem), dev0))
    nvml = _NVML()
    drv = nvml.driver() or _proc_driver_version()
    if drv is None:
        v = ctypes.c_int()
        _cu(lib, "cuDriverGetVersion", lib.cuDriverGetVersion(ctypes.byref(v)))
        drv = f"cuda{v.value // 1000}.{v.value % 1000 // 10}"
    for i in range(1, world):
        other = name_of(device(i))
        if other != name:
            raise HardwareError(f"mixed GPUs: device 0 is {name}, device {i} is {other}")
    return Fingerprint(
        kind="gpu", name=name, count=world, sms=attr(_CU_ATTR_SMS, dev0), memory_mib=mem.value >> 20,
        compute=f"{attr(_CU_ATTR_CC_MAJOR, dev0)}.{attr(_CU_ATTR_CC_MINOR, dev0)}", driver=drv,
        interconnect=_interconnect(lib, nvml, world, dev0, device),
    )


def _interconnect(lib: ctypes.CDLL, nvml: _NVML, world: int, dev0: ctypes.c_int, device) -> str:
    if world < 2:
        return "none"
    buf = ctypes.create_string_buffer(64)
    if lib.cuDeviceGetPCIBusId(buf, ctypes.c_int(len(buf)), dev0) == 0:
        links = nvml.nvlinks(buf.value.decode())
        if links:
            return f"NVLink x{links}"
    # As cudamem's p2p(0, 1): both attributes must be readable.
    access, atomics = ctypes.c_int(), ctypes.c_int()
    dev1 = device(1)
    if (lib.cuDeviceGetP2PAttribute(ctypes.byref(access), ctypes.c_int(_CU_P2P_ACCESS_SUPPORTED), dev0, dev1) == 0
            and lib.cuDeviceGetP2PAttribute(ctypes.byref(atomics), ctypes.c_int(_CU_P2P_NATIVE_ATOMIC), dev0, dev1) == 0
            and access.value):
        return "PCIe P2P"
    return "PCIe"


def for_backend(backend: str, world: int) -> Fingerprint:
    """The fingerprint a search on backend with world ranks records."""
    if backend == "cpu":
        return cpu()
    if backend == "cuda":
        return cuda(world)
    raise ValueError(f"backend {backend!r}: want cpu or cuda")
